import { z } from 'zod';
import { rowsByRollout } from './loss-weights.ts';

/**
 * The trainer settings that decide how one rollout step's rows become optimizer steps. The recipe
 * passes `--global-batch-size`, `--use-dynamic-batch-size` and `--balance-data`, and no
 * `--allow-partial-train-step`; its data-parallel size is (nodes × GPUs) / tensor-parallel size 4.
 */
export const TrainScheduleConfigSchema = z.object({
  /** Rollouts per optimizer step on the rollout-side schedule; rows per step on the legacy one. */
  global_batch_size: z.number().int().positive(),
  dp_size: z.number().int().positive(),
  /** `--allow-partial-train-step` (needs `--use-dynamic-batch-size`, which the recipe sets). */
  allow_partial_train_step: z.boolean().default(false),
});
export type TrainScheduleConfig = z.infer<typeof TrainScheduleConfigSchema>;

/** One optimizer step of a rollout step. */
interface TrainStep {
  /** Trainer ids of its rollouts, in schedule order; null on the legacy schedule (rows, not rollouts). */
  readonly rollouts: readonly string[] | null;
  /** Row positions (into the step's flattened rows) it trains; null on the legacy schedule. */
  readonly rows: readonly number[] | null;
  readonly row_count: number;
  /** What each rollout's loss is divided by: `num_rollouts` of the step, or the global batch size (legacy). */
  readonly loss_divisor: number;
}

export interface TrainSchedule {
  /**
   * `rollout_side`: `build_dp_schedule` (whole rollouts per step); `legacy`: `split_train_data_by_dp_raw`
   * and the trainer's row-count steps, taken when there are fewer distinct rollout ids than the global
   * batch size (radixark/miles@31f1ca96 miles/ray/rollout/train_data_conversion.py:
   * can_schedule_on_rollout_side).
   */
  readonly mode: 'rollout_side' | 'legacy';
  readonly global_batch_size: number;
  readonly dp_size: number;
  readonly distinct_rollouts: number;
  readonly steps: readonly TrainStep[];
  /** Rollouts the schedule leaves out (trailing ones, whole), with their rows: trained in no step. */
  readonly dropped_rollouts: readonly string[];
  readonly dropped_rows: readonly number[];
  /** The assertion Miles would raise instead of training this rollout step; `steps` is then empty. */
  readonly error: { readonly code: string; readonly message: string } | null;
}

/** `rollout_id` and `index` of a row (plain numbers, so the Miles oracle tests can build rows directly). */
type ScheduleRow = { readonly rollout_id: number | null; readonly index: number | null };

function failed(
  base: Omit<TrainSchedule, 'steps' | 'dropped_rollouts' | 'dropped_rows' | 'error'>,
  rowCount: number,
  code: string,
  message: string,
): TrainSchedule {
  return {
    ...base,
    steps: [],
    dropped_rollouts: [],
    dropped_rows: Array.from({ length: rowCount }, (_, i) => i),
    error: { code, message },
  };
}

/**
 * How Miles turns one rollout step's rows into optimizer steps (radixark/miles@31f1ca96):
 * - with at least `global_batch_size` distinct rollout ids, `build_dp_schedule`
 *   (miles/utils/dp_schedule.py): rollouts in order of first appearance, `#rollouts // global_batch_size`
 *   full steps of whole rollouts, the trailing rollouts dropped (or one smaller final step under
 *   `--allow-partial-train-step` when its rows reach `dp_size`); each step's loss is divided by its
 *   `num_rollouts` (miles/backends/training_utils/loss.py: loss_function);
 * - otherwise the legacy split: rows balanced over DP ranks in equal counts
 *   (`get_seqlen_balanced_partitions(..., equal_size=True)` under `--balance-data`), then each rank cuts
 *   steps of `global_batch_size / dp_size` rows (miles/backends/training_utils/data.py:
 *   get_data_iterator); the loss is divided by the global batch size. Under `--use-dynamic-batch-size`
 *   a rank whose rows are not a whole number (≥ 1) of steps trips the assertion that every local row is
 *   scheduled. Which rows land in which step depends on the sequence-length balancing and is not modelled.
 */
