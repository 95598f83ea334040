import { z } from 'zod';
import { rolloutIdentity } from '../model/rollout-key.ts';
import type { ReplaySample } from '../model/sample.ts';
import { loggedEffectiveLength } from './logged-sample.ts';
import { numpyMean } from './numpy-sum.ts';
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

/** What the episode metrics read of a row (a replay row, or a row as `log_rollout_data` sees it). */
type MetricRow = Pick<ReplaySample, 'response_length' | 'remove_sample' | 'metadata'> & {
  readonly loss_mask: readonly number[] | null;
  readonly group_index: number | null;
  readonly index: number | null;
  readonly rollout_id: number | null;
  readonly reward: number | null;
  readonly adapter?: string | null | undefined;
};

/** How a step's episodes are told apart (`MilesSwitches.rolloutMetrics`). */
export interface EpisodeKeying {
  /**
   * The newer metrics.py scopes each key by the sample's LoRA adapter (Multi-LoRA data sources number
   * their rollouts independently, PR #2778) and logs no `episode_response_length/*` when any sample has
   * one; 31f1ca96's keys have no adapter.
   */
  readonly adapterScoped: boolean;
}

/**
 * `_get_rollout_key`: `(kind, group_index, id)` of the rollout identity (replay/model/rollout-key.ts), so
 * episodes are scoped by prompt group (and, adapter-scoped, by adapter) and keep the "rollout" and "sample"
 * kinds apart, unlike the trainer's id column.
 */
export function metricRolloutKey(row: MetricRow, position: number, keying?: EpisodeKeying): string {
  const scope = keying?.adapterScoped ? `${JSON.stringify(row.adapter ?? null)}|` : '';
  const { kind, id } = rolloutIdentity(row, position);
  return `${scope}${kind}:${row.group_index}:${id}`;
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
export function computeCompactionMetrics(
  rows: readonly MetricRow[],
  keying: EpisodeKeying = { adapterScoped: false },
): CompactionMetrics {
  const rewardOf = loggedRewards(rows);
  const rowRewards = rewardOf.filter((r): r is number => r !== null);
  const mean = (xs: readonly number[]) => (xs.length === 0 ? 0 : xs.reduce((a, v) => a + v, 0) / xs.length);
  const episodes = episodeMetrics(rows, keying);
  return {
    ...episodes,
    // Only the adapter-scoped keying leaves these out (when a row has an adapter); the replay has none.
    'rollout/episode_response_length/mean': episodes['rollout/episode_response_length/mean'] ?? 0,
    'rollout/episode_response_length/median': episodes['rollout/episode_response_length/median'] ?? 0,
    'rollout/episode_response_length/max': episodes['rollout/episode_response_length/max'] ?? 0,
    'rollout/episode_response_length/min': episodes['rollout/episode_response_length/min'] ?? 0,
    'rollout/episode_total_response_length/mean': episodes['rollout/episode_total_response_length/mean'] ?? 0,
    'rollout/raw_reward': mean(rowRewards),
  };
}

/**
 * `_compute_training_sample_metrics` and `_compute_episode_response_length_metrics`: the row count, the
 * mean over episodes of each episode's mean reward, and statistics of each episode's trainable and total
 * response tokens. Adapter-scoped, a row with an adapter drops the length keys.
 */
export function episodeMetrics(
  rows: readonly MetricRow[],
  keying: EpisodeKeying,
): Record<string, number> & { 'rollout/num_training_samples': number; 'rollout/episode_raw_reward': number } {
  const rewards = loggedRewards(rows);
  const episodes = new Map<string, { rewards: number[]; trainable: number; total: number }>();
  rows.forEach((row, position) => {
    const key = metricRolloutKey(row, position, keying);
    let episode = episodes.get(key);
    if (!episode) {
      episode = { rewards: [], trainable: 0, total: 0 };
      episodes.set(key, episode);
    }
    const reward = rewards[position];
    if (reward !== null && reward !== undefined) episode.rewards.push(reward);
    episode.trainable += row.remove_sample ? 0 : loggedEffectiveLength(row);
    episode.total += row.response_length;
  });
  const all = [...episodes.values()];
  // An episode's reward is the mean of its rows: differing siblings are averaged silently (as metrics.py
  // does).
  const episodeRewards = all
    .filter((e) => e.rewards.length > 0)
    .map((e) => e.rewards.reduce((a, v) => a + v, 0) / e.rewards.length);
  const counted = {
    'rollout/num_training_samples': rows.length,
    'rollout/episode_raw_reward':
      episodeRewards.length === 0 ? 0 : episodeRewards.reduce((a, v) => a + v, 0) / episodeRewards.length,
  };
  const adapted = keying.adapterScoped && rows.some((r) => (r.adapter ?? null) !== null);
  if (adapted) return counted;
  const episodeLength = computeStatistics(all.map((e) => e.trainable));
  return {
    ...counted,
    'rollout/episode_response_length/mean': episodeLength.mean,
    'rollout/episode_response_length/median': episodeLength.median,
    'rollout/episode_response_length/max': episodeLength.max,
    'rollout/episode_response_length/min': episodeLength.min,
    'rollout/episode_total_response_length/mean': numpyMeanOrZero(all.map((e) => e.total)),
  };
}

/** `np.mean(...).item()` of the totals (numpy's order; the replay's empty step logs 0). */
function numpyMeanOrZero(values: readonly number[]): number {
  return values.length === 0 ? 0 : numpyMean(values);
}
