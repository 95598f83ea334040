import { crc32 } from 'node:zlib';
import { pythonJsonDumps } from '../../common/python-json/dumps.ts';
import { isJsonObject } from '../../common/python-json/values.ts';
import { IdBuffer } from './id-buffer.ts';

/**
 * The toy tokenizer of `fixtures/conformance/README.md`, adopted exactly so conformance compares token ids
 * and masks one to one with the vectors Miles' own code produced:
 * - role tokens system 1, user 2, assistant 3, tool 4, any other role 6;
 * - a word `w` (text split on whitespace) is `1000 + crc32(utf8(w)) % 100000`;
 * - a message renders as its role token, the words of `reasoning_content`, of `content`, and of the JSON of
 *   each tool call's `function` object (keys sorted, `json.dumps` default separators);
 * - a completion is the assistant render without its role token, then the end token 5.
 */

/** The default family's special tokens. Ids below 1000 are never words. */
export const SPECIAL = {
  system: 1,
  user: 2,
  assistant: 3,
  tool: 4,
  end: 5,
  otherRole: 6,
  /** glm47's `<|user|>`: the user role opener, and the stop token of a reply without tool calls. */
  glmUser: 7,
  /** glm47's `<|observation|>`: the tool role opener, and the stop token of a reply with tool calls. */
  glmObservation: 8,
  /** An empty thinking block, added after the generation prompt when `enable_thinking` is false. */
  emptyThink: 9,
} as const;

/** The generation prompt (assistant opener) every prompt ends with. */
export const GENERATION_TOKEN = SPECIAL.assistant;

const SPECIAL_NAMES: Record<number, string> = {
  1: '<|system|>',
  2: '<|user|>',
  3: '<|assistant|>',
  4: '<|tool|>',
  5: '<|end|>',
  6: '<|role|>',
  7: '<|user|>',
  8: '<|observation|>',
  9: '<think></think>',
};

/** First id of the word range. */
export const WORD_BASE = 1000;
const WORD_SPAN = 100_000;

