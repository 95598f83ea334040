import type { SmokeCheck } from './check-result.ts';
import type { ConvertedDumps } from './dump-schema.ts';
import type { MetricTable } from './log/metric-table.ts';
import { RunChecker } from './run-checker.ts';
import type { DumpRunShape } from './to-check-data.ts';

export { overallVerdict } from './replay-checks-view.ts';

/**
 * Every check `harness check-run` applies, over dumps already converted (the bridge's JSON files, the
 * smoke fixtures): the same per-step engine (`RunChecker`), fed from memory instead of the converter,
 * with the smoke run's expectation that every step compacts. Returns the checks of the run's report.
 */
export function validateDumps(
  dumps: ConvertedDumps,
  shape: DumpRunShape,
  metrics: MetricTable,
): SmokeCheck[] {
  const checker = new RunChecker({
    shape: {
      n_samples_per_prompt: shape.n_samples_per_prompt,
      rollout_batch_size: shape.rollout_batch_size,
      ...(shape.reward_key === undefined ? {} : { reward_key: shape.reward_key }),
    },
    ranks: new Set(dumps.train.map((t) => t.rank)).size,
    logged: metrics,
    expectCompaction: true,
    strict: false,
  });
  for (const rollout of dumps.rollout) {
    const step = Number(rollout.rollout_id);
    checker.add({
      step,
      rollout,
      train: dumps.train.filter((t) => t.rollout_id === step),
      trajectory: [],
      nonFinite: 0,
      problems: [],
    });
  }
  return checker.finish({ dir: '', log: null, layout: [] }).report.checks;
}
