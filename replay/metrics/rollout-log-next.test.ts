import { describe, expect, it } from 'vitest';
import { harnessOnCase, metricDifferences, nextOracleCases } from '../testing/oracle-cases.ts';

// Expectations from the newer metrics.py run on CPU (scripts/oracles/metrics_next_oracle.py wrote
// fixtures/miles-oracle/rollout-metrics-next.json): 31f1ca96's cases and the ones for what changed.
describe("rollout metrics against the newer metrics.py's log_rollout_data (rolloutMetrics: 'normalised')", () => {
  it.each(nextOracleCases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    expect(metricDifferences(harnessOnCase(c, 'normalised').logged, c.logged)).toEqual([]);
  });

  it('covers what changed: normalised buckets, endpoint rates, pass@k, adapter-keyed episodes', () => {
    const names = nextOracleCases.map((c) => c.name);
    for (const name of [
      'normalised-buckets',
      'passrate-compacted-group',
      'passrate-every-group-compacted',
      'passrate-complete-groups',
      'episode-rollout-keys',
      'adapter-keyed-episodes',
    ])
      expect(names).toContain(name);
  });

  it("31f1ca96's computation differs from the newer one exactly in the keys that changed", () => {
    const c = nextOracleCases.find((x) => x.name === 'normalised-buckets')!;
    const old = harnessOnCase(c, '31f1ca96').logged;
    const differing = metricDifferences(old, c.logged).map((d) => d.split(':')[0]);
    expect(differing.sort()).toEqual(
      [
        'rollout/episode_raw_reward',
        'rollout/episode_response_length/max',
        'rollout/episode_response_length/mean',
        'rollout/episode_response_length/median',
        'rollout/episode_response_length/min',
        'rollout/episode_total_response_length/mean',
        'rollout/num_training_samples',
        'rollout/zero_std/all_negative_one_percentage',
        'rollout/zero_std/all_zero_percentage',
        'rollout/zero_std/count_-0.0',
        'rollout/zero_std/count_-1',
        'rollout/zero_std/count_-1.0',
        'rollout/zero_std/count_0',
        'rollout/zero_std/count_0.0',
        'rollout/zero_std/count_1',
        'rollout/zero_std/count_1.0',
        'rollout/zero_std/count_2',
        'rollout/zero_std/count_2.0',
        'rollout/zero_std/percentage',
      ].sort(),
    );
  });
});
