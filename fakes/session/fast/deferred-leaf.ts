import type { WireSample } from '../../../contracts/wire-sample.ts';
import type { TrajectoryNode } from '../tree.ts';
import { defineDeferred } from '../values/deferred-field.ts';
import { NumberRuns } from '../values/number-runs.ts';
import { TextPieces } from '../values/text-pieces.ts';
import { type TurnSample, tokenRuns } from '../values/turn-tokens.ts';
import type { FoldParts } from './run-fold.ts';

/**
 * A leaf's sample with its per-token fields deferred (deferred-field.ts): built only if a hook reads
 * them, written by the wire codec straight from their runs otherwise.
 */

const runsToArray = (runs: NumberRuns) => runs.toArray();

/** The wire sample of a folded leaf (run-fold.ts `foldAsRuns`), tokens and the fold's parts deferred. */
export function deferredWireSample(sample: TurnSample, parts: FoldParts | null): WireSample {
  const { head: _head, tail: _tail, ...rest } = sample;
  const out: WireSample = { tokens: [], ...rest };
  defineDeferred(out, 'tokens', new NumberRuns(tokenRuns(sample)), runsToArray);
  if (parts !== null) {
    defineDeferred(out, 'loss_mask', new NumberRuns(parts.mask), runsToArray);
    defineDeferred(out, 'rollout_log_probs', new NumberRuns(parts.logprobs), runsToArray);
    defineDeferred(out, 'response', new TextPieces(parts.response), (t: TextPieces) => t.join());
  }
  return out;
}

/**
 * `metadata.accumulated_token_ids` (`list(leaf.token_ids)`) deferred over the leaf snapshot's pieces, in
 * its key position.
 */
export function deferAccumulatedIds(metadata: Record<string, unknown>, leaf: TrajectoryNode): void {
  defineDeferred(
    metadata,
    'accumulated_token_ids',
    new NumberRuns(leaf.tokens.pieces(0, leaf.tokens.length)),
    runsToArray,
  );
}
