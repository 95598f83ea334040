import type { LoggedSample } from './logged-sample.ts';
import { numpyMean } from './numpy-sum.ts';

type PassRateRow = Pick<LoggedSample, 'group_index' | 'reward'>;

/** The rows of a step grouped by `group_index` (Miles' `group_by`: first-seen order). */
export function rowsByGroup<R extends Pick<LoggedSample, 'group_index'>>(rows: readonly R[]): R[][] {
  const groups = new Map<number | null, R[]>();
  for (const row of rows) {
    const members = groups.get(row.group_index);
    if (members) members.push(row);
    else groups.set(row.group_index, [row]);
  }
  return [...groups.values()];
}

/**
 * `_compute_passrate_from_samples` (radixark/miles@31f1ca96 miles/ray/rollout/metrics.py, unchanged in the
 * newer file; logged as `passrate/pass@<k>` under `--log-passrate`): only groups of exactly
 * `n_samples_per_prompt` rows count. A group compaction split into more rows than rollouts is left out
 * (Miles' warning calls it one with "fewer than" n rows): check 10 reports each such group.
 */
export function passRateFromSamples(
  rows: readonly PassRateRow[],
  nSamplesPerPrompt: number,
): Record<string, number> {
  if (nSamplesPerPrompt <= 1) return {};
  const complete = rowsByGroup(rows).filter((g) => g.length === nSamplesPerPrompt);
  if (complete.length === 0) return {};
  return computePassRate(
    complete.map((g) => g.map((r) => r.reward)),
    nSamplesPerPrompt,
  );
}

/**
 * `compute_pass_rate` (radixark/miles@31f1ca96 miles/utils/metric_utils.py): for k = 1, 2, 4, … ≤ n, the
 * mean over groups of the unbiased estimator 1 − C(n−c, k)/C(n, k), c the rewards equal to 1, computed as
 * numpy does (`1 − prod(1 − k / arange(n−c+1, n+1))`, 1.0 when n − c < k).
 */
function computePassRate(groups: readonly (number | null)[][], n: number): Record<string, number> {
  const out: Record<string, number> = {};
  for (let k = 1; k <= n; k *= 2) {
    const estimates = groups.map((rewards) => {
      const c = rewards.filter((r) => r === 1).length;
      if (n - c < k) return 1;
      let product = 1;
      for (let m = n - c + 1; m <= n; m++) product *= 1 - k / m;
      return 1 - product;
    });
    out[`pass@${k}`] = numpyMean(estimates);
  }
  return out;
}
