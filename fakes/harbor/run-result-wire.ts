import { starletteJson } from '../../common/python-json/dumps.ts';
import { PythonFloat } from '../../common/python-json/values.ts';
import type { AgentMetrics, RunResult } from './run-protocol.ts';

/** The agent metrics Harbor's agent server computes as Python floats (durations, ratios, cost). */
const FLOAT_METRICS = [
  'cost_usd',
  'total_time',
  'env_setup_time',
  'agent_setup_time',
  'agent_run_time',
  'eval_time',
  'model_query_time_sum',
  'model_query_time_avg',
  'env_execution_time_sum',
  'env_execution_time_avg',
  'total_tool_time',
  'time_per_turn',
  'model_time_ratio',
  'env_time_ratio',
  'eval_time_ratio',
] as const satisfies readonly (keyof AgentMetrics)[];

/**
 * A `/run` answer as the agent server writes it (FastAPI's JSONResponse: compact, non-ASCII kept) with
 * each value's Python type. The reward is a float: Harbor's verifier parses `reward.txt` with `float()`
 * (harbor@6c9ba3f0 src/harbor/verifier/verifier.py `_parse_reward_text`), its result model keeps it
 * (`VerifierResult.rewards: dict[str, float | int]`), and the server falls back to `0.0`
 * (harbor@6c9ba3f0 the agent server's `/run`; docs/harbor.md). So `1.0`, never `1`: Miles prints the type into
 * `rollout/zero_std/count_<reward>` and looks up `"0.0"`/`"1.0"` for the all-zero/all-one shares.
 */
export function runResultJson(result: RunResult): string {
  const metrics: Record<string, unknown> = { ...result.agent_metrics };
  for (const key of FLOAT_METRICS) metrics[key] = new PythonFloat(result.agent_metrics[key]);
  metrics.api_request_times_msec = result.agent_metrics.api_request_times_msec.map((t) => new PythonFloat(t));
  return starletteJson({
    reward: new PythonFloat(result.reward),
    exit_status: result.exit_status,
    eval_report: Object.fromEntries(
      Object.entries(result.eval_report).map(([k, v]) => [k, new PythonFloat(v)]),
    ),
    agent_metrics: metrics,
  });
}
