import { type DumpEvidence, MAX_EVIDENCE, type SmokeCheck } from '../check-result.ts';
import type { TrainDump } from '../dump-schema.ts';
import { RowIndex } from '../row-index.ts';

const sum = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0);

/**
 * In the train shards, every row's `rollout_mask_sums` equals the sum of `loss_masks` over all rows of
 * its rollout in the whole step, across shards (radixark/miles@31f1ca96
 * miles/ray/rollout/train_data_conversion.py `_compute_rollout_mask_sums`): the denominator that makes
 * each rollout one token-mean. TP/PP ranks of one DP shard hold copies of the same rows, so
 * rows are counted once by content.
 */
export function checkTrainMaskSums(shards: readonly TrainDump[]): SmokeCheck {
  const base = { name: 'train_mask_sums', source: 'dumps' as const };
  if (shards.length === 0)
    return {
      ...base,
      verdict: 'undecided',
      summary: 'no train_data dumps (debug_rollout_only?)',
      evidence: [],
    };
  const unusable = shards.find(
    (s) => s.cp_size > 1 || !s.rollout_data.rollout_ids || !s.rollout_data.rollout_mask_sums,
  );
  if (unusable)
    return {
      ...base,
      verdict: 'undecided',
      summary:
        unusable.cp_size > 1
          ? `rank ${unusable.rank} is one of ${unusable.cp_size} context-parallel slices: masks are split`
          : `rank ${unusable.rank} of step ${unusable.rollout_id} has no rollout_ids/rollout_mask_sums columns`,
      evidence: [],
    };

  const evidence: DumpEvidence[] = [];
  const steps = [...new Set(shards.map((s) => s.rollout_id))];
  let checked = 0;
  for (const step of steps) {
    const stepShards = shards.filter((s) => s.rollout_id === step);
    const seen = new RowIndex<true>();
    const totals = new Map<number, number>();
    for (const shard of stepShards) {
      const d = shard.rollout_data;
      d.loss_masks.forEach((mask, row) => {
        const rid = d.rollout_ids![row]!;
        const tokens = d.tokens[row];
        // A row without tokens is one identity per rollout and index, as `${undefined}` made it.
        const head = `${rid}|${d.sample_indices?.[row] ?? ''}|${tokens === undefined ? 'none' : 'tokens'}`;
        const columns = tokens === undefined ? [mask] : [tokens, mask];
        if (seen.has(head, columns)) return;
        seen.set(head, columns, true);
        totals.set(rid, (totals.get(rid) ?? 0) + sum(mask));
      });
    }
    for (const shard of stepShards) {
      const d = shard.rollout_data;
      d.rollout_mask_sums!.forEach((logged, row) => {
        checked += 1;
        const rid = d.rollout_ids![row]!;
        const expected = totals.get(rid) ?? 0;
        if (logged !== expected)
          evidence.push({
            step,
            rank: shard.rank,
            rollout: rid,
            row,
            detail: `rollout_mask_sums is ${logged}, but the rollout's loss masks sum to ${expected}`,
          });
      });
    }
  }
  return {
    ...base,
    verdict: evidence.length === 0 ? 'pass' : 'fail',
    summary:
      evidence.length === 0
        ? `${checked} train rows carry their rollout's total trainable tokens`
        : `${evidence.length} of ${checked} train rows carry a wrong rollout mask sum`,
    evidence: evidence.slice(0, MAX_EVIDENCE),
  };
}
