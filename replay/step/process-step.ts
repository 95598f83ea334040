import { isHarnessError } from '../../common/errors.ts';
import { DEFAULT_MILES_PROFILE, type MilesSwitches } from '../../contracts/miles-profile.ts';
import type { NormalizationConfig } from '../grpo/config.ts';
import { type RolloutLossWeight, rolloutLossWeights } from '../grpo/loss-weights.ts';
import { type NormalizedRewards, normalizeRewards } from '../grpo/normalize.ts';
import { buildTrainSchedule, type TrainSchedule, type TrainScheduleConfig } from '../grpo/train-schedule.ts';
import { type Metrics, stepMetrics } from '../metrics/step-metrics.ts';
import { retainedRows } from '../model/retained.ts';
import type { Group } from '../model/rollout.ts';
import type { ReplaySample } from '../model/sample.ts';
import type { SessionRouting } from '../model/session-routing.ts';
import { rowsMilesLogs } from './logged-rows.ts';

/** One step after the rollout side is done: what the trainer would receive, and what Miles would log. */
export interface StepOutcome {
  readonly step: number;
  /** Every group the step ran, dropped ones included, sorted by the first sample's index. */
  readonly groups: readonly Group[];
  /** The flattened post-filter rows. */
  readonly rows: readonly ReplaySample[];
  /** Null when Miles' normalisation raised (siblings disagreeing on their reward); see `error`. */
  readonly normalization: NormalizedRewards | null;
  /** Miles' advantages, aligned with `rows`; null when normalisation raised. */
  readonly advantages: readonly number[] | null;
  /** Naive per-sample normalisation, aligned with `rows`, for contrast. */
  readonly perSample: readonly number[] | null;
  /** The error Miles' conversion would have raised, if any (`code` and message). */
  readonly error: { readonly code: string; readonly message: string } | null;
  readonly lossWeights: readonly RolloutLossWeight[];
  /**
   * How the trainer splits `rows` into optimizer steps. `schedule.dropped_rollouts` / `dropped_rows`
   * (positions into `rows`) are trained in no step: another way tokens are lost besides dropped groups.
   */
  readonly schedule: TrainSchedule;
  readonly metrics: Metrics;
  readonly durationMs: number;
  /** Which session-server workers each session reached, when the workers report it (check 11). */
  readonly sessionRouting?: readonly SessionRouting[];
}

/**
 * Runs the part of `RolloutManager.generate` and `convert_samples_to_train_data` that the replay
 * models: groups sorted by their first index, flattened, rewards normalised per rollout, the train
 * schedule (optimizer steps of `global_batch_size` rollouts, leftovers dropped), loss weights and the
 * metrics Miles logs (rollout side and trainer side). Where Miles would raise (siblings disagreeing on their reward) the outcome
 * carries the error instead of advantages. Without `train`, the whole batch is one optimizer step on one
 * rank (the recipe's relation: global batch size = rollouts per step). `rolloutNumGpus` is the
 * recipe's `--rollout-num-gpus` (null: no `perf/*tokens_per_gpu_per_sec`, as Miles without it);
 * `rolloutMetrics` which Miles' metrics.py logs the step (a Miles profile's switch).
 */
export function processStep(
  step: number,
  groups: readonly Group[],
  config: NormalizationConfig,
  durationMs: number,
  train?: TrainScheduleConfig,
  rolloutNumGpus: number | null = null,
  rolloutMetrics: MilesSwitches['rolloutMetrics'] = DEFAULT_MILES_PROFILE.switches.rolloutMetrics,
): StepOutcome {
  // bounded-spread: a group's rollouts (n_samples_per_prompt)
  const firstIndex = (g: Group) => Math.min(...g.rollouts.map((r) => r.index));
  const sorted = [...groups].sort((a, b) => firstIndex(a) - firstIndex(b));
  const rows = retainedRows(sorted);
  const trainConfig = train ?? {
    global_batch_size: config.rollout_batch_size * config.n_samples_per_prompt,
    dp_size: 1,
    allow_partial_train_step: false,
  };
  const metrics = stepMetrics({
    step,
    rows: rowsMilesLogs(rows, trainConfig.global_batch_size),
    // `check_no_aborted` is the recipe's filter; a group whose task raised never reaches it.
    dropReasons: groups.flatMap((g) => (g.dropped === 'group_has_aborted' ? [g.dropped] : [])),
    rolloutTimeS: durationMs / 1000,
    args: {
      advantage_estimator: config.advantage_estimator,
      rollout_num_gpus: rolloutNumGpus,
      use_session_server: 'v2',
    },
    rolloutMetrics,
  });
  const schedule = buildTrainSchedule(rows, trainConfig);
  let normalization: NormalizedRewards;
  let perSample: readonly number[];
  try {
    normalization = normalizeRewards(rows, config);
    perSample = normalizeRewards(rows, config, 'row').normalized;
  } catch (error) {
    // Miles' conversion would raise here; keep the step so the report and the checks can show why.
    if (!isHarnessError(error)) throw error;
    return {
      step,
      groups: sorted,
      rows,
      normalization: null,
      advantages: null,
      perSample: null,
      error: { code: error.code, message: error.message },
      lossWeights: [],
      schedule,
      metrics,
      durationMs,
    };
  }
  return {
    step,
    groups: sorted,
    rows,
    normalization,
    advantages: normalization.normalized,
    perSample,
    error: null,
    lossWeights: rolloutLossWeights(rows, normalization.normalized, perSample, schedule),
    schedule,
    metrics,
    durationMs,
  };
}
