import { z } from 'zod';
import { trainRolloutId } from '../grpo/loss-weights.ts';
import type { ReplaySample } from '../model/sample.ts';
import type { TrainDump } from './dump-schema.ts';
import { RowIndex } from './row-index.ts';

/** One train row whose advantage differs from GRPO recomputed from the dumped raw rewards. */
const GrpoMismatchSchema = z.object({
  rank: z.number().int(),
  rollout: z.string(),
  sample_index: z.number().int().nullable(),
  column: z.enum(['rewards', 'advantages']),
  trained: z.number().nullable(),
  recomputed: z.number().nullable(),
});

export const GrpoComparisonSchema = z.object({
  /** Train rows matched to a dumped sample (TP/PP copies of a DP shard each count). */
  rows_compared: z.number().int(),
  /** Values compared: one `rewards` entry a row, plus every per-token `advantages` entry when dumped. */
  values_compared: z.number().int(),
  /** Train rows no dumped sample matches (by trainer rollout id, sample index and tokens). */
  unmatched_rows: z.number().int(),
  max_abs_diff: z.number(),
  mismatches: z.array(GrpoMismatchSchema),
  mismatch_count: z.number().int(),
});
export type GrpoComparison = z.infer<typeof GrpoComparisonSchema>;

/** The rewards column is float32 on the trainer (a tensor); a float32 rounding is not a disagreement. */
const close = (a: number, b: number): boolean => Math.abs(a - b) <= 1e-6 + 1e-6 * Math.abs(b);

const MAX_LISTED = 20;

/** Rows are matched by trainer rollout id, sample index and tokens. */
const head = (rollout: string, index: number | null): string => `${rollout}|${index ?? ''}`;

/**
 * GRPO recomputed from the dumped raw rewards (the replay's `processStep`, Miles' per-rollout
 * normalisation) against what the trainer used: each train row's `rewards` entry (the normalised reward,
 * radixark/miles@31f1ca96 miles/ray/rollout/train_data_conversion.py) and, in a real run's dump, its
 * per-token `advantages` (GRPO's returns are the reward on every token:
 * miles/backends/training_utils/loss_hub/math_utils.py `get_grpo_returns`; taken as they are, so a run
 * with `--normalize-advantages` shows whitened values as mismatches).
 */
export function compareGrpoWithTrainRows(
  rows: readonly ReplaySample[],
  recomputed: readonly number[] | null,
  shards: readonly TrainDump[],
): GrpoComparison {
  const byIdentity = new RowIndex<number | null>();
  rows.forEach((row, i) => {
    byIdentity.set(head(trainRolloutId(row, i), row.index), [row.tokens], recomputed?.[i] ?? null);
  });
  const out: GrpoComparison = {
    rows_compared: 0,
    values_compared: 0,
    unmatched_rows: 0,
    max_abs_diff: 0,
    mismatches: [],
    mismatch_count: 0,
  };
  const note = (mismatch: z.infer<typeof GrpoMismatchSchema>) => {
    out.mismatch_count += 1;
    if (out.mismatches.length < MAX_LISTED) out.mismatches.push(mismatch);
  };
  for (const shard of shards) {
    const d = shard.rollout_data;
    const advantages = (d as { advantages?: unknown }).advantages;
    d.tokens.forEach((tokens, r) => {
      const rollout = d.rollout_ids?.[r];
      const index = d.sample_indices?.[r] ?? null;
      const key = rollout === undefined ? null : head(String(rollout), index);
      if (key === null || !byIdentity.has(key, [tokens])) {
        out.unmatched_rows += 1;
        return;
      }
      const expected = byIdentity.get(key, [tokens]) ?? null;
      out.rows_compared += 1;
      const base = { rank: shard.rank, rollout: String(rollout), sample_index: index };
      const compare = (column: 'rewards' | 'advantages', trained: number | null) => {
        out.values_compared += 1;
        if (trained !== null && expected !== null) {
          const diff = Math.abs(trained - expected);
          if (diff > out.max_abs_diff) out.max_abs_diff = diff;
          if (close(trained, expected)) return;
        } else if (trained === null && expected === null) return;
        note({ ...base, column, trained, recomputed: expected });
      };
      compare('rewards', d.rewards[r] ?? null);
      const perToken = Array.isArray(advantages) ? advantages[r] : undefined;
      if (Array.isArray(perToken)) {
        // One value a response token; a run of equal values is compared once per distinct value.
        const distinct = new Set(perToken.map((v) => (typeof v === 'number' ? v : null)));
        out.values_compared += perToken.length - distinct.size;
        for (const v of distinct) compare('advantages', v);
      }
    });
  }
  return out;
}
