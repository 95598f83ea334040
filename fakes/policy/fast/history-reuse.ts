import { createHash, type Hash } from 'node:crypto';
import { withRoom } from '../../../common/buffer-room.ts';
import {
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COMMA,
  isKeyToken,
  keyMayBe,
  OPEN_ARRAY,
  OPEN_OBJECT,
  scanArrayTail,
  scanObjectTail,
  skipJsonWhitespace,
} from '../../../common/json-elements.ts';
import { parseJson } from '../../../common/python-json/loads.ts';
import { continueMessagesHash, lastMessageHead } from '../../../contracts/request-digest.ts';
import type { MessagesSummary } from '../log-entry.ts';
import { INPUT_IDS_KEY, restBefore, restObject, writeInts } from './input-ids-body.ts';

/**
 * The chat body as the policy reads it, reusing what the previous body of the same routing key (the
 * session id the session server sends) already proved. A session re-sends its whole history every
 * turn, `json.dumps`-written (fakes/session/fast/forwarded-body.ts): `{..."messages": [m1, ..., mN], ...,
 * "input_ids": [1, 2, ...]}`. Per key this keeps the bytes of the previous body's `input_ids` digits with
 * the ids they parse to, and the bytes of the previous body up to the end of its last message with the
 * message count, the last message's head and the SHA-256 state of the messages digest after them. A
 * new body whose bytes start with those (compared natively) has only its new tail parsed, scanned and
 * hashed. Anything not proven equal takes the whole path (`fullRest`, the whole digit run): the answer
 * is the same, `JSON.parse` of the whole text with the ids as its last key, which input-ids-body.ts
 * did before (history-reuse.test.ts drives sequences of bodies against it).
 */

export interface ReusedBody {
  /** The body's other members: `JSON.parse`'s object without `messages` and `input_ids`. */
  readonly rest: Record<string, unknown>;
  /**
   * `input_ids`, which was the body's last key, read as int32: a view of the ids the key keeps (no
   * 128 KB copy per 32k-token request), valid until the same key's next read, which may overwrite
   * them. The chat route reads it before it awaits anything (read-chat-body.ts, chat-route.ts).
   */
  readonly inputIds: Int32Array;
  /** The body's `messages` (an empty list when it is not an array), as the log keeps them. */
  readonly messages: MessagesSummary;
}

const utf8 = new TextDecoder('utf-8');
const MESSAGES_KEY = Buffer.from('"messages"', 'latin1');
const SPACE = 0x20;

export interface ReuseCounts {
  ids: number;
  messages: number;
}

/** A key's previous `input_ids`: the digit bytes (`1, 2, 3`) and the ids they are, in owned buffers. */
interface IdsState {
  digits: Uint8Array;
  digitsLength: number;
  ids: Int32Array;
  count: number;
}

/** A key's previous body up to the end of its last message, and what the log keeps of its messages. */
interface MessagesState {
  prefix: Uint8Array;
  length: number;
  /** Just past the `[` of the top-level `messages` value. */
  open: number;
  count: number;
  lastHead: string;
  /** The digest's hash after `[` and the messages (not finalized). */
  hash: Hash;
}

interface Entry {
  ids: IdsState;
  messages: MessagesState | null;
}

/** The body as a Buffer (native compare and search) without copying. */
function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}

/**
 * Parses `body[from:to]` written as `1, -2, 30` (`, ` between them, at most 9 digits each, no leading
 * zero, no `-0`: exactly what `JSON.parse` reads as the same int32 value) into `state.ids` from
 * `state.count` on; the new count, or -1 when the bytes are not so written (`from === to`: none).
 */
function appendIds(state: IdsState, body: Uint8Array, from: number, to: number): number {
  // At most one id per 3 bytes (`1, `).
  state.ids = withRoom(
    state.ids,
    state.count + Math.floor((to - from + 2) / 3),
    state.count,
    (n) => new Int32Array(n),
  );
  return writeInts(state.ids, state.count, body, from, to);
}

/**
 * The ids of the digit run `body[from:to]`, reusing `state`'s when its digits are a prefix of the run
 * that ends at a separator (`1, 23` is not an earlier prompt of `1, 234`); null when the run is not
 * plain ids. `state` holds this run's digits and ids afterwards (or nothing, when they were not ids).
 */
