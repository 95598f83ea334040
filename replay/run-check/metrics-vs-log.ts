import { z } from 'zod';
import type { Metrics } from '../metrics/step-metrics.ts';
import type { MetricTable } from './log/metric-table.ts';

/**
 * What Miles logs that the dumps cannot reproduce: the rollout's wall time and the rates over it
 * (radixark/miles@31f1ca96 miles/ray/rollout/metrics.py `log_rollout_data`, perf/*), and the dynamic
 * filter's drops, which happen before the dump.
 */
const NOT_FROM_DUMPS = /^(perf\/(rollout_time|.*tokens_per)|rollout\/dynamic_filter\/)/;

export const MetricsComparisonSchema = z.object({
  compared: z.number().int(),
  mismatches: z.array(z.object({ name: z.string(), logged: z.number(), recomputed: z.number() })),
  /** Recomputed from the dump but not in the log for this step (an older Miles, or no log given). */
  not_logged: z.array(z.string()),
  /** Logged, but not something the dump determines. */
  not_from_dumps: z.array(z.string()),
});
export type MetricsComparison = z.infer<typeof MetricsComparisonSchema>;

/** Python prints floats with repr (17 significant digits); numpy's float32 means survive as such. */
const close = (a: number, b: number): boolean =>
  Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a), Math.abs(b));

/**
 * Every metric the replay computes for a step from the dumped rows (`processStep`: the rollout side's
 * `log_rollout_data` and the trainer's compaction-aware `rollout/*`) against the value the launcher's log
 * holds for that step (`perf N: {...}`, `rollout N: {...}`), within float rounding.
 */
export function compareMetricsWithLog(
  step: number,
  recomputed: Metrics,
  logged: MetricTable,
): MetricsComparison {
  const out: MetricsComparison = { compared: 0, mismatches: [], not_logged: [], not_from_dumps: [] };
  for (const [name, value] of Object.entries(recomputed)) {
    if (value === undefined) continue;
    const point = logged
      .get(name)
      ?.filter((p) => p.step === step)
      .at(-1);
    if (NOT_FROM_DUMPS.test(name)) {
      if (point) out.not_from_dumps.push(name);
      continue;
    }
    if (!point) {
      out.not_logged.push(name);
      continue;
    }
    out.compared += 1;
    if (!close(point.value, value)) out.mismatches.push({ name, logged: point.value, recomputed: value });
  }
  return out;
}
