import type { WireSample } from '../../../contracts/wire-sample.ts';
import type { TokenSnapshot } from '../token-snapshot.ts';
import type { NumberRun } from './number-runs.ts';

/**
 * How a turn sample holds its tokens (read by Miles' assembly rules and the samples op's fast fold
 * alike): the record's prompt ids and the output ids as two parts, joined only when asked.
 */

/** Turns token ids into text (the session's tokenizer). */
export type Decoder = (ids: readonly number[]) => string;

/**
 * The first `length` ids of a node's snapshot, read in place: a record's prompt when its `input_ids` is
 * the snapshot getter the chat route installs (fakes/session/fast/prompt-ids-getter.ts `promptSource`).
 */
export class SnapshotPrefix {
  readonly snapshot: TokenSnapshot;
  readonly length: number;
  constructor(snapshot: TokenSnapshot, length: number) {
    this.snapshot = snapshot;
    this.length = Math.min(length, snapshot.length);
  }
}

/** A turn's prompt ids: a plain array, or a snapshot's prefix. */
export type Head = readonly number[] | SnapshotPrefix;

/**
 * A turn sample whose tokens are kept as two parts, the record's prompt ids (`head`, shared, never
 * written) and the output ids (`tail`), joined only for the sample that leaves the fold: a turn's tokens
 * are a whole context (32k ids at the recipe's scale), and copying every turn's is most of the op.
 */
export type TurnSample = Omit<WireSample, 'tokens'> & { head: Head; tail: readonly number[] };

export const tokenCount = (s: TurnSample) => s.head.length + s.tail.length;

/** `head[from:to]` for `0 <= from <= to <= head.length`, as a fresh plain array. */
function headSlice(head: Head, from: number, to: number): number[] {
  return head instanceof SnapshotPrefix ? head.snapshot.slice(from, to) : head.slice(from, to);
}

/** The first `n` ids of `head` (no copy for a snapshot prefix). */
export function headPrefix(head: Head, n: number): Head {
  return head instanceof SnapshotPrefix ? new SnapshotPrefix(head.snapshot, n) : head.slice(0, n);
}

/** The sample's tokens as runs: the head's stored pieces, then the tail. */
export function tokenRuns(s: TurnSample): NumberRun[] {
  const runs: NumberRun[] =
    s.head instanceof SnapshotPrefix
      ? s.head.snapshot.pieces(0, s.head.length)
      : [{ data: s.head, from: 0, to: s.head.length }];
  runs.push({ data: s.tail, from: 0, to: s.tail.length });
  return runs;
}

/** `tokens[from:to]` (Array.prototype.slice's index rules) of a two-part sample. */
export function sliceTokens(s: TurnSample, from: number, to: number = tokenCount(s)): number[] {
  const n = tokenCount(s);
  const norm = (k: number) => (k < 0 ? Math.max(n + k, 0) : Math.min(k, n));
  const lo = norm(from);
  const hi = Math.max(norm(to), lo);
  const h = s.head.length;
  if (hi <= h) return headSlice(s.head, lo, hi);
  if (lo >= h) return s.tail.slice(lo - h, hi - h);
  return headSlice(s.head, lo, h).concat(s.tail.slice(0, hi - h));
}

/** A wire sample as a turn sample: all its tokens as the head. */
export function toTurnSample(sample: WireSample): TurnSample {
  const { tokens, ...rest } = sample;
  return { ...rest, head: tokens, tail: [] };
}

/** The joined wire sample. */
export function toWireSample(sample: TurnSample): WireSample {
  const { head, tail, ...rest } = sample;
  return { tokens: headSlice(head, 0, head.length).concat(tail), ...rest };
}
