import { setTimeout as sleep } from 'node:timers/promises';
import type { CallEvent } from './engine/episode-calls.ts';
import type { TokenCounter } from './engine/episode-history.ts';
import { ScriptedTimeoutError } from './engine/errors.ts';
import { type EpisodeResult, playEpisode } from './engine/play-episode.ts';
import type { ExitStatus, ResolvedEpisode } from './episode-schema.ts';
import type { AgentMetrics, RunResult } from './run-protocol.ts';

/**
 * One trial: environment setup, the agent phase under `--agent-timeout`, then the verifier, mapped
 * onto Harbor's exit statuses (Harbor 6c9ba3f0 src/harbor/trial/; docs/harbor.md "Exit statuses"). The setup
 * and verifier phases are the script's `setup_ms` / `verifier_ms` waits; there is no sandbox.
 */

/** Abort reason of an agent phase that ran past `--agent-timeout`. */
export class AgentTimeoutError extends Error {
  constructor(seconds: number) {
    super(`agent did not finish within ${seconds} s`);
    this.name = 'AgentTimeoutError';
  }
}

/** Abort reason of a trial cancelled from outside (`/flush`, server close, client gone). */
export class TrialCancelledError extends Error {
  readonly why: 'flush' | 'server_closing' | 'client_gone';
  constructor(why: 'flush' | 'server_closing' | 'client_gone') {
    super(`trial cancelled (${why})`);
    this.name = 'TrialCancelledError';
    this.why = why;
  }
}

export interface TrialOptions {
  readonly episode: ResolvedEpisode;
  readonly trialIndex: number;
  readonly baseUrl: string;
  readonly model: string;
  readonly samplingParams: Readonly<Record<string, unknown>>;
  /** Fires on flush/close/disconnect; the trial still answers (as a cancelled AgentError). */
  readonly signal: AbortSignal;
  readonly agentTimeoutS: number;
  readonly fetchImpl?: typeof fetch;
  readonly onCall?: (event: CallEvent) => void;
  readonly countTokens?: TokenCounter;
}

export interface TrialOutcome {
  readonly result: RunResult;
  readonly episode: EpisodeResult | undefined;
}

const seconds = (ms: number) => ms / 1000;
const ratio = (part: number, whole: number) => (whole > 0 ? part / whole : 0);

