import { computeCompactionMetrics } from '../../metrics/compaction-metrics.ts';
import { numpyMean } from '../../metrics/numpy-sum.ts';
import { computeStatistics } from '../../metrics/statistics.ts';
import { effectiveResponseLength } from '../../model/sample.ts';
import { type DumpEvidence, MAX_EVIDENCE, type SmokeCheck } from '../check-result.ts';
import type { RolloutDump } from '../dump-schema.ts';
import type { MetricTable } from '../log/metric-table.ts';
import { dumpSampleToReplay } from '../to-check-data.ts';

/** Metrics the dump alone cannot reproduce (the filter's drop count happens before the dump). */
const NOT_FROM_DUMP = new Set(['rollout/dynamic_filter/drop_group_has_aborted']);

const close = (a: number, b: number): boolean =>
  Math.abs(a - b) <= 1e-6 * Math.max(1, Math.abs(a), Math.abs(b));

/**
 * The compaction-aware metrics Miles logged for each step equal the replay's computation of them from
 * the rows dumped for that step (docs/gpu-smoke.md "What a run does"; the dump of radixark/miles@31f1ca96
 * miles/ray/rollout/debug_data.py `save_debug_rollout_data`): the metric code and the data
 * describe the same batch. Only metrics present in the logs are compared.
 */
export function checkLoggedMetricsMatch(
  dumps: readonly RolloutDump[],
  logged: MetricTable,
  rewardKey?: string,
): SmokeCheck {
  const base = { name: 'logged_metrics_match_dump', source: 'dumps' as const };
  const evidence: DumpEvidence[] = [];
  let compared = 0;
  for (const dump of dumps) {
    const step = Number(dump.rollout_id);
    const rows = dump.samples.map((s) => dumpSampleToReplay(s, rewardKey));
    // With the trainer's metrics, what `log_rollout_data` logs that the rows alone determine
    // (replay/metrics/rollout-log.ts; the rest needs the rollout's time, texts or prefix-cache counts).
    const lengths = computeStatistics(rows.map(effectiveResponseLength));
    const expected: Record<string, number | undefined> = {
      ...computeCompactionMetrics(rows),
      'rollout/response_len/mean': lengths.mean,
      'rollout/response_len/median': lengths.median,
      'rollout/response_len/max': lengths.max,
      'rollout/response_len/min': lengths.min,
      'rollout/truncated_ratio': numpyMean(rows.map((r) => (r.status === 'truncated' ? 1 : 0))),
    };
    for (const [name, value] of Object.entries(expected)) {
      if (NOT_FROM_DUMP.has(name) || value === undefined) continue;
      const point = logged
        .get(name)
        ?.filter((p) => p.step === step)
        .at(-1);
      if (!point) continue;
      compared += 1;
      if (!close(point.value, value))
        evidence.push({ step, detail: `${name}: logged ${point.value}, the dump gives ${value}` });
    }
  }
  if (compared === 0)
    return {
      ...base,
      verdict: 'undecided',
      summary: 'none of the compaction-aware metrics is in the logs for a dumped step',
      evidence: [],
    };
  return {
    ...base,
    verdict: evidence.length === 0 ? 'pass' : 'fail',
    summary:
      evidence.length === 0
        ? `${compared} logged metric values match the dumps`
        : `${evidence.length} of ${compared} logged metric values disagree with the dumps`,
    evidence: evidence.slice(0, MAX_EVIDENCE),
  };
}
