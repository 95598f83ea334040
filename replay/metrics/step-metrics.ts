import { z } from 'zod';
import { DEFAULT_MILES_PROFILE, type MilesSwitches } from '../../contracts/miles-profile.ts';
import type { ReplaySample } from '../model/sample.ts';
import { CompactionMetricsSchema, computeCompactionMetrics } from './compaction-metrics.ts';
import { toLoggedSample } from './logged-sample.ts';
import {
  type RolloutLogArgs,
  RolloutLogMetricsSchema,
  rolloutLogMetrics,
  VALUE_NAMED_METRIC,
} from './rollout-log.ts';

/**
 * A step's metrics, keyed by Miles' names: what the rollout side logs (`log_rollout_data`,
 * rollout-log.ts) and the compaction-aware metrics the trainer logs (compaction-metrics.ts). Beyond the
 * listed keys only the value-named ones (`rollout/zero_std/count_<reward>`,
 * `rollout/dynamic_filter/drop_<reason>`) are allowed.
 */
export const MetricsSchema = CompactionMetricsSchema.extend(RolloutLogMetricsSchema.shape)
  .catchall(z.number().optional())
  .superRefine((metrics, ctx) => {
    const listed = new Set([
      ...Object.keys(CompactionMetricsSchema.shape),
      ...Object.keys(RolloutLogMetricsSchema.shape),
    ]);
    for (const key of Object.keys(metrics))
      if (!listed.has(key) && !VALUE_NAMED_METRIC.test(key))
        ctx.addIssue({ code: 'custom', path: [key], message: `${key} is not a metric Miles logs` });
  });
export type Metrics = z.infer<typeof MetricsSchema>;

export interface StepMetricsInput {
  readonly step: number;
  /** The flattened post-filter rows. */
  readonly rows: readonly ReplaySample[];
  /** The dynamic filter's reason for each group it dropped (a raised group task is not a filter drop). */
  readonly dropReasons: readonly string[];
  readonly rolloutTimeS: number;
  readonly args: RolloutLogArgs;
  /** Which Miles' metrics.py (default: the default profile's). */
  readonly rolloutMetrics?: MilesSwitches['rolloutMetrics'];
}

export function stepMetrics(input: StepMetricsInput): Metrics {
  const rolloutMetrics = input.rolloutMetrics ?? DEFAULT_MILES_PROFILE.switches.rolloutMetrics;
  return {
    ...rolloutLogMetrics({
      rolloutId: input.step,
      args: input.args,
      samples: input.rows.map(toLoggedSample),
      dropReasons: input.dropReasons,
      rolloutTime: input.rolloutTimeS,
      rolloutMetrics,
    }),
    ...computeCompactionMetrics(input.rows, { adapterScoped: rolloutMetrics === 'normalised' }),
  };
}