export function buildTrainSchedule(rows: readonly ScheduleRow[], config: TrainScheduleConfig): TrainSchedule {
  const gbs = config.global_batch_size;
  const dp = config.dp_size;
  const { order, members } = rowsByRollout(rows);
  const base = { global_batch_size: gbs, dp_size: dp, distinct_rollouts: order.length };

  if (order.length < gbs) {
    // postprocess_rollout_data trims a batch without compact rollouts to a multiple of the global batch
    // size first, and raises when not one batch is left (miles/ray/rollout/rollout_data_conversion.py).
    if (!rows.some((r) => r.rollout_id !== null))
      return failed(
        { mode: 'legacy', ...base },
        rows.length,
        'schedule.not_enough_samples',
        `Not enough samples ${rows.length} for global_batch_size ${gbs}`,
      );
    return legacySchedule(rows.length, base);
  }

  const stepSizes: number[] = Array.from({ length: Math.floor(order.length / gbs) }, () => gbs);
  const leftover = order.length - stepSizes.length * gbs;
  if (leftover > 0 && config.allow_partial_train_step) {
    const leftoverRows = order.slice(-leftover).reduce((a, id) => a + members.get(id)!.length, 0);
    if (leftoverRows >= dp) stepSizes.push(leftover);
  }
  const steps: TrainStep[] = [];
  let start = 0;
  for (const size of stepSizes) {
    const picked = order.slice(start, start + size);
    start += size;
    const stepRows = picked.flatMap((id) => members.get(id)!);
    if (stepRows.length < dp)
      return failed(
        { mode: 'rollout_side', ...base },
        rows.length,
        'schedule.step_below_dp_size',
        `step of ${size} rollouts has ${stepRows.length} samples < dp_size ${dp}; each step needs at least one sample per rank.`,
      );
    steps.push({ rollouts: picked, rows: stepRows, row_count: stepRows.length, loss_divisor: size });
  }
  const dropped = order.slice(start);
  return {
    mode: 'rollout_side',
    ...base,
    steps,
    dropped_rollouts: dropped,
    dropped_rows: dropped.flatMap((id) => members.get(id)!),
    error: null,
  };
}

function legacySchedule(
  rowCount: number,
  base: Omit<TrainSchedule, 'mode' | 'steps' | 'dropped_rollouts' | 'dropped_rows' | 'error'>,
): TrainSchedule {
  const legacy = { mode: 'legacy' as const, ...base };
  const { dp_size: dp, global_batch_size: gbs } = base;
  // get_seqlen_balanced_partitions asserts these before any row reaches a rank.
  if (rowCount < dp)
    return failed(
      legacy,
      rowCount,
      'schedule.rows_below_dp_size',
      `number of items:[${rowCount}] < k_partitions:[${dp}]`,
    );
  if (rowCount % dp !== 0)
    return failed(legacy, rowCount, 'schedule.rows_not_divisible_by_dp', `${rowCount} % ${dp} != 0`);
  const local = rowCount / dp;
  const localGbs = Math.floor(gbs / dp);
  const stepCount = localGbs > 0 ? Math.floor(local / localGbs) : 0;
  if (stepCount === 0 || stepCount * localGbs !== local)
    return failed(
      legacy,
      rowCount,
      'schedule.rows_not_whole_steps',
      `each of ${dp} ranks holds ${local} rows, not a whole number of steps of global_batch_size / dp_size = ${localGbs} rows: Miles' dynamic-batch schedule asserts that every local row is scheduled`,
    );
  return {
    ...legacy,
    steps: Array.from({ length: stepCount }, () => ({
      rollouts: null,
      rows: null,
      row_count: localGbs * dp,
      loss_divisor: gbs,
    })),
    dropped_rollouts: [],
    dropped_rows: [],
    error: null,
  };
}
