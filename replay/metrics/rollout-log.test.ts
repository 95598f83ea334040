import { describe, expect, it } from 'vitest';
import { applyAbortedFilter } from '../step/aborted-filter.ts';
import { harnessOnCase, metricDifferences, oracleCases, oracleGroups } from '../testing/oracle-cases.ts';
import { aggregateAgentMetrics } from './agent-metrics.ts';
import { rolloutLogMetrics } from './rollout-log.ts';
import { MetricsSchema } from './step-metrics.ts';

const cases = oracleCases;

function expectSameMetrics(actual: Record<string, number | undefined>, expected: Record<string, number>) {
  expect(metricDifferences(actual, expected)).toEqual([]);
}

describe("rollout metrics against Miles' log_rollout_data (fixtures/miles-oracle/rollout-metrics.json)", () => {
  it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const groups = oracleGroups(c);
    if (c.filter === 'check_no_aborted') {
      // The replay's own filter decides as Miles' check_no_aborted did.
      const filtered = groups.map((g) => applyAbortedFilter(g));
      expect(filtered.map((g) => ({ keep: g.dropped === null, reason: g.dropped }))).toEqual(
        c.filter_verdicts,
      );
    }
    const { logged, samples } = harnessOnCase(c);
    expectSameMetrics(logged, c.logged);
    expect(c.step_key).toBe('rollout/step');
    expectSameMetrics(aggregateAgentMetrics(samples), c.agent_would_log);
  });

  it("shows what Miles' RolloutFn logs of agent/* under v2: nothing, though the samples carry agent_metrics", () => {
    const withAgent = cases.filter((c) => Object.keys(c.agent_would_log).length > 0);
    expect(withAgent.map((c) => Object.keys(c.agent_would_log).length)).toEqual([17]);
    for (const c of cases) expect(c.agent_logged).toEqual({});
  });

  it('the report schema accepts every logged key and refuses one Miles does not log', () => {
    const trainer = {
      'rollout/num_training_samples': 1,
      'rollout/episode_raw_reward': 0,
      'rollout/episode_response_length/mean': 0,
      'rollout/episode_response_length/median': 0,
      'rollout/episode_response_length/max': 0,
      'rollout/episode_response_length/min': 0,
      'rollout/episode_total_response_length/mean': 0,
      'rollout/raw_reward': 0,
    };
    for (const c of cases)
      expect(MetricsSchema.safeParse({ ...trainer, ...c.logged }).success, c.name).toBe(true);
    const bad = MetricsSchema.safeParse({ ...trainer, ...cases[0]!.logged, 'rollout/not_a_metric': 1 });
    expect(bad.success).toBe(false);
  });

  it("a step with no rows (only under the replay's refill cap) logs its drops, time and step, and zeros", () => {
    // 31f1ca96's log_rollout_data (the oracle file's Miles); the normalised metrics.py is another table.
    const logged = rolloutLogMetrics({
      rolloutId: 5,
      args: { advantage_estimator: 'grpo', rollout_num_gpus: 8, use_session_server: 'v2' },
      samples: [],
      dropReasons: ['group_has_aborted', 'group_has_aborted', null],
      rolloutTime: 2.5,
      rolloutMetrics: '31f1ca96',
    });
    expect(logged).toEqual({
      'rollout/dynamic_filter/drop_group_has_aborted': 2,
      'rollout/response_len/mean': 0,
      'rollout/response_len/median': 0,
      'rollout/response_len/max': 0,
      'rollout/response_len/min': 0,
      'rollout/prefix_cache_hit_rate': 0,
      'rollout/avg_cached_tokens_per_sample': 0,
      'rollout/repetition_frac': 0,
      'rollout/truncated_ratio': 0,
      'perf/rollout_time': 2.5,
      'perf/longest_sample_tokens_per_sec': 0,
      'perf/longest_effective_sample_tokens_per_sec': 0,
      'rollout/step': 5,
    });
  });
});