async function wait(ms: number, signal: AbortSignal): Promise<boolean> {
  if (ms <= 0) return !signal.aborted;
  try {
    await sleep(ms, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}

/** How the trial ended: Harbor's exit status, the reward and eval report, and what went wrong. */
interface Verdict {
  exitStatus: ExitStatus;
  reward: number;
  evalReport: Record<string, number>;
  cancelled: boolean;
  exception: { type: string; message: string } | undefined;
}

const cancelledBy = (reason: unknown) => ({ type: 'CancelledError', message: String(reason) });

/** The agent phase: the episode played under `--agent-timeout` and the trial's signal. */
async function runAgent(options: TrialOptions): Promise<{ played: EpisodeResult; agentRunMs: number }> {
  const { signal } = options;
  const agent = new AbortController();
  const forward = () => agent.abort(signal.reason);
  signal.addEventListener('abort', forward, { once: true });
  const timer = setTimeout(
    () => agent.abort(new AgentTimeoutError(options.agentTimeoutS)),
    options.agentTimeoutS * 1000,
  );
  const agentStarted = performance.now();
  try {
    const played = await playEpisode({
      episode: options.episode,
      baseUrl: options.baseUrl,
      model: options.model,
      samplingParams: options.samplingParams,
      signal: agent.signal,
      ...(options.fetchImpl ? { fetchImpl: options.fetchImpl } : {}),
      ...(options.onCall ? { onCall: options.onCall } : {}),
      ...(options.countTokens ? { countTokens: options.countTokens } : {}),
    });
    return { played, agentRunMs: performance.now() - agentStarted };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener('abort', forward);
  }
}

/**
 * The verifier, run after a finished agent and after an agent timeout: its reward is scripted, and a
 * cancellation while it runs leaves the verdict as it was, cancelled.
 */
async function verify(
  options: TrialOptions,
  verdict: Verdict,
  reward: number,
  status: ExitStatus,
): Promise<number> {
  const evalStarted = performance.now();
  const ok = await wait(options.episode.script.verifier_ms, options.signal);
  if (!ok) {
    verdict.cancelled = true;
    verdict.exception = cancelledBy(options.signal.reason);
  } else {
    verdict.exitStatus = status;
    verdict.reward = reward;
    verdict.evalReport = { reward };
  }
  return performance.now() - evalStarted;
}

/** Harbor's verdict on how the agent ended (docs/harbor.md "Exit statuses"); returns the verifier's time. */
async function judge(options: TrialOptions, played: EpisodeResult, verdict: Verdict): Promise<number> {
  if (played.error) verdict.exception = played.error;
  switch (played.end) {
    case 'completed':
      return verify(options, verdict, options.episode.reward, 'Submitted');
    case 'aborted': {
      const reason = played.abortReason;
      if (reason instanceof AgentTimeoutError || reason instanceof ScriptedTimeoutError) {
        const timedOut = new AgentTimeoutError(options.agentTimeoutS);
        verdict.exception = { type: 'AgentTimeoutError', message: timedOut.message };
        return verify(options, verdict, options.episode.script.timeout_reward, 'TimeLimitExceeded');
      }
      verdict.cancelled = true;
      verdict.exception = cancelledBy(reason);
      return 0;
    }
    case 'sequence_length':
      verdict.exitStatus = 'SequenceLengthLimitExceeded';
      return 0;
    case 'agent_error':
      verdict.exitStatus = 'AgentError';
      return 0;
  }
}

export async function runTrial(options: TrialOptions): Promise<TrialOutcome> {
  const { episode, signal } = options;
  const started = performance.now();
  const verdict: Verdict = {
    exitStatus: 'AgentError',
    reward: 0,
    evalReport: {},
    cancelled: false,
    exception: undefined,
  };
  let played: EpisodeResult | undefined;
  let agentRunMs = 0;
  let evalMs = 0;
  const setupOk = await wait(episode.script.setup_ms, signal);
  const setupMs = performance.now() - started;
  if (!setupOk) {
    verdict.cancelled = true;
    verdict.exception = cancelledBy(signal.reason);
  } else {
    ({ played, agentRunMs } = await runAgent(options));
    evalMs = await judge(options, played, verdict);
  }
  const times = { setupMs, agentRunMs, evalMs, totalMs: performance.now() - started };
  return {
    result: {
      reward: verdict.reward,
      exit_status: verdict.exitStatus,
      eval_report: verdict.evalReport,
      agent_metrics: agentMetricsOf(options, played, verdict, times),
    },
    episode: played,
  };
}

/** Harbor's `agent_metrics` of a trial, with the harness's own block. */
function agentMetricsOf(
  options: TrialOptions,
  played: EpisodeResult | undefined,
  verdict: Verdict,
  times: { setupMs: number; agentRunMs: number; evalMs: number; totalMs: number },
): AgentMetrics {
  const script = options.episode.script;
  const { setupMs, agentRunMs, evalMs, totalMs } = times;
  const m = played?.metrics;
  const apiTimes = m?.api_request_times_msec ?? [];
  const modelMs = apiTimes.reduce((a, b) => a + b, 0);
  const envMs = m?.env_execution_ms ?? 0;
  const turns = m?.turns ?? 0;
  return {
    n_input_tokens: m?.n_input_tokens ?? 0,
    n_output_tokens: m?.n_output_tokens ?? 0,
    cost_usd: 0,
    turns,
    n_episodes: m?.n_episodes ?? 0,
    summarization_count: m?.summarization_count ?? 0,
    api_request_times_msec: [...apiTimes],
    tool_calls: m?.tool_calls ?? 0,
    total_time: seconds(totalMs),
    env_setup_time: seconds(setupMs),
    agent_setup_time: 0,
    agent_run_time: seconds(agentRunMs),
    eval_time: seconds(evalMs),
    model_query_time_sum: seconds(modelMs),
    model_query_time_avg: apiTimes.length > 0 ? seconds(modelMs) / apiTimes.length : 0,
    env_execution_time_sum: seconds(envMs),
    env_execution_time_avg: turns > 0 ? seconds(envMs) / turns : 0,
    total_tool_time: seconds(envMs),
    time_per_turn: turns > 0 ? seconds(agentRunMs) / turns : 0,
    model_time_ratio: ratio(modelMs, totalMs),
    env_time_ratio: ratio(envMs, totalMs),
    eval_time_ratio: ratio(evalMs, totalMs),
    harness: {
      trial_index: options.trialIndex,
      episode: script.instance_id,
      // The catalog picks the script with the request's id when there is one, so a different id means the pool.
      pool_fallback: script.instance_id !== options.episode.instanceId,
      variant: options.episode.variantIndex,
      cancelled: verdict.cancelled,
      exception_type: verdict.exception?.type ?? null,
      exception_message: verdict.exception?.message ?? null,
      unwound_pairs: [...(m?.unwound_pairs ?? [])],
    },
  };
}
