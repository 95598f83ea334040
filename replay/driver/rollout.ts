import { isHarnessError } from '../../common/errors.ts';
import { parseJson, pythonJsonLoads } from '../../common/python-json/loads.ts';
import { PythonFloat } from '../../common/python-json/values.ts';
import { type RunResult, RunResultSchema } from '../../fakes/harbor/run-protocol.ts';
import type { PolicyLogEntry } from '../../fakes/policy/index.ts';
import type { SamplesReply } from '../../fakes/session/index.ts';
import type { GroupIndex, SampleIndex } from '../model/ids.ts';
import type { PlayedEpisode, PolicyRequest, Rollout } from '../model/rollout.ts';
import type { ReplaySample } from '../model/sample.ts';
import {
  abortedPlaceholder,
  fillRewards,
  inputSample,
  overlayWireSample,
  stampRolloutId,
} from './overlay.ts';
import type { PromptRow } from './prompts.ts';
import { buildRunBody } from './run-body.ts';
import { type SessionRouter, sessionServerIdOf } from './session-router.ts';

/** What one rollout needs from the running stack and the recipe. */
export interface RolloutContext {
  /** The session-server instances and the per-session choice among them (one with a single server). */
  readonly sessions: SessionRouter;
  readonly harborUrl: string;
  readonly modelName: string;
  readonly samplingParams: Readonly<Record<string, unknown>>;
  readonly maxSeqLen: number | null;
  /** `AGENT_TRIAL_TIMEOUT` in ms: the whole `/run` POST is abandoned after it (Miles: 7200 s). */
  readonly trialTimeoutMs: number;
  readonly signal: AbortSignal;
  /** The policy's requests for one session (its routing key). */
  requestsFor(sessionId: string): readonly PolicyLogEntry[];
  /** Test-only: rewrites a finished rollout (plants a divergence the differential must name). */
  readonly plant?: (rollout: Rollout) => Rollout;
}

/**
 * A `/run` that failed raises in the group task: Miles drops the whole group (agentic_tool_call.py
 * `generate`).
 */
export class CollectRaisedError extends Error {
  override readonly cause: unknown;
  constructor(cause: unknown) {
    super(`collect raised: ${cause instanceof Error ? cause.message : String(cause)}`);
    this.name = 'CollectRaisedError';
    this.cause = cause;
  }
}

export function toPolicyRequests(entries: readonly PolicyLogEntry[]): PolicyRequest[] {
  return entries
    .filter((e) => e.status === 200 && e.responseId !== null)
    .map((e) => ({
      response_id: e.responseId,
      messages_digest: e.messagesDigest,
      last_message_head: e.lastMessageHead,
      input_ids_length: e.inputIdsLength,
      input_ids_digest: e.inputIdsDigest,
      ...(e.messages === undefined ? {} : { messages: [...e.messages], reply: e.reply ?? null }),
      output_ids: null,
    }));
}

/** A `/run` answer, and the Python type its `reward` has on the wire (`1` is an int, `1.0` a float). */
interface RunAnswer {
  readonly result: RunResult;
  readonly rewardType: 'int' | 'float';
}

/**
 * `swe_agent_function.run`: POST /run and keep the four keys Miles keeps; `null` on timeout, cancel or
 * any error (it never raises).
 */
