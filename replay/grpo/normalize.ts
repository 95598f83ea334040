import { HarnessError } from '../../common/errors.ts';
import { rolloutIdentity } from '../model/rollout-key.ts';
import { effectiveNormalization, type NormalizationConfig } from './config.ts';
import { f32, meanF32, pyFloat, stdF32 } from './float32.ts';
import { type RewardRow, rewardGroupSegments } from './reward-groups.ts';

/** How rows are bucketed into GRPO members: Miles' per-rollout rule, or the naive per-row one for contrast. */
export type MemberMode = 'rollout' | 'row';

/** One GRPO member (a rollout, or a row in `row` mode) of one group. */
interface MemberNormalization {
  /** Miles' rollout key as it would print it: `21`, or `('row', 3)` when neither id is set. */
  readonly key: string;
  readonly rows: readonly number[];
  readonly reward: number;
  readonly advantage: number;
}

interface GroupNormalization {
  readonly rows: readonly number[];
  readonly members: readonly MemberNormalization[];
  readonly mean: number;
  /** The unbiased std the advantages were divided by (plus 1e-6), or null when no division happened. */
  readonly std: number | null;
}

export interface NormalizedRewards {
  readonly raw: readonly number[];
  /** Aligned with the rows: the value broadcast to every sibling of a member. */
  readonly normalized: readonly number[];
  readonly groups: readonly GroupNormalization[];
}

function memberKey(row: RewardRow, position: number, mode: MemberMode): string {
  const identity = rolloutIdentity(row, position);
  return mode === 'rollout' && identity.kind !== 'position' ? String(identity.id) : `('row', ${position})`;
}

function rawRewards(rows: readonly RewardRow[]): number[] {
  return rows.map((row, position) => {
    if (row.reward === null)
      throw new HarnessError(
        'grpo.null_reward',
        `row ${position} has no reward (an ABORTED sample that check_no_aborted should have dropped)`,
        { details: { row: position } },
      );
    return row.reward;
  });
}

function normalizeGroup(
  rows: readonly RewardRow[],
  raw: readonly number[],
  positions: readonly number[],
  config: NormalizationConfig,
  mode: MemberMode,
): GroupNormalization {
  const buckets = new Map<string, number[]>();
  for (const position of positions) {
    const key = memberKey(rows[position]!, position, mode);
    const bucket = buckets.get(key);
    if (bucket) bucket.push(position);
    else buckets.set(key, [position]);
  }
  const keys = [...buckets.keys()];
  const rewards = keys.map((key) => {
    const segments = buckets.get(key)!;
    const siblingRewards = segments.map((p) => raw[p]!);
    if (siblingRewards.some((r) => r !== siblingRewards[0]))
      throw new HarnessError(
        'grpo.sibling_reward_mismatch',
        `all samples in rollout ${key} must share one reward; rows [${segments.join(', ')}] have rewards [${siblingRewards.map(pyFloat).join(', ')}]`,
        { details: { rollout_key: key, rows: segments, rewards: siblingRewards } },
      );
    return f32(siblingRewards[0]!);
  });
  const mean = meanF32(rewards);
  let advantages = rewards.map((r) => f32(r - mean));
  let std: number | null = null;
  const stdApplies =
    (config.advantage_estimator === 'grpo' || config.advantage_estimator === 'gspo') &&
    config.grpo_std_normalization &&
    rewards.length > 1;
  if (stdApplies) {
    const s = stdF32(rewards);
    // Miles divides only when the std is positive: a zero-std group stays all zeros.
    if (s > 0) {
      const denominator = f32(s + 1e-6);
      advantages = advantages.map((a) => f32(a / denominator));
      std = s;
    }
  }
  return {
    rows: positions,
    mean,
    std,
    members: keys.map((key, i) => ({
      key,
      rows: buckets.get(key)!,
      reward: rewards[i]!,
      advantage: advantages[i]!,
    })),
  };
}

/**
 * `_post_process_rewards` with `_normalize_rewards_by_rollout` (radixark/miles@31f1ca96
 * miles/ray/rollout/train_data_conversion.py): group by `group_index`, one reward per rollout (siblings
 * that disagree raise), mean-centre, divide by unbiased std + 1e-6 when std normalisation applies, and
 * broadcast each rollout's value to all its rows. `mode: 'row'` treats every row as its own member: the
 * naive per-sample normalisation of the older upstream code, reported for contrast only.
 */
export function normalizeRewards(
  rows: readonly RewardRow[],
  config: NormalizationConfig,
  mode: MemberMode = 'rollout',
): NormalizedRewards {
  const effective = effectiveNormalization(config);
  const raw = rawRewards(rows);
  const applies =
    effective.rewards_normalization &&
    (effective.advantage_estimator === 'grpo' ||
      effective.advantage_estimator === 'gspo' ||
      effective.advantage_estimator === 'reinforce_plus_plus_baseline');
  if (!applies) return { raw, normalized: [...raw], groups: [] };
  const normalized = new Array<number>(rows.length).fill(0);
  const groups = rewardGroupSegments(rows, effective).map((positions) =>
    normalizeGroup(rows, raw, positions, effective, mode),
  );
  for (const group of groups)
    for (const member of group.members) for (const row of member.rows) normalized[row] = member.advantage;
  return { raw, normalized, groups };
}
