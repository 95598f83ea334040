import { HarnessError } from '../../common/errors.ts';
import { type ReplaySample, ReplaySampleSchema } from '../model/sample.ts';
import type { DumpSample, TrainDump } from './dump-schema.ts';

/** What the dumps do not say but the checks need: the run's group shape and reward flags. */
export interface DumpRunShape {
  readonly n_samples_per_prompt: number;
  readonly rollout_batch_size: number;
  /** `--reward-key`, when rewards are dicts. */
  readonly reward_key?: string;
}

/** The raw reward as Miles reads it (`get_reward_value`): the number, or the `--reward-key` entry. */
function rewardValue(sample: DumpSample, rewardKey: string | undefined): number | null {
  const { reward } = sample;
  if (typeof reward === 'number') return reward;
  if (reward !== null && rewardKey !== undefined) {
    const value = reward[rewardKey];
    return typeof value === 'number' ? value : null;
  }
  return null;
}

/** The dumped fields the rollout-side metrics read (replay/model/sample.ts), where present and well-formed. */
function optionalFields(sample: DumpSample): Partial<ReplaySample> {
  const raw = sample as Record<string, unknown>;
  const out: Partial<ReplaySample> = {};
  if (typeof raw.response === 'string') out.response = raw.response;
  const cache = raw.prefix_cache_info as
    | { cached_tokens?: unknown; total_prompt_tokens?: unknown }
    | undefined;
  if (cache && Number.isInteger(cache.cached_tokens) && Number.isInteger(cache.total_prompt_tokens))
    out.prefix_cache_info = {
      cached_tokens: cache.cached_tokens as number,
      total_prompt_tokens: cache.total_prompt_tokens as number,
    };
  // As dumped: a version per call (31f1ca96) or a list of spans per call (newer); the metrics read
  // either (replay/metrics/logged-sample.ts `versionsOf`).
  if (Array.isArray(raw.weight_versions)) out.weight_versions = raw.weight_versions;
  if (typeof raw.non_generation_time === 'number') out.non_generation_time = raw.non_generation_time;
  // The converter names the reward's Python type (convert_dumps.py `with_reward_type`).
  if (raw.reward_python_type === 'int' || raw.reward_python_type === 'float')
    out.reward_type = raw.reward_python_type;
  return out;
}

/** One dumped `Sample.to_dict()` in the replay's data model. */
export function dumpSampleToReplay(sample: DumpSample, rewardKey?: string): ReplaySample {
  const logProbs = (sample as { rollout_log_probs?: unknown }).rollout_log_probs;
  const parsed = ReplaySampleSchema.safeParse({
    group_index: sample.group_index,
    index: sample.index,
    rollout_id: sample.rollout_id,
    tokens: sample.tokens,
    response_length: sample.response_length,
    loss_mask: sample.loss_mask,
    // The converter turns non-finite floats into null; the checks do not read log probs.
    rollout_log_probs:
      Array.isArray(logProbs) && logProbs.every((v) => typeof v === 'number') ? (logProbs as number[]) : null,
    status: sample.status,
    reward: rewardValue(sample, rewardKey),
    remove_sample: sample.remove_sample,
    metadata: sample.metadata,
    // What only the rollout-side metrics read, when the dump carries it (Sample.to_dict has every field).
    ...optionalFields(sample),
  });
  if (!parsed.success)
    throw new HarnessError(
      'dumps.invalid',
      `a dumped sample does not fit the replay's model: ${parsed.error.message}`,
    );
  return parsed.data;
}

const rowIdentity = (rolloutId: number, index: number | null, tokens: readonly number[]): string =>
  `${rolloutId}|${index ?? ''}|${tokens.join(',')}`;

/**
 * The advantage each retained row trained with, in the checks' row order, read from the step's train
 * shards (`rewards` is the normalised reward GRPO uses as the advantage). Rows are matched by trainer
 * id, sample index and tokens. A row with no train row is null: Miles' schedule drops trailing rollouts
 * when the global batch size does not divide the step's rollouts. The whole list is null when the
 * shards cannot say (no shards, no `rollout_ids` column, or not one row matched).
 */
export function advantagesFromShards(
  rows: readonly ReplaySample[],
  shards: readonly TrainDump[],
): (number | null)[] | null {
  if (shards.length === 0) return null;
  const byIdentity = new Map<string, number | null>();
  for (const shard of shards) {
    const d = shard.rollout_data;
    if (!d.rollout_ids) return null;
    d.tokens.forEach((tokens, row) => {
      byIdentity.set(
        rowIdentity(d.rollout_ids![row]!, d.sample_indices?.[row] ?? null, tokens),
        d.rewards[row] ?? null,
      );
    });
  }
  const out: (number | null)[] = [];
  for (const row of rows) {
    const value = byIdentity.get(rowIdentity(row.rollout_id ?? row.index ?? -1, row.index, row.tokens));
    // A train row whose reward was not finite (converted to null) cannot be checked either.
    if (value === null) return null;
    out.push(value ?? null);
  }
  return out.some((v) => v !== null) ? out : null;
}
