import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { MetricPoint, MetricTable } from './metric-table.ts';
import { parsePythonLiteral } from './python-literal.ts';

/**
 * The metric lines Miles logs (radixark/miles@31f1ca96):
 * - `step N: {...}` from `log_train_step` (`train/*`, with `train/step` = N; `critic-step N:` for critics),
 * - `rollout N: {...}` from `gather_log_data('rollout', ...)` (trainer side),
 * - `perf N: {...}` from the rollout side's `log_rollout_data` (`rollout/*` and `perf/*`),
 * - `eval N: {...}`.
 * Lines may carry any prefix (Ray's `(Actor pid=...)`, a timestamp, our own log prefix).
 */
const METRIC_LINE = /(?:^|[\s:>\]|])((?:[a-z]+-)?step|rollout|perf|eval) (\d+): (\{.*\})\s*$/;

export interface MetricScan {
  readonly metrics: MetricTable;
  /** How many lines looked like metric lines but whose dict could not be read. */
  readonly unreadableLines: number;
}

/**
 * Collects every numeric metric from an iterable of log lines, one point per metric and step. Miles
 * prints each train step's dict twice (radixark/miles@31f1ca96 miles/backends/training_utils/log_utils.py
 * L542 in `log_train_step`, called with `should_log=True`, then miles/backends/megatron_utils/model.py
 * L854), so a repeated step replaces its earlier point instead of adding one: `count(train/step)` counts
 * distinct steps and cannot pass with half of them missing.
 */
export function scanMetricLines(lines: Iterable<string>): MetricScan {
  const table = new Map<string, MetricPoint[]>();
  const positionOf = new Map<string, Map<number, number>>();
  let unreadableLines = 0;
  for (const line of lines) {
    const match = METRIC_LINE.exec(line);
    if (!match) continue;
    const step = Number(match[2]);
    const dict = parsePythonLiteral(match[3]!);
    if (dict === undefined || dict === null || typeof dict !== 'object' || Array.isArray(dict)) {
      unreadableLines += 1;
      continue;
    }
    for (const [key, value] of Object.entries(dict)) {
      const numeric =
        typeof value === 'number' ? value : typeof value === 'boolean' ? Number(value) : undefined;
      if (numeric === undefined) continue;
      const points = table.get(key) ?? [];
      if (points.length === 0) table.set(key, points);
      const steps = positionOf.get(key) ?? new Map<number, number>();
      positionOf.set(key, steps);
      const earlier = steps.get(step);
      if (earlier === undefined) {
        steps.set(step, points.length);
        points.push({ step, value: numeric });
      } else points[earlier] = { step, value: numeric };
    }
  }
  return { metrics: table, unreadableLines };
}

/** Same, streaming a log file line by line (logs of a long run do not fit comfortably in one string). */
export async function scanMetricLog(path: string): Promise<MetricScan> {
  const lines: string[] = [];
  const reader = createInterface({
    input: createReadStream(path, 'utf8'),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  for await (const line of reader) if (METRIC_LINE.test(line)) lines.push(line);
  return scanMetricLines(lines);
}
