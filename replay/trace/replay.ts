import { basename } from 'node:path';
import type { MilesProfile } from '../../contracts/miles-profile.ts';
import { TRACE_ID_HEADER, TRACE_TURN_HEADER } from '../../contracts/policy-headers.ts';
import type { SessionTrace } from '../../contracts/trace.ts';
import type { EmptyReason, SamplesReply, TreeMetadata, WireSample } from '../../contracts/wire-sample.ts';
import { startPolicyServer } from '../../fakes/policy/server.ts';
import { createSessionClient, SessionRequestError } from '../../fakes/session/client.ts';
import { startSessionServer } from '../../fakes/session/server.ts';
import type { TitoModel } from '../../fakes/tokenizer/tito.ts';

/**
 * Replays a `session-trace/1` through a session server: every turn's request in order (each tagged with
 * its turn index, so a scripted policy answers the right turn even when the server refuses one before
 * calling the backend), then the tree from GET and the samples op with the trace's `max_seq_len` and
 * agent metadata. The result has the shape of the conformance `expected` files.
 */

interface ReplayedSample {
  readonly tokens: number[];
  readonly loss_mask: number[] | null;
  readonly response_length: number;
  readonly status: WireSample['status'];
  readonly reward: unknown;
  readonly metadata: { readonly leaf: unknown };
}

export interface ReplayResult {
  readonly turns: Array<{ status: number }>;
  readonly tree: TreeMetadata;
  readonly samples: ReplayedSample[];
  readonly empty_reason: EmptyReason;
  readonly samples_error?: { status: number; detail: string };
}

export interface ReplayDetails {
  readonly result: ReplayResult;
  /** The decoded samples reply (absent when the samples op failed). */
  readonly reply: SamplesReply | null;
}

/** The id a trace file is known by to `harness serve policy --script`: its base name without `.json`. */
export function traceIdForPath(path: string): string {
  return basename(path).replace(/\.json$/, '');
}

export interface ReplayOptions {
  /** Sent as `x-harness-trace-id` (needed when the policy holds several traces). */
  readonly traceId?: string;
}

/** Replays against a running session server whose backend scripts this trace. */
export async function replayTrace(
  trace: SessionTrace,
  sessionServerUrl: string,
  options: ReplayOptions = {},
): Promise<ReplayDetails> {
  const client = createSessionClient(sessionServerUrl);
  const sessionId = await client.create();
  try {
    const turns: Array<{ status: number }> = [];
    for (const [k, turn] of trace.turns.entries()) {
      const headers: Record<string, string> = { [TRACE_TURN_HEADER]: String(k) };
      if (options.traceId !== undefined) headers[TRACE_ID_HEADER] = options.traceId;
      const answer = await client.chat(sessionId, turn.request, { headers });
      turns.push({ status: answer.status });
    }
    const view = await client.get(sessionId);
    const base = { turns, tree: view.metadata.tree };
    try {
      const reply = await client.collectSamples(sessionId, {
        maxSeqLen: trace.max_seq_len ?? null,
        ...(trace.agent_metadata === undefined ? {} : { metadata: trace.agent_metadata }),
      });
      const samples = reply.samples.map((s) => ({
        tokens: s.tokens,
        loss_mask: s.loss_mask,
        response_length: s.response_length,
        status: s.status,
        reward: s.reward ?? null,
        metadata: { leaf: s.metadata.leaf },
      }));
      return { result: { ...base, samples, empty_reason: reply.emptyReason }, reply };
    } catch (error) {
      if (!(error instanceof SessionRequestError)) throw error;
      return {
        result: {
          ...base,
          samples: [],
          empty_reason: null,
          samples_error: { status: error.status, detail: error.detail },
        },
        reply: null,
      };
    }
  } finally {
    await client.delete(sessionId).catch(() => undefined);
  }
}

/** Replays through a fresh fake session server and a scripted fake policy, both on loopback. */
export async function replayTraceFresh(
  trace: SessionTrace,
  options: { titoModel?: TitoModel; milesProfile?: MilesProfile } = {},
): Promise<ReplayDetails> {
  const titoModel = options.titoModel ?? 'default';
  const policy = await startPolicyServer({ mode: 'script', script: trace, tokenizer: titoModel });
  try {
    const session = await startSessionServer({
      backendUrl: policy.url,
      titoModel,
      ...(options.milesProfile === undefined ? {} : { milesProfile: options.milesProfile }),
    });
    try {
      return await replayTrace(trace, session.url);
    } finally {
      await session.close();
    }
  } finally {
    await policy.close();
  }
}
