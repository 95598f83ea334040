import { z } from 'zod';
import { DEFAULT_MILES_PROFILE, type MilesSwitches } from '../../contracts/miles-profile.ts';
import { episodeMetrics } from './compaction-metrics.ts';
import { dynamicFilterMetrics } from './dynamic-filter.ts';
import { type LoggedSample, loggedEffectiveLength } from './logged-sample.ts';
import { numpyMean } from './numpy-sum.ts';
import { passRateFromSamples } from './pass-rate.ts';
import { perfMetrics } from './perf.ts';
import { prefixCacheMetrics } from './prefix-cache.ts';
import { repetitionFrac } from './repetition.ts';
import { computeStatistics } from './statistics.ts';
import { titoMismatchMetrics } from './tito-mismatch.ts';
import { weightVersionMetrics } from './weight-version.ts';
import { zeroStdMetrics } from './zero-std.ts';

/** The Miles arguments `log_rollout_data` reads, at the recipe's values (the rest are Miles' defaults). */
export interface RolloutLogArgs {
  readonly advantage_estimator: string;
  /** `--rollout-num-gpus`; colocated, the actor's nodes × GPUs per node. */
  readonly rollout_num_gpus: number | null;
  readonly use_session_server: 'v1' | 'v2';
  /** `--log-passrate` (the recipe leaves it off): `passrate/pass@<k>` over `n_samples_per_prompt`. */
  readonly log_passrate?: boolean;
  readonly n_samples_per_prompt?: number;
}

/**
 * The keys `log_rollout_data` (radixark/miles@31f1ca96 miles/ray/rollout/metrics.py, and the newer
 * metrics.py under `rolloutMetrics: 'normalised'`) logs with the recipe's flags (no speculative
 * decoding, no reward category, no custom log function). Keys whose name carries a value
 * (`zero_std/count_<reward>`, `dynamic_filter/drop_<reason>`, `passrate/pass@<k>`) or that appear only
 * with the data or the Miles for them are optional.
 */
export const RolloutLogMetricsSchema = z
  .object({
    'rollout/step': z.number().int(),
    'rollout/response_len/mean': z.number(),
    'rollout/response_len/median': z.number(),
    'rollout/response_len/max': z.number(),
    'rollout/response_len/min': z.number(),
    'rollout/truncated_ratio': z.number(),
    'rollout/repetition_frac': z.number(),
    'rollout/zero_std/all_zero_percentage': z.number().optional(),
    'rollout/zero_std/all_one_percentage': z.number().optional(),
    'rollout/zero_std/percentage': z.number().optional(),
    'rollout/zero_std/all_negative_one_percentage': z.number().optional(),
    'rollout/prefix_cache_hit_rate': z.number(),
    'rollout/avg_cached_tokens_per_sample': z.number(),
    'rollout/tito_session_mismatch_rate/v2': z.number().optional(),
    'rollout/tito_session_mismatch_rate/v2/special_token_count': z.number().optional(),
    'rollout/tito_session_mismatch_rate/v2/special_token_type': z.number().optional(),
    'rollout/tito_session_mismatch_rate/v2/non_assistant_text': z.number().optional(),
    'rollout/tito_session_mismatch_rate/v2/assistant_text': z.number().optional(),
    'rollout/weight_version/mean': z.number().optional(),
    'rollout/weight_version/median': z.number().optional(),
    'rollout/weight_version/max': z.number().optional(),
    'rollout/weight_version/min': z.number().optional(),
    'rollout/weight_version/mixed_version_ratio': z.number().optional(),
    'perf/rollout_time': z.number(),
    'perf/tokens_per_gpu_per_sec': z.number().optional(),
    'perf/effective_tokens_per_gpu_per_sec': z.number().optional(),
    'perf/longest_sample_tokens_per_sec': z.number(),
    'perf/longest_effective_sample_tokens_per_sec': z.number(),
    'perf/non_generation_time/mean': z.number().optional(),
    'perf/non_generation_time/median': z.number().optional(),
    'perf/non_generation_time/max': z.number().optional(),
    'perf/non_generation_time/min': z.number().optional(),
    'perf/longest_sample_non_generation_time': z.number().optional(),
    'perf/longest_sample_tokens_per_sec_without_non_generation': z.number().optional(),
    'perf/longest_effective_sample_non_generation_time': z.number().optional(),
    'perf/longest_effective_sample_tokens_per_sec_without_non_generation': z.number().optional(),
  })
  .catchall(z.number().optional());