function readIds(
  state: IdsState,
  body: Buffer,
  from: number,
  to: number,
  counts: ReuseCounts,
): Int32Array | null {
  const length = to - from;
  const known = state.digitsLength;
  let tailFrom = from;
  if (known > 0 && length >= known && body.compare(state.digits, 0, known, from, from + known) === 0) {
    if (length === known) {
      counts.ids += 1;
      return state.ids.subarray(0, state.count);
    }
    // A tail after `, ` (`1, 2, ` is no list: the whole run refuses it).
    if (body[from + known] === COMMA && body[from + known + 1] === SPACE && length > known + 2)
      tailFrom = from + known + 2;
  }
  if (tailFrom === from) {
    // Not a continuation: the whole run (what was kept is dropped first, as the buffers are reused).
    state.digitsLength = 0;
    state.count = 0;
  }
  const count = appendIds(state, body, tailFrom, to);
  if (count < 0) {
    if (tailFrom === from) return null;
    // A continuation's tail that is not ids: the whole run says the same, and keeps nothing.
    state.digitsLength = 0;
    state.count = 0;
    return null;
  }
  if (tailFrom !== from) counts.ids += 1;
  state.digits = withRoom(state.digits, length, state.digitsLength, (n) => new Uint8Array(n));
  body.copy(state.digits, state.digitsLength, from + state.digitsLength, to);
  state.digitsLength = length;
  state.count = count;
  return state.ids.subarray(0, count);
}

/** Where the top-level `messages` array of an accepted body is: just past its `[`, its elements' ends. */
interface MessagesBytes {
  readonly open: number;
  readonly ends: readonly number[];
}

/**
 * The members of an object a parser accepted, from `from` (just past its `{`, or just past a member's
 * value when `afterMember`) to `end` (where its members stop: the ids key's comma): the last `messages`
 * member's array (null when none, or when that member is not an array) and whether any member might be
 * `messages` (a key with an escape counts); undefined when the bytes are not so shaped.
 */
function walkMembers(
  body: Buffer,
  from: number,
  end: number,
  afterMember: boolean,
): { messages: MessagesBytes | null; met: boolean } | undefined {
  const tail = scanObjectTail(body, from, afterMember, end);
  if (tail === null) return undefined;
  let messages: MessagesBytes | null = null;
  let met = false;
  for (const member of tail.members) {
    if (!keyMayBe(body, member.keyStart, member.keyEnd, MESSAGES_KEY)) continue;
    met = true;
    // An escaped key might be `messages` too: which array the parse kept is then not known here.
    if (!isKeyToken(body, member.keyStart, member.keyEnd, MESSAGES_KEY)) return undefined;
    messages = null;
    if (body[member.valueStart] !== OPEN_ARRAY) continue;
    const array = scanArrayTail(body, member.valueStart + 1, false);
    if (array === null || array.close + 1 !== member.valueEnd) return undefined;
    messages = { open: member.valueStart + 1, ends: array.elementEnds };
  }
  return { messages, met };
}

/** What the log keeps of `messages`, the hash continued from `hash` (`before` messages fed to it). */
function summarize(
  messages: readonly unknown[],
  hash: Hash,
  before: number,
  previousHead: string,
): { summary: MessagesSummary; hash: Hash } {
  continueMessagesHash(hash, messages, before);
  const summary = {
    count: before + messages.length,
    digest: hash.copy().update(']').digest('hex'),
    lastHead: messages.length > 0 ? lastMessageHead(messages) : previousHead,
  };
  return { summary, hash };
}

const emptyHash = () => createHash('sha256').update('[');

interface RestRead {
  readonly rest: Record<string, unknown>;
  readonly messages: MessagesSummary;
}

/** Copies `body[0:length]` into `state`'s prefix, only the bytes after its first `kept`. */
function keepPrefix(state: MessagesState, body: Buffer, kept: number, length: number): void {
  state.prefix = withRoom(state.prefix, length, kept, (n) => new Uint8Array(n));
  body.copy(state.prefix, kept, kept, length);
  state.length = length;
}

/** Today's read of `body[0:keyAt]` + `}`: the whole text parsed; kept in `entry` for the next body. */
function fullRest(body: Buffer, keyAt: number, entry: Entry | null): RestRead | null {
  const rest = restBefore(body, keyAt);
  if (rest === null) return null;
  const messages = Array.isArray(rest.messages) ? (rest.messages as unknown[]) : [];
  delete rest.messages;
  const { summary, hash } = summarize(messages, emptyHash(), 0, '');
  if (entry !== null) {
    entry.messages = null;
    // The array's bytes, to be recognised in the next body (only a `{` first: no BOM, no whitespace).
    const walk =
      body[0] === OPEN_OBJECT && messages.length > 0 ? walkMembers(body, 1, keyAt, false) : undefined;
    const found = walk?.messages;
    if (found && found.ends.length === messages.length) {
      const state: MessagesState = {
        prefix: new Uint8Array(0),
        length: 0,
        open: found.open,
        count: summary.count,
        lastHead: summary.lastHead,
        hash,
      };
      keepPrefix(state, body, 0, found.ends.at(-1) as number);
      entry.messages = state;
    }
  }
  return { rest, messages: summary };
}

let scratch = Buffer.alloc(64 * 1024);

/**
 * `body[0:keyAt]` + `}` when it starts with the bytes `state` kept: the document without the kept
 * messages (their `[` followed by what comes after them, the comma between dropped) is parsed, and
 * what it holds in `messages` is appended to the kept ones; undefined when that cannot be proven the
 * whole text's reading (the caller reads it whole), null when the whole text is not the layout.
 */
