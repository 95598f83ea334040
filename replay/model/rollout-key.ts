/**
 * Which row belongs to which rollout: Miles' one rule, used by the trainer's `rollout_ids` column and
 * `_compute_rollout_mask_sums`, by `_normalize_rewards_by_rollout` (radixark/miles@31f1ca96
 * miles/ray/rollout/train_data_conversion.py) and by the rollout metrics' `_get_rollout_key`
 * (radixark/miles@0174ab47 miles/ray/rollout/metrics.py): the `rollout_id` the siblings of a compacted
 * episode share when it is set, else the prompt copy's `index`, else the row's own position in the batch.
 * Each caller prints the identity its own way (a trainer id, a Python tuple, a metrics key).
 */

/** The two id columns the rule reads. */
interface RolloutIdColumns {
  readonly rollout_id: number | null;
  readonly index: number | null;
}

/** Which column named the rollout, and its value (the row's position when neither id is set). */
export interface RolloutIdentity {
  readonly kind: 'rollout' | 'sample' | 'position';
  readonly id: number;
}

export function rolloutIdentity(row: RolloutIdColumns, position: number): RolloutIdentity {
  if (row.rollout_id !== null) return { kind: 'rollout', id: row.rollout_id };
  if (row.index !== null) return { kind: 'sample', id: row.index };
  return { kind: 'position', id: position };
}

/**
 * The trainer's rollout id (`rollout_ids`): `rollout_id`, else `index`; null where a row has neither
 * (Miles would carry None there). A rollout, whose `index` is always set, always has one.
 */
export function rolloutKey(row: { readonly rollout_id: number | null; readonly index: number }): number;
export function rolloutKey(row: RolloutIdColumns): number | null;
export function rolloutKey(row: RolloutIdColumns): number | null {
  const identity = rolloutIdentity(row, -1);
  return identity.kind === 'position' ? null : identity.id;
}