/** The logged keys whose name carries a value; any other key outside the schema's list is refused. */
export const VALUE_NAMED_METRIC =
  /^(rollout\/(zero_std\/count_|dynamic_filter\/drop_)\S+|passrate\/pass@\d+)$/;

export type RolloutLogMetrics = z.infer<typeof RolloutLogMetricsSchema>;

export interface RolloutLogInput {
  /** Miles' rollout id (the replay's step number). */
  readonly rolloutId: number;
  readonly args: RolloutLogArgs;
  /** The flattened post-filter rows, sorted as Miles sorts the kept groups. */
  readonly samples: readonly LoggedSample[];
  /** The dynamic filter's reason for each group it dropped, in the order it dropped them. */
  readonly dropReasons: readonly (string | null)[];
  /** Seconds from the start of `RolloutManager.generate` to the call. */
  readonly rolloutTime: number;
  /** Which Miles' metrics.py: 31f1ca96's, or the newer one (normalised zero-std, episodes logged here). */
  readonly rolloutMetrics?: MilesSwitches['rolloutMetrics'];
}

/**
 * `log_rollout_data` for a step: the rollout function's extra metrics (the filter's drop counts), then
 * `rollout/*` (`_compute_metrics_from_samples`; the newer one starts with the episode metrics keyed with
 * the adapter), `perf/*`, `passrate/*` under `--log-passrate`, and `rollout/step` (the rollout id: the
 * recipe leaves `--wandb-always-use-train-step` off). Miles never logs an empty step (it keeps drawing
 * prompts until the batch is full); the replay caps its refill, so a step can have no rows: it then logs
 * zeros where Miles would divide by nothing (as the replay always has for `response_len/*`).
 */
export function rolloutLogMetrics(input: RolloutLogInput): RolloutLogMetrics {
  const { samples, args } = input;
  const mode = input.rolloutMetrics ?? DEFAULT_MILES_PROFILE.switches.rolloutMetrics;
  const out: Record<string, number> = { ...dynamicFilterMetrics(input.dropReasons) };
  if (mode === 'normalised') Object.assign(out, episodeMetrics(samples, { adapterScoped: true }));
  const rollout: Record<string, number> = {};
  const lengths = computeStatistics(samples.map(loggedEffectiveLength));
  rollout['response_len/mean'] = lengths.mean;
  rollout['response_len/median'] = lengths.median;
  rollout['response_len/max'] = lengths.max;
  rollout['response_len/min'] = lengths.min;
  Object.assign(rollout, zeroStdMetrics(samples, args.advantage_estimator, mode));
  if (samples.length > 0) Object.assign(rollout, prefixCacheMetrics(samples));
  else Object.assign(rollout, { prefix_cache_hit_rate: 0, avg_cached_tokens_per_sample: 0 });
  rollout.repetition_frac = samples.length > 0 ? repetitionFrac(samples) : 0;
  rollout.truncated_ratio =
    samples.length > 0 ? numpyMean(samples.map((s) => (s.status === 'truncated' ? 1 : 0))) : 0;
  Object.assign(rollout, weightVersionMetrics(samples));
  Object.assign(rollout, titoMismatchMetrics(samples, args.use_session_server));
  for (const [k, v] of Object.entries(rollout)) out[`rollout/${k}`] = v;
  const perf =
    samples.length > 0
      ? perfMetrics(samples, input.rolloutTime, args.rollout_num_gpus)
      : {
          rollout_time: input.rolloutTime,
          longest_sample_tokens_per_sec: 0,
          longest_effective_sample_tokens_per_sec: 0,
        };
  for (const [k, v] of Object.entries(perf)) out[`perf/${k}`] = v;
  if (args.log_passrate && args.n_samples_per_prompt !== undefined)
    for (const [k, v] of Object.entries(passRateFromSamples(samples, args.n_samples_per_prompt)))
      out[`passrate/${k}`] = v;
  out['rollout/step'] = input.rolloutId;
  return out as RolloutLogMetrics;
}