function continuedRest(
  body: Buffer,
  keyAt: number,
  state: MessagesState,
  counts: ReuseCounts,
): RestRead | null | undefined {
  const kept = state.length;
  if (kept >= keyAt || body.compare(state.prefix, 0, kept, 0, kept) !== 0) return undefined;
  const next = skipJsonWhitespace(body, kept);
  const separator = body[next];
  if (next >= keyAt || (separator !== COMMA && separator !== CLOSE_ARRAY)) return undefined;
  const after = separator === COMMA ? next + 1 : next;
  const size = state.open + (keyAt - after) + 1;
  if (scratch.length < size) scratch = Buffer.alloc(Math.ceil(size * 1.25));
  body.copy(scratch, 0, 0, state.open);
  body.copy(scratch, state.open, after, keyAt);
  scratch[size - 1] = CLOSE_OBJECT;
  let parsed: unknown;
  try {
    parsed = parseJson(utf8.decode(scratch.subarray(0, size)));
  } catch {
    return undefined;
  }
  // The same members as the whole text (only the kept messages are missing), so the same checks.
  const rest = restObject(parsed);
  if (rest === null) return null;
  const added = rest.messages;
  // `[m1, ..., mN, ]` is not JSON though `[ ]` is: after a comma at least one message.
  if (!Array.isArray(added) || (separator === COMMA && added.length === 0)) return undefined;
  // The kept array must be the one `messages` holds: its new elements where the parse put them, and
  // no `messages` member after it (a later duplicate would be the one read).
  const tail = scanArrayTail(body, kept, true);
  if (tail === null || tail.elementEnds.length !== added.length) return undefined;
  const members = walkMembers(body, tail.close + 1, keyAt, true);
  if (members === undefined || members.met) return undefined;
  delete rest.messages;
  const { summary, hash } = summarize(added, state.hash.copy(), state.count, state.lastHead);
  keepPrefix(state, body, kept, tail.elementEnds.at(-1) ?? kept);
  state.count = summary.count;
  state.lastHead = summary.lastHead;
  state.hash = hash;
  counts.messages += 1;
  return { rest, messages: summary };
}

/** The session server's bodies read per routing key, reusing each key's previous body (bounded). */
export class HistoryReuse {
  private readonly entries = new Map<string, Entry>();
  private readonly maxKeys: number;
  /** How many bodies reused their key's previous ids and messages (tests count the cases met). */
  readonly reused: ReuseCounts = { ids: 0, messages: 0 };

  /** `maxKeys`: sessions remembered (a 32k-token body keeps ≈ 0.7 MB); a realistic step runs 32 at once. */
  constructor(maxKeys = 64) {
    this.maxKeys = maxKeys;
  }

  /**
   * `body` read as `JSON.parse` of its UTF-8 text would read it, when it is the session server's
   * layout (`input_ids` the last key, plain int32 ids); null otherwise (the caller parses the text).
   * A null key reads it whole and keeps nothing.
   */
  read(key: string | null, bytes: Uint8Array): ReusedBody | null {
    const body = asBuffer(bytes);
    const to = body.length - 2;
    // `]}` closes the list and the object; no trailing whitespace (the session server writes none).
    if (to < INPUT_IDS_KEY.length + 1 || body[to] !== CLOSE_ARRAY || body[to + 1] !== CLOSE_OBJECT)
      return null;
    const keyAt = body.lastIndexOf(INPUT_IDS_KEY, to - INPUT_IDS_KEY.length);
    if (keyAt < 1) return null;
    const entry = key === null ? freshEntry() : this.entry(key);
    const inputIds = readIds(entry.ids, body, keyAt + INPUT_IDS_KEY.length, to, this.reused);
    if (inputIds === null) return null;
    const kept = key === null ? null : entry;
    let read: RestRead | null | undefined;
    if (entry.messages !== null) read = continuedRest(body, keyAt, entry.messages, this.reused);
    if (read === undefined) read = fullRest(body, keyAt, kept);
    if (read === null) return null;
    return { rest: read.rest, inputIds, messages: read.messages };
  }

  /** The key's entry, made most recently used (the first key is the one dropped). */
  private entry(key: string): Entry {
    const found = this.entries.get(key);
    if (found !== undefined) {
      this.entries.delete(key);
      this.entries.set(key, found);
      return found;
    }
    const entry = freshEntry();
    this.entries.set(key, entry);
    if (this.entries.size > this.maxKeys) this.entries.delete(this.entries.keys().next().value as string);
    return entry;
  }
}

function freshEntry(): Entry {
  return {
    ids: { digits: new Uint8Array(0), digitsLength: 0, ids: new Int32Array(0), count: 0 },
    messages: null,
  };
}
