import { rolloutIdentity } from '../model/rollout-key.ts';
import { effectiveLossMask, type ReplaySample } from '../model/sample.ts';
import type { TrainSchedule } from './train-schedule.ts';

type WeightRow = Pick<
  ReplaySample,
  'rollout_id' | 'index' | 'loss_mask' | 'response_length' | 'remove_sample'
>;

/**
 * The trainer's rollout id column (`rolloutIdentity`, replay/model/rollout-key.ts) as a map key; a row
 * with neither id, where Miles would carry None, stands alone as `row:<position>`.
 */
export function trainRolloutId(
  row: { readonly rollout_id: number | null; readonly index: number | null },
  position: number,
): string {
  const identity = rolloutIdentity(row, position);
  return identity.kind === 'position' ? `row:${identity.id}` : String(identity.id);
}

/** The rows' trainer rollout ids in order of first appearance, and each id's row positions. */
export function rowsByRollout(
  rows: readonly { readonly rollout_id: number | null; readonly index: number | null }[],
): { readonly order: string[]; readonly members: Map<string, number[]> } {
  const order: string[] = [];
  const members = new Map<string, number[]>();
  rows.forEach((row, position) => {
    const id = trainRolloutId(row, position);
    const list = members.get(id);
    if (list) list.push(position);
    else {
      members.set(id, [position]);
      order.push(id);
    }
  });
  return { order, members };
}

/**
 * `_compute_rollout_mask_sums`: every row carries Σ loss_mask over all rows with its rollout id in the
 * whole batch, after `remove_sample` zeroing. Keyed by the id only, not `group_index`, exactly as Miles.
 */
export function rolloutMaskSums(rows: readonly WeightRow[]): number[] {
  const sums = new Map<string, number>();
  const rowSums = rows.map((row) => effectiveLossMask(row).reduce((a, m) => a + m, 0));
  rows.forEach((row, position) => {
    const id = trainRolloutId(row, position);
    sums.set(id, (sums.get(id) ?? 0) + rowSums[position]!);
  });
  return rows.map((row, position) => sums.get(trainRolloutId(row, position))!);
}

/** What one rollout contributes to the step's policy loss (ratio 1, no clipping). */
export interface RolloutLossWeight {
  readonly rollout: string;
  readonly rows: readonly number[];
  /** M_r: trainable tokens over all its segments. */
  readonly mask_sum: number;
  /**
   * The optimizer step (of this rollout step) that trains it; null on the legacy schedule (rows are
   * balanced over steps by length) and when the schedule drops it.
   */
  readonly train_step: number | null;
  /** False when the schedule drops this rollout: its tokens train in no step and weigh 0. */
  readonly trained: boolean;
  /** R_step: what its loss is divided by (the step's rollouts, or the global batch size on the legacy schedule). */
  readonly loss_divisor: number | null;
  /** A_r / (R_step · max(M_r, 1)): the weight of each trainable token. */
  readonly per_token: number;
  /** Σ over its trainable tokens: A_r / R_step, or 0 when M_r = 0 or the rollout is dropped. */
  readonly total: number;
  /** The naive per-row scheme for contrast: Σ_rows A_row / N_rows (each row a token-mean). */
  readonly naive_total: number;
}

/**
 * Per-rollout loss weighting in Miles' default per-rollout mode (radixark/miles@31f1ca96
 * miles/backends/training_utils/loss.py `loss_function`, loss_hub/losses.py `policy_loss_function`): each
 * row's token sum is divided by its rollout's mask sum and the step by the number of rollouts, so every
 * rollout weighs one token-mean however many segments it has. R_step comes from the train schedule
 * (`buildTrainSchedule`); without one, the whole batch is one step.
 */
export function rolloutLossWeights(
  rows: readonly WeightRow[],
  advantages: readonly number[],
  naiveAdvantages: readonly number[],
  schedule?: TrainSchedule,
): RolloutLossWeight[] {
  const maskSums = rolloutMaskSums(rows);
  const { order, members } = rowsByRollout(rows);
  const stepOf = new Map<string, { index: number; divisor: number }>();
  schedule?.steps.forEach((step, index) => {
    for (const id of step.rollouts ?? []) stepOf.set(id, { index, divisor: step.loss_divisor });
  });
  const dropped = new Set(schedule?.dropped_rollouts ?? []);
  const rowCount = rows.length;
  return order.map((id) => {
    const positions = members.get(id)!;
    const first = positions[0]!;
    const maskSum = maskSums[first]!;
    const advantage = advantages[first] ?? 0;
    const placed = stepOf.get(id);
    const divisor = !schedule
      ? order.length
      : schedule.error !== null || dropped.has(id)
        ? null
        : (placed?.divisor ?? schedule.global_batch_size);
    const perToken = divisor === null ? 0 : advantage / (divisor * Math.max(maskSum, 1));
    let naive = 0;
    for (const p of positions) {
      const rowMask = effectiveLossMask(rows[p]!).reduce((a, m) => a + m, 0);
      if (rowMask > 0) naive += (naiveAdvantages[p] ?? 0) / rowCount;
    }
    return {
      rollout: id,
      rows: positions,
      mask_sum: maskSum,
      train_step: placed?.index ?? (schedule ? null : 0),
      trained: divisor !== null,
      loss_divisor: divisor,
      per_token: perToken,
      total: perToken * maskSum,
      naive_total: naive,
    };
  });
}
