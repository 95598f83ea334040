import { describe, expect, it } from 'vitest';
import { parseJson, pythonJsonLoads } from '../../common/python-json/loads.ts';
import { PythonFloat } from '../../common/python-json/values.ts';
import type { RunResult } from './run-protocol.ts';
import { RunResultSchema } from './run-protocol.ts';
import { runResultJson } from './run-result-wire.ts';

function result(reward: number): RunResult {
  const zeroTimes = {
    cost_usd: 0,
    total_time: 2,
    env_setup_time: 0,
    agent_setup_time: 0,
    agent_run_time: 1.5,
    eval_time: 0,
    model_query_time_sum: 1,
    model_query_time_avg: 0.5,
    env_execution_time_sum: 0,
    env_execution_time_avg: 0,
    total_tool_time: 0,
    time_per_turn: 0.75,
    model_time_ratio: 0.5,
    env_time_ratio: 0,
    eval_time_ratio: 0,
  };
  return {
    reward,
    exit_status: 'Submitted',
    eval_report: { reward },
    agent_metrics: {
      n_input_tokens: 10,
      n_output_tokens: 4,
      turns: 2,
      n_episodes: 2,
      summarization_count: 0,
      api_request_times_msec: [500, 500],
      tool_calls: 1,
      ...zeroTimes,
      harness: {
        trial_index: 0,
        episode: 'e',
        pool_fallback: false,
        variant: 0,
        cancelled: false,
        exception_type: null,
        exception_message: null,
        unwound_pairs: [],
      },
    },
  };
}

describe("the /run answer's Python types", () => {
  it('writes the reward and the eval report as floats, as the verifier parses reward.txt (1.0, 0.0)', () => {
    for (const reward of [1, 0]) {
      const text = runResultJson(result(reward));
      expect(text).toContain(`"reward":${reward}.0,`);
      expect(text).toContain(`"eval_report":{"reward":${reward}.0}`);
      const typed = pythonJsonLoads(text, { keepFloats: true }) as { reward: unknown };
      expect(typed.reward).toBeInstanceOf(PythonFloat);
    }
  });

  it('keeps counts as ints, durations as floats, and the same values', () => {
    const text = runResultJson(result(1));
    expect(text).toContain('"turns":2,');
    expect(text).toContain('"total_time":2.0,');
    expect(text).toContain('"api_request_times_msec":[500.0,500.0]');
    expect(RunResultSchema.parse(parseJson(text))).toEqual(result(1));
  });
});
