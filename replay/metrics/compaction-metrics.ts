import { z } from 'zod';
import { rolloutIdentity } from '../model/rollout-key.ts';
import { effectiveResponseLength, type ReplaySample } from '../model/sample.ts';
import { computeStatistics } from './statistics.ts';

/**
 * The compaction-aware metrics the trainer logs from the rows it receives, keyed by Miles' names
 * (radixark/miles@0174ab47 miles/ray/rollout/metrics.py, PRs #2710 and #2765; docs/replay.md "What one
 * step does"). What the rollout side logs (`log_rollout_data`) is in
 * rollout-log.ts; a step's metrics are both (step-metrics.ts).
 */
export const CompactionMetricsSchema = z.object({
  'rollout/num_training_samples': z.number(),
  'rollout/episode_raw_reward': z.number(),
  'rollout/episode_response_length/mean': z.number(),
  'rollout/episode_response_length/median': z.number(),
  'rollout/episode_response_length/max': z.number(),
  'rollout/episode_response_length/min': z.number(),
  'rollout/episode_total_response_length/mean': z.number(),
  'rollout/raw_reward': z.number(),
});
export type CompactionMetrics = z.infer<typeof CompactionMetricsSchema>;

type MetricRow = Pick<
  ReplaySample,
  | 'group_index'
  | 'index'
  | 'rollout_id'
  | 'reward'
  | 'status'
  | 'loss_mask'
  | 'response_length'
  | 'remove_sample'
  | 'metadata'
>;

/**
 * `_get_rollout_key`: `(kind, group_index, id)` of the rollout identity, so episodes are scoped by prompt
 * group and keep the "rollout" and "sample" kinds apart, unlike the trainer's id column.
 */
export function metricRolloutKey(row: MetricRow, position: number): string {
  const { kind, id } = rolloutIdentity(row, position);
  return `${kind}:${row.group_index}:${id}`;
}

/**
 * The logged reward of a row: `metadata.raw_reward` when the batch's first row carries one
 * (radixark/miles@31f1ca96 miles/ray/rollout/train_data_conversion.py).
 */
function loggedRewards(rows: readonly MetricRow[]): (number | null)[] {
  const override = rows.length > 0 && Object.hasOwn(rows[0]!.metadata, 'raw_reward');
  return rows.map((row) => {
    const value = override ? row.metadata.raw_reward : row.reward;
    return typeof value === 'number' && Number.isFinite(value) ? value : null;
  });
}

/**
 * Computes the metrics from the flattened, post-filter rows of one step (the list Miles dumps to
 * `rollout_data/<step>.pt`). Shared prefixes are counted once only through the ownership masking: the
 * metrics do no token matching of their own, exactly like Miles.
 */
export function computeCompactionMetrics(rows: readonly MetricRow[]): CompactionMetrics {
  const rewards = loggedRewards(rows);
  const episodes = new Map<string, { rewards: number[]; trainable: number; total: number }>();
  rows.forEach((row, position) => {
    const key = metricRolloutKey(row, position);
    let episode = episodes.get(key);
    if (!episode) {
      episode = { rewards: [], trainable: 0, total: 0 };
      episodes.set(key, episode);
    }
    const reward = rewards[position];
    if (reward !== null && reward !== undefined) episode.rewards.push(reward);
    episode.trainable += row.remove_sample ? 0 : effectiveResponseLength(row);
    episode.total += row.response_length;
  });
  const all = [...episodes.values()];
  // An episode's reward is the mean of its rows: differing siblings are averaged silently (as metrics.py
  // does).
  const episodeRewards = all
    .filter((e) => e.rewards.length > 0)
    .map((e) => e.rewards.reduce((a, v) => a + v, 0) / e.rewards.length);
  const episodeLength = computeStatistics(all.map((e) => e.trainable));
  const rowRewards = rewards.filter((r): r is number => r !== null);
  const mean = (xs: readonly number[]) => (xs.length === 0 ? 0 : xs.reduce((a, v) => a + v, 0) / xs.length);
  return {
    'rollout/num_training_samples': rows.length,
    'rollout/episode_raw_reward': mean(episodeRewards),
    'rollout/episode_response_length/mean': episodeLength.mean,
    'rollout/episode_response_length/median': episodeLength.median,
    'rollout/episode_response_length/max': episodeLength.max,
    'rollout/episode_response_length/min': episodeLength.min,
    'rollout/episode_total_response_length/mean': mean(all.map((e) => e.total)),
    'rollout/raw_reward': mean(rowRewards),
  };
}