async function postRun(ctx: RolloutContext, body: Record<string, unknown>): Promise<RunAnswer | null> {
  try {
    const response = await fetch(`${ctx.harborUrl}/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.any([ctx.signal, AbortSignal.timeout(ctx.trialTimeoutMs)]),
    });
    if (response.status !== 200) {
      await response.body?.cancel();
      return null;
    }
    const text = await response.text();
    const parsed = RunResultSchema.safeParse(parseJson(text));
    if (!parsed.success) return null;
    const { reward, exit_status, eval_report, agent_metrics } = parsed.data;
    const typed = pythonJsonLoads(text, { keepFloats: true }) as { reward: unknown };
    return {
      result: { reward, exit_status, eval_report, agent_metrics },
      rewardType: typed.reward instanceof PythonFloat ? 'float' : 'int',
    };
  } catch {
    return null;
  }
}

/** Transport failures that mean the session's worker is gone: refused, reset, or closed mid-answer. */
const WORKER_GONE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET']);

function workerGone(error: unknown): boolean {
  const cause = (error as { cause?: { code?: unknown } } | null)?.cause;
  return typeof cause?.code === 'string' && WORKER_GONE_CODES.has(cause.code);
}

/** The script the mock played, from the harness-only part of its `/run` result. */
function playedEpisode(result: RunResult | null): PlayedEpisode | null {
  if (result === null) return null;
  const { episode, variant, pool_fallback } = result.agent_metrics.harness;
  return { script: episode, variant, pool_fallback };
}

/**
 * One rollout exactly as `agentic_tool_call.generate` runs it under `--use-session-server v2`
 * (radixark/miles@31f1ca96 miles/rollout/generate_hub/agentic_tool_call.py): open a session, run the agent
 * against it, always collect (the reply decoded
 * and overlaid on the input sample) and delete it, stamp the rollout id, then fill missing rewards as
 * `generate_and_rm` does. An empty or transport-failed collect gives one ABORTED placeholder; a non-2xx
 * collect raises `CollectRaisedError`.
 */
export async function runRollout(
  ctx: RolloutContext,
  row: PromptRow,
  group: GroupIndex,
  index: SampleIndex,
): Promise<Rollout> {
  const rollout = await playRollout(ctx, row, group, index);
  return ctx.plant === undefined ? rollout : ctx.plant(rollout);
}

async function playRollout(
  ctx: RolloutContext,
  row: PromptRow,
  group: GroupIndex,
  index: SampleIndex,
): Promise<Rollout> {
  const input = inputSample(row, group, index);
  // One instance per session; every later call of the session goes to it (OpenAIEndpointTracer.create).
  const endpoint = ctx.sessions.pick();
  const client = endpoint.client;
  let sessionId: string;
  try {
    sessionId = await client.create();
  } catch (error) {
    // OpenAIEndpointTracer.create raises; the exception leaves the group task.
    throw new CollectRaisedError(error);
  }
  const sessionUrl = `${client.baseUrl}/sessions/${sessionId}`;
  const sessionServerId = sessionServerIdOf(sessionUrl);
  const base = { group_index: group, index, rollout_id: null, session_server_id: sessionServerId };
  const body = buildRunBody({
    metadata: input.metadata,
    sessionUrl,
    sessionServerId,
    sessionServerInstanceId: endpoint.instanceId,
    modelName: ctx.modelName,
    samplingParams: ctx.samplingParams,
    maxSeqLen: ctx.maxSeqLen,
  });
  let reply: SamplesReply | null = null;
  let collectError: unknown = null;
  let episode: PlayedEpisode | null = null;
  let agentMetadata: RunResult | null = null;
  let rewardType: 'int' | 'float' = 'float';
  try {
    const answer = await postRun(ctx, body);
    agentMetadata = answer?.result ?? null;
    // Without an answer the reward is reward_func's default 0.0.
    rewardType = answer?.rewardType ?? 'float';
    episode = playedEpisode(agentMetadata);
    try {
      reply = await client.collectSamples(sessionId, {
        maxSeqLen: ctx.maxSeqLen,
        ...(agentMetadata === null ? {} : { metadata: agentMetadata }),
      });
    } catch (error) {
      collectError = error;
    }
  } finally {
    await client.delete(sessionId).catch(() => undefined);
  }
  const requests = toPolicyRequests(ctx.requestsFor(sessionId));
  if (collectError !== null) {
    // A non-2xx answer or an undecodable reply raises; a transport failure is an ABORTED placeholder,
    // named for a worker that is gone (its sessions die with it; the other workers' are untouched).
    if (isHarnessError(collectError)) throw new CollectRaisedError(collectError);
    return {
      ...base,
      samples: [abortedPlaceholder(input)],
      aborted: true,
      abort_reason: workerGone(collectError) ? 'session_server_worker_gone' : 'collect_failed',
      episode,
      tree: null,
      requests,
    };
  }
  const collected = reply!;
  const tree = collected.sessionMetadata.tree;
  if (collected.samples.length === 0)
    return {
      ...base,
      samples: [abortedPlaceholder(input)],
      aborted: true,
      abort_reason: collected.emptyReason ?? 'no_samples',
      episode,
      tree,
      requests,
    };
  let samples: ReplaySample[] = collected.samples.map((wire) => overlayWireSample(input, wire));
  samples = fillRewards(stampRolloutId(input, samples));
  // agentic_tool_call.generate: the agent's `total_tool_time`, when reported, on every sample.
  const toolTime = agentMetadata?.agent_metrics.total_tool_time;
  samples = samples.map((s) => ({
    ...s,
    reward_type: rewardType,
    ...(toolTime === undefined || toolTime === null ? {} : { non_generation_time: toolTime }),
  }));
  return {
    ...base,
    rollout_id: samples[0]!.rollout_id,
    samples,
    aborted: samples.some((s) => s.status === 'aborted'),
    abort_reason: samples.some((s) => s.status === 'aborted') ? 'aborted_turn' : null,
    episode,
    tree,
    requests,
  };
}
