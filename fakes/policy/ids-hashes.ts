import type { Hash } from 'node:crypto';

/**
 * What the policy computes of every prompt's ids: the log's `tokenIdsDigest` (contracts/request-digest.ts)
 * and the synthetic reply's seeds, as running hashes. How they are computed is speed only: the server's
 * `PromptHashing` (fakes/policy/fast/prompt-hashes.ts, plugged in by compose.ts) continues a session's
 * previous hashes instead of hashing the whole prompt again, to the same values.
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

/** The running hashes of a prompt's ids, per routing key (a null key: nothing kept between calls). */
export interface PromptHashing {
  idsHashes(key: string | null, ids: readonly number[] | Int32Array): IdsHashes;
}
