import { createHash, type Hash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { AsciiWriter } from '../../common/ascii-writer.ts';
import { canonicalMessageJson, isPlainJsonList, messagesDigest } from '../../contracts/request-digest.ts';

/**
 * What the synthetic policy hashes of every request, continued from the previous request of the same
 * session instead of recomputed over the whole context. A session re-sends its history each turn, so
 * a request's `input_ids` and `messages` start with the previous request's (checked, element by
 * element, before anything is reused); CRC-32 and SHA-256 are streaming functions, so the hash of the
 * longer list is the stored hash continued over the new items: the same value as hashing it whole.
 * At 32k tokens that is ~30 µs of comparing instead of a 32k-id text and 200 KB of JSON hashed per
 * call. Memory: the last request's parsed ids and messages per session (bounded by `maxKeys`).
 * Property-tested against the whole-list functions in prompt-hashes.test.ts.
 */

/** The running hashes of a list of ids (none finalized). */
export interface IdsHashes {
  /** CRC-32 of `ids.join(',')` (the completion id's seed text, before its `#counter`). */
  readonly joinedTextCrc: number;
  /** CRC-32 of `Int32Array.from(ids)`'s bytes (the synthetic reply's seed). */
  readonly int32Crc: number;
  /** SHA-256 over the ids as float64 values, -0 as 0 (`tokenIdsDigest`), not yet digested. */
  readonly float64: Hash;
}

/** `tokenIdsDigest(ids)` from the running hash. */
export function idsDigest(hashes: IdsHashes): string {
  return hashes.float64.copy().digest('hex');
}

interface Entry<T, S> {
  readonly items: readonly T[];
  /** `items.length` when hashed (the list is compared again, never trusted by identity). */
  readonly length: number;
  readonly state: S;
}

/** Per key, the last list seen and its running state; a list that extends it continues the state. */
class ContinuedHashes<T, S> {
  private readonly entries = new Map<string, Entry<T, S>>();

  private readonly maxKeys: number;
  private readonly same: (a: T, b: T) => boolean;
  private readonly start: () => S;
  /** The state after `items[from:]` appended; must not change `state` (it may still be stored). */
  private readonly extend: (state: S, items: readonly T[], from: number) => S;

  constructor(
    maxKeys: number,
    same: (a: T, b: T) => boolean,
    start: () => S,
    extend: (state: S, items: readonly T[], from: number) => S,
  ) {
    this.maxKeys = maxKeys;
    this.same = same;
    this.start = start;
    this.extend = extend;
  }

  of(key: string | null, items: readonly T[]): S {
    const previous = key === null ? undefined : this.entries.get(key);
    const reuse = previous !== undefined && this.extends(items, previous.items, previous.length);
    const base = reuse ? previous.state : this.start();
    const from = reuse ? previous.length : 0;
    const state = from === items.length ? base : this.extend(base, items, from);
    if (key !== null) {
      // Most recently used last, so the first key is the one to drop.
      this.entries.delete(key);
      this.entries.set(key, { items, length: items.length, state });
      if (this.entries.size > this.maxKeys) this.entries.delete(this.entries.keys().next().value as string);
    }
    return state;
  }

  private extends(items: readonly T[], prefix: readonly T[], length: number): boolean {
    if (length > items.length || length > prefix.length) return false;
    for (let i = 0; i < length; i++) if (!this.same(items[i] as T, prefix[i] as T)) return false;
    return true;
  }
}

// `===` on numbers is what every hash here compares by: equal numbers give equal `String` text, equal
// int32 and equal float64 values once -0 is made 0 (NaN is never equal, so it is only ever rehashed).
const sameNumber = (a: number, b: number) => a === b;

const text = new AsciiWriter();
let int32Scratch = new Int32Array(1024);
let float64Scratch = new Float64Array(1024);

function extendIds(state: IdsHashes, ids: readonly number[], from: number): IdsHashes {
  const n = ids.length - from;
  if (from > 0) text.text(',');
  text.ints(from === 0 ? ids : ids.slice(from), ',');
  const joinedTextCrc = crc32(text.view(), state.joinedTextCrc);
  text.reset();
  if (int32Scratch.length < n) int32Scratch = new Int32Array(n * 2);
  if (float64Scratch.length < n) float64Scratch = new Float64Array(n * 2);
  const int32 = int32Scratch;
  const float64 = float64Scratch;
  for (let i = 0; i < n; i++) {
    const v = ids[from + i] as number;
    // The store converts as `Int32Array.from` does (ToInt32).
    int32[i] = v;
    float64[i] = v + 0;
  }
  return {
    joinedTextCrc,
    int32Crc: crc32(new Uint8Array(int32.buffer, 0, n * 4), state.int32Crc),
    float64: state.float64.copy().update(new Uint8Array(float64.buffer, 0, n * 8)),
  };
}

/** Two parsed JSON values with the same canonical JSON (same keys in any order, equal members). */
function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) {
    if (!Object.hasOwn(b, key)) return false;
    if (!sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key])) return false;
  }
  return true;
}

interface MessagesState {
  /** SHA-256 over `[` and the messages' canonical JSON joined by `,`, without the closing `]`. */
  readonly hash: Hash;
}

function extendMessages(state: MessagesState, messages: readonly unknown[], from: number): MessagesState {
  const hash = state.hash.copy();
  for (let i = from; i < messages.length; i++) {
    if (i > 0) hash.update(',');
    hash.update(canonicalMessageJson(messages[i]), 'utf8');
  }
  return { hash };
}

/** The policy's continued hashes, per routing key (the session id the session server sends). */
export class PromptHashes {
  private readonly ids: ContinuedHashes<number, IdsHashes>;
  private readonly messages: ContinuedHashes<unknown, MessagesState>;

  constructor(maxKeys = 256) {
    this.ids = new ContinuedHashes(
      maxKeys,
      sameNumber,
      () => ({ joinedTextCrc: 0, int32Crc: 0, float64: createHash('sha256') }),
      extendIds,
    );
    this.messages = new ContinuedHashes(
      maxKeys,
      sameJson,
      () => ({ hash: createHash('sha256').update('[') }),
      extendMessages,
    );
  }

  /** The running hashes of `ids` (a null key: computed whole, nothing kept). */
  idsHashes(key: string | null, ids: readonly number[]): IdsHashes {
    return this.ids.of(key, ids);
  }

  /** `messagesDigest(messages)`; continued only for lists of plain parsed JSON. */
  messagesDigest(key: string | null, messages: readonly unknown[]): string {
    if (!isPlainJsonList(messages)) return messagesDigest(messages);
    return this.messages.of(key, messages).hash.copy().update(']').digest('hex');
  }
}
