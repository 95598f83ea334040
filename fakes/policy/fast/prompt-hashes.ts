import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { AsciiWriter } from '../../../common/ascii-writer.ts';
import { withRoom } from '../../../common/buffer-room.ts';
import type { IdsHashes, PromptHashing } from '../ids-hashes.ts';

/**
 * What the policy hashes of every request's prompt ids, continued from the previous request of the
 * same session instead of recomputed over the whole context. A session re-sends its history each
 * turn, so a request's `input_ids` start with the previous request's (checked id by id before
 * anything is reused); CRC-32 and SHA-256 are streaming functions, so the hash of the longer list is
 * the stored hash continued over the new ids: the same value as hashing it whole. At 32k tokens that
 * is one `===` pass over the ids instead of a 32k-id text, a 128 KB and a 256 KB copy hashed per call.
 * Memory: each session's last prompt as int32 (bounded by `maxKeys`). The messages digest is continued
 * elsewhere, from the bytes of the previous body rather than its parsed history (history-reuse.ts).
 * Property-tested in prompt-hashes.test.ts.
 */

/** A prompt's ids: a parsed list, or read from the body's bytes as int32 (input-ids-body.ts). */
type Ids = readonly number[] | Int32Array;

/**
 * A session's last prompt, copied into a buffer the entry owns and overwrites turn after turn (only
 * the new tail is written). Keeping the request's own parsed array instead left one dead 256 KB array
 * per request in the old generation until the next full GC: +65 MB peak RSS on a realistic step.
 */
interface Entry {
  ids: Int32Array;
  length: number;
  hashes: IdsHashes;
}

/** Whether `ids` starts with the first `length` ids of `prefix`, by `===`. */
function startsWith(ids: Ids, prefix: Int32Array, length: number): boolean {
  if (length > ids.length || length > prefix.length) return false;
  for (let i = 0; i < length; i++) if (ids[i] !== prefix[i]) return false;
  return true;
}

// `===` is what the reuse compares by: equal numbers give equal `String` text, equal int32 and equal
// float64 values once -0 is made 0 (NaN is never equal to itself, so a NaN is only ever rehashed).
// Only 32-bit integers are kept (an Int32Array holds them exactly; -0 is kept as 0, which `===` -0).

/** Copies `ids[from:]` into the entry at `from` (growing it); false when an id is not a 32-bit integer. */
function store(entry: Entry, ids: Ids, from: number): boolean {
  entry.ids = withRoom(entry.ids, ids.length, from, (n) => new Int32Array(n));
  const kept = entry.ids;
  for (let i = from; i < ids.length; i++) {
    const v = ids[i] as number;
    if ((v | 0) !== v) return false;
    kept[i] = v;
  }
  entry.length = ids.length;
  return true;
}

const text = new AsciiWriter();
let int32Scratch = new Int32Array(1024);
let float64Scratch = new Float64Array(1024);

/** The hashes after `ids[from:]` appended; `state` itself is left as it was (its hash is copied). */
function extendIds(state: IdsHashes, ids: Ids, from: number): IdsHashes {
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

/** The policy's continued prompt hashes, per routing key (the session id the session server sends). */
export class PromptHashes implements PromptHashing {
  private readonly entries = new Map<string, Entry>();
  private readonly maxKeys: number;

  /** `maxKeys`: sessions remembered (a 32k prompt keeps 160 KB); a realistic step runs 32 at once. */
  constructor(maxKeys = 64) {
    this.maxKeys = maxKeys;
  }

  /** The running hashes of `ids` (a null key: computed whole, nothing kept). */
  idsHashes(key: string | null, ids: Ids): IdsHashes {
    const previous = key === null ? undefined : this.entries.get(key);
    const reuse = previous !== undefined && startsWith(ids, previous.ids, previous.length);
    const from = reuse ? previous.length : 0;
    const base = reuse ? previous.hashes : emptyHashes();
    const hashes = from === ids.length ? base : extendIds(base, ids, from);
    if (key === null) return hashes;
    // Most recently used last, so the first key is the one to drop.
    this.entries.delete(key);
    const entry = previous ?? { ids: new Int32Array(0), length: 0, hashes };
    if (!store(entry, ids, from)) return hashes;
    entry.hashes = hashes;
    this.entries.set(key, entry);
    if (this.entries.size > this.maxKeys) this.entries.delete(this.entries.keys().next().value as string);
    return hashes;
  }
}

function emptyHashes(): IdsHashes {
  return { joinedTextCrc: 0, int32Crc: 0, float64: createHash('sha256') };
}