// A run of anything but Python's str.split() whitespace (JS `\s` differs: it lacks \x1c-\x1f and \x85,
// and adds \ufeff). Every such whitespace character is in the BMP, so a lone surrogate is a word part.
const PY_WORD = /[^\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/gu;

/**
 * Python's `text.split()`: the maximal runs of non-whitespace, which is what splitting on whitespace
 * runs and dropping the empty ends gives (one regex pass: about half the time of split + filter on a
 * 32k-word observation).
 */
export function splitWords(text: string): string[] {
  return text.match(PY_WORD) ?? [];
}

/** The id of one word. */
export function wordTokenId(word: string): number {
  return WORD_BASE + (wordCrc32(word) % WORD_SPAN);
}

// The CRC-32 (zlib's: reflected 0xEDB88320, initial and final inversion) of each byte value's step.
const CRC_TABLE = new Int32Array(256);
for (let n = 0; n < 256; n += 1) {
  let c = n;
  for (let k = 0; k < 8; k += 1) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  CRC_TABLE[n] = c;
}

/**
 * `zlib.crc32` of the word's UTF-8 bytes. An ASCII word's bytes are its code units, so it is hashed
 * here (about twice as fast as the native call for a short word, which dominates); any other word goes
 * to zlib.crc32, which encodes the string as UTF-8 itself (lone surrogates as U+FFFD, like Buffer.from).
 */
export function wordCrc32(word: string): number {
  let c = -1;
  for (let i = 0; i < word.length; i += 1) {
    const unit = word.charCodeAt(i);
    if (unit >= 0x80) return crc32(word);
    c = (CRC_TABLE[(c ^ unit) & 0xff] as number) ^ (c >>> 8);
  }
  return (c ^ -1) >>> 0;
}

// Python's str.split() whitespace below 0x80 (\t \n \v \f \r, \x1c-\x1f, space) as 1s; the rest of the
// set is `isWideSpace` (the same characters as PY_WORD's class).
const ASCII_SPACE = new Uint8Array(0x80);
for (const unit of [0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x1c, 0x1d, 0x1e, 0x1f, 0x20]) ASCII_SPACE[unit] = 1;

/** Python's whitespace at or above 0x80: \x85, \xa0, \u1680, \u2000-\u200a, \u2028, \u2029, \u202f, \u205f, \u3000. */
function isWideSpace(unit: number): boolean {
  if (unit < 0x2000) return unit === 0x85 || unit === 0xa0 || unit === 0x1680;
  return (
    unit <= 0x200a ||
    unit === 0x2028 ||
    unit === 0x2029 ||
    unit === 0x202f ||
    unit === 0x205f ||
    unit === 0x3000
  );
}

function isPythonSpace(unit: number): boolean {
  return unit < 0x80 ? ASCII_SPACE[unit] === 1 : isWideSpace(unit);
}

/**
 * An ASCII word of at most this many characters has a key: its code units in base 128, then times 8 plus
 * its length (under 2^52, so exact in a double; the length tells "\x00a" from "a"). Equal keys, equal words.
 */
const SHORT_WORD = 7;

/** Whether `word` is `text[start:end]`, compared by code units (no substring made). */
function sameText(word: string, text: string, start: number, end: number): boolean {
  if (word.length !== end - start) return false;
  for (let k = 0; k < word.length; k += 1)
    if (word.charCodeAt(k) !== text.charCodeAt(start + k)) return false;
  return true;
}

/** The chat roles the toy knows by name; everything else renders as `otherRole`. */
export type RoleTokens = Readonly<Record<string, number>>;

export const DEFAULT_ROLE_TOKENS: RoleTokens = {
  system: SPECIAL.system,
  user: SPECIAL.user,
  assistant: SPECIAL.assistant,
  tool: SPECIAL.tool,
};

/**
 * Renders messages to token ids and decodes ids back to readable text. Decoding knows the words this
 * instance has encoded (completions come from the policy, which uses its own instance, so the session
 * server learns a reply's words when it sees the message).
 */
export class ToyTokenizer {
  readonly roleTokens: RoleTokens;
  /**
   * The last word encoded for each word id, at `id - WORD_BASE` (every word id is below
   * `WORD_BASE + WORD_SPAN`): an array index instead of a `Map` lookup for each of the millions of ids a
   * samples op decodes.
   */
  private readonly words = new Array<string | undefined>(WORD_SPAN).fill(undefined);
  /**
   * The key (`SHORT_WORD`) of `words[slot]` at each slot, NaN when that word is not a short ASCII one (or none):
   * a render finds a short word it already knows by one read of this contiguous array instead of
   * reading the known string's characters (a cache miss per word at a samples op's scale).
   */
  private readonly wordKeys = new Float64Array(WORD_SPAN).fill(Number.NaN);

  /**
   * How many times a word was learned (written to `words`). Unchanged since a render of some messages,
   * the vocabulary is what that render left, so rendering them again would leave it as it is and every
   * decode reads what it read then (the samples op's mismatch memo, fakes/session/mismatch.ts).
   */
  private learned = 0;

  get vocabularyVersion(): number {
    return this.learned;
  }

  constructor(roleTokens: RoleTokens = DEFAULT_ROLE_TOKENS) {
    this.roleTokens = roleTokens;
  }

  /** The buffer the array-returning methods render into before copying out (no renders nest). */
  private readonly scratch = new IdBuffer();

  encodeText(text: string): number[] {
    this.scratch.clear();
    this.encodeInto(this.scratch, text);
    return this.scratch.toArray();
  }

  /**
   * Appends the ids of `text`'s words to `out`, learning each word for `decode`: what `splitWords`,
   * `wordTokenId` and a vocabulary write per word give, in one pass over the char codes (an ASCII word's
   * CRC-32 computed while it is scanned; no string per word, no word array). A word's string is made only
   * when the vocabulary does not already hold that word at its id.
   */
  private encodeInto(out: IdBuffer, text: string): void {
    const words = this.words;
    const keys = this.wordKeys;
    const n = text.length;
    let i = 0;
    while (i < n) {
      if (isPythonSpace(text.charCodeAt(i))) {
        i += 1;
        continue;
      }
      const start = i;
      let c = -1;
      let ascii = true;
      let key = 0;
      for (; i < n; i += 1) {
        const unit = text.charCodeAt(i);
        if (unit < 0x80) {
          if (ASCII_SPACE[unit] === 1) break;
          c = (CRC_TABLE[(c ^ unit) & 0xff] as number) ^ (c >>> 8);
          key = key * 128 + unit;
        } else if (isWideSpace(unit)) break;
        else ascii = false;
      }
      const length = i - start;
      const crc = ascii ? (c ^ -1) >>> 0 : crc32(text.slice(start, i));
      const slot = crc % WORD_SPAN;
      key = ascii && length <= SHORT_WORD ? key * 8 + length : Number.NaN;
      if (keys[slot] !== key) {
        const known = words[slot];
        if (known === undefined || !sameText(known, text, start, i)) {
          words[slot] = text.slice(start, i);
          keys[slot] = key;
          this.learned += 1;
        }
      }
      out.push(WORD_BASE + slot);
    }
  }

  /** Learns a reply's words (the policy rendered it with its own instance). */
  learnMessage(message: unknown): void {
    this.scratch.clear();
    this.renderBodyInto(this.scratch, message);
  }

  /** The toy's special tokens: every id below the word range. */
  isSpecial(id: number): boolean {
    return id < WORD_BASE;
  }

  roleToken(role: unknown): number {
    return typeof role === 'string' ? (this.roleTokens[role] ?? SPECIAL.otherRole) : SPECIAL.otherRole;
  }

  /** The words of a message body: reasoning, content, then each tool call's `function` JSON. */
  renderBody(message: unknown): number[] {
    this.scratch.clear();
    this.renderBodyInto(this.scratch, message);
    return this.scratch.toArray();
  }

  /** Appends the body's ids to `out`. */
  private renderBodyInto(out: IdBuffer, message: unknown): void {
    if (!isJsonObject(message)) throw new TypeError('a chat message must be an object');
    this.encodeInto(out, textOf(message.reasoning_content));
    this.encodeInto(out, textOf(message.content));
    const calls = message.tool_calls;
    if (Array.isArray(calls)) {
      for (const call of calls) {
        const fn = isJsonObject(call) ? call.function : undefined;
        this.encodeInto(out, pythonJsonDumps(fn ?? null, { sortKeys: true }));
      }
    }
  }

  renderMessage(message: unknown): number[] {
    this.scratch.clear();
    this.renderMessageInto(this.scratch, message);
    return this.scratch.toArray();
  }

  /** The role token, then the body, appended to `out` (no message-sized array of its own, no unshift). */
  renderMessageInto(out: IdBuffer, message: unknown): void {
    if (!isJsonObject(message)) throw new TypeError('a chat message must be an object');
    out.push(this.roleToken(message.role));
    this.renderBodyInto(out, message);
  }

  renderMessages(messages: readonly unknown[]): number[] {
    this.scratch.clear();
    for (const m of messages) this.renderMessageInto(this.scratch, m);
    return this.scratch.toArray();
  }

  /** Readable text for ids: specials by name, learned words, unknown words as `<tok:ID>`. */
  decode(ids: readonly number[]): string {
    const out = DECODED_WORDS;
    if (out.length !== ids.length) out.length = ids.length;
    for (let k = 0; k < ids.length; k += 1) {
      const id = ids[k] as number;
      if (id < WORD_BASE) out[k] = SPECIAL_NAMES[id] ?? `<special:${id}>`;
      else if (Number.isInteger(id) && id < WORD_BASE + WORD_SPAN)
        out[k] = this.words[id - WORD_BASE] ?? unknownWordName(id);
      else out[k] = `<tok:${id}>`;
    }
    return out.join(' ');
  }
}

/**
 * The words of a `decode`, one array reused by every call of every instance (decodes never nest and call
 * nothing that decodes): the samples op decodes every turn of every leaf (2 M ids an op at the
 * benchmark's size), and a fresh array per call was a sixth of the op's allocations, which on a server's
 * first samples request grow the young generation page by page.
 */
const DECODED_WORDS: string[] = [];

// `<tok:ID>` of each word id seen unknown, made once: a pure function of the id, shared by every instance.
const UNKNOWN_NAMES = new Array<string | undefined>(WORD_SPAN).fill(undefined);

function unknownWordName(id: number): string {
  let name = UNKNOWN_NAMES[id - WORD_BASE];
  if (name === undefined) {
    name = `<tok:${id}>`;
    UNKNOWN_NAMES[id - WORD_BASE] = name;
  }
  return name;
}

/** The text of a `content`/`reasoning_content` value: a string, or the text parts of a part list. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) {
    return value
      .map((part) => (isJsonObject(part) && typeof part.text === 'string' ? part.text : ''))
      .join(' ');
  }
  return '';
}
