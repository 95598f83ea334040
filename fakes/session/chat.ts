import type { IncomingHttpHeaders } from 'node:http';
import { HarnessError } from '../../common/errors.ts';
import { PythonJsonDecodeError } from '../../common/python-json/faithful-loads.ts';
import { isJsonObject, pythonRepr, pythonTruthy } from '../../common/python-json/values.ts';
import type { MilesSwitches } from '../../contracts/miles-profile.ts';
import type { TemplateKwargs, TitoFamily } from '../tokenizer/tito.ts';
import { type BackendClient, BackendTransportError } from './backend.ts';
import type { ChatBodyReader } from './chat-body-reader.ts';
import { HttpFailure, internalServerError, jsonError, sessionNotFound } from './errors.ts';
import { MatcherError } from './matcher.ts';
import type { SessionRecord } from './record.ts';
import type { RecordMemory } from './record-memory.ts';
import {
  prepareChatRequest,
  type ResponseIntent,
  refuseBoundedSampling,
  templateArgsOf,
} from './request-args.ts';
import {
  chatClientResponse,
  extractCompletion,
  fakeStreamResponse,
  type OutgoingResponse,
  passThrough,
} from './responses.ts';
import { commitGeneration, positionForRequest, preparePrompt, type SessionState } from './state.ts';
import type { TokenSnapshot } from './token-snapshot.ts';
import type { TrajectoryNode } from './tree.ts';
import type { ReplyBufferPool } from './wire/reply-buffers.ts';

/**
 * `POST /sessions/{id}/v1/chat/completions` in v2 (radixark/miles@31f1ca96 miles/rollout/session/v2/core.py
 * `SessionCoreV2.chat_completions`; docs/architecture.md "How a request flows"): Phase 1 under the session
 * lock (parse, rewrite, position, pretokenize), Phase 2 without it (the backend call), Phase 3 under it again
 * (validate, commit as a child of the node captured in Phase 1, so concurrent generations become
 * siblings).
 */

export interface ChatConfig {
  readonly family: TitoFamily;
  readonly backend: BackendClient;
  /** Launch-level `--apply-chat-template-kwargs`. */
  readonly launchKwargs: TemplateKwargs;
  readonly returnRoutedExperts: boolean;
  readonly returnIndexerTopk: boolean;
  readonly lora: boolean;
  /** Epoch seconds. */
  readonly now: () => number;
  /** The Miles profile's switches (contracts/miles-profile.ts). */
  readonly switches: MilesSwitches;
  /** Told the id of every node a chat commits. */
  readonly onCommitted?: (sessionId: string, nodeId: number) => void;
  /** How a request is held, recorded and written (record-memory.ts: Miles' plain way, or shared). */
  readonly recordMemory: RecordMemory;
  /**
   * Buffers the forwarded bodies are written into, each given back once sent: a 32k-token body is
   * ≈ 0.4 MB, and a fresh buffer per call cost more (new pages) than writing it. Absent: fresh buffers.
   */
  readonly forwardBuffers?: ReplyBufferPool;
}

export interface IncomingChat {
  readonly state: SessionState;
  readonly headers: IncomingHttpHeaders;
  readonly query: string;
  readonly method: string;
  readonly body: Buffer;
  readonly requestTimestamp: number;
}

interface Prepared {
  readonly body: Record<string, unknown>;
  readonly payload: Buffer;
  readonly intent: ResponseIntent;
  readonly messages: unknown[];
  readonly prompt: TokenSnapshot;
  readonly attachParent: TrajectoryNode | null;
  /** `messages` was `{}`: rendered and sent as an empty conversation, but the commit's `{}[n:]` raises. */
  readonly commitRaises: boolean;
}

/** The request rewritten for the backend: what the client's reply carries, and how the prompt renders. */
interface Rewritten {
  readonly intent: ResponseIntent;
  readonly kwargs: TemplateKwargs;
  readonly tools: unknown;
}

function parseChatBody(raw: Buffer, reader: ChatBodyReader): Record<string, unknown> {
  if (raw.length === 0) return {};
  let parsed: unknown;
  try {
    // Floats stay floats (chat-body-reader.ts): any reader gives the value or error of the whole parse.
    parsed = reader.load(raw);
  } catch (error) {
    // Miles catches only JSONDecodeError: undecodable bytes (UnicodeDecodeError) are a plain 500.
    if (!(error instanceof PythonJsonDecodeError)) throw internalServerError(error);
    throw jsonError(400, `invalid JSON body: ${error.message}`);
  }
  if (!isJsonObject(parsed)) throw internalServerError('chat body is not a JSON object');
  return parsed;
}

/**
 * The kwargs a session server starts with: the launch ones with the family's fixed kwargs put in, as
 * Miles' `TITOTokenizer.__init__` does (radixark/miles@31f1ca96 miles/utils/chat_template_utils/
 * tito_tokenizer.py: a launch value that conflicts is refused, a missing key is appended). For qwen3 that
 * is `clear_thinking: false`, which every chat request then carries to the policy.
 */
export function launchKwargsFor(family: TitoFamily, launch: TemplateKwargs): TemplateKwargs {
  const out: Record<string, unknown> = { ...launch };
  for (const [key, fixed] of Object.entries(family.fixedKwargs)) {
    if (key in launch && launch[key] !== fixed) {
      throw new HarnessError(
        'config.invalid',
        `chat template kwarg ${key}=${pythonRepr(launch[key])} conflicts with the value registered for ${family.className}: ${pythonRepr(fixed)}`,
        { details: { field: 'chat_template_kwargs' } },
      );
    }
    out[key] = fixed;
  }
  return out;
}

/** Request `chat_template_kwargs` over the launch ones; the effective kwargs, or a 400. */
function effectiveKwargs(config: ChatConfig, body: Record<string, unknown>): TemplateKwargs {
  const requested = body.chat_template_kwargs;
  if (requested !== undefined && requested !== null && !isJsonObject(requested)) {
    throw jsonError(400, 'chat_template_kwargs must be an object');
  }
  let effective: TemplateKwargs = { ...config.launchKwargs };
  if (isJsonObject(requested) && Object.keys(requested).length > 0) {
    effective = { ...effective, ...requested };
    for (const [key, fixed] of Object.entries(config.family.fixedKwargs)) {
      if (key in requested && requested[key] !== fixed) {
        throw jsonError(
          400,
          `chat template kwarg ${key}=${pythonRepr(requested[key])} conflicts with the value registered for ${config.family.className}: ${pythonRepr(fixed)}`,
        );
      }
    }
  }
  if (Object.keys(effective).length > 0) body.chat_template_kwargs = { ...effective };
  else delete body.chat_template_kwargs;
  return effective;
}

/** 31f1ca96's rewrite (core.py `prepare_chat_request`), before the attach point is found. */
function rewriteRequest(config: ChatConfig, body: Record<string, unknown>): Rewritten {
  const stream = pythonTruthy(body.stream);
  delete body.stream;
  delete body.stream_options;
  body.logprobs = true;
  body.return_meta_info = true;
  if (config.returnRoutedExperts) body.return_routed_experts = true;
  if (config.returnIndexerTopk) body.return_indexer_topk = true;
  body.no_stop_trim = false;
  if (config.lora) body.lora_path = 'miles_lora';
  const kwargs = effectiveKwargs(config, body);
  if (config.switches.refuseBoundedSampling) refuseBoundedSampling(body);
  return { intent: { stream, logprobs: true }, kwargs, tools: body.tools };
}

/** The newer resolution (request-args.ts), once the attach node (whose request is the history) is known. */
function resolveRequest(
  config: ChatConfig,
  state: SessionState,
  body: Record<string, unknown>,
  attach: TrajectoryNode | null,
): Rewritten {
  const intent = prepareChatRequest(
    body,
    { ...config, fixedKwargs: config.family.fixedKwargs, ...config.switches },
    state.requestDefaults,
    attach === null ? null : attach.record.request,
  );
  const { kwargs, tools } = templateArgsOf(body);
  return { intent, kwargs, tools };
}

/**
 * What Miles' attach walk sees of `request_body.get("messages", [])`, which it never type-checks: the walk
 * calls `len()` on it and indexes it only against a node's (never empty) delta, so on an empty tree any
 * value passes, and `""` or `{}` (length 0, never indexed) pass on any tree; anything else raises there.
 * Checked against both profiles by the raw requests of `harness conformance`.
 */
function positionedMessages(state: SessionState, messages: unknown): unknown[] {
  if (Array.isArray(messages)) return messages;
  if (messages === '' || isEmptyObject(messages) || state.tree.size === 0) return [];
  // A string indexes to its characters, which the matcher then fails on (its 500 JSON); a dict's `[0]`
  // and a number's `len()` raise outside the matcher.
  if (typeof messages === 'string') return [...messages];
  throw internalServerError('messages is not a list: the attach walk raises');
}

/**
 * Past positioning, `""` and `{}` render as an empty conversation (the template iterates nothing) and go
 * upstream; `""` commits (`list(""[n:])` is `[]`), `{}` raises at the commit. Any other non-list raises
 * in the render: a plain 500 before the backend is called.
 */
function renderable(messages: unknown): void {
  if (!Array.isArray(messages) && messages !== '' && !isEmptyObject(messages))
    throw internalServerError('messages is not a list: the render raises');
}

function isEmptyObject(value: unknown): boolean {
  return isJsonObject(value) && Object.keys(value).length === 0;
}

function phase1(config: ChatConfig, chat: IncomingChat): Prepared {
  const { state } = chat;
  if (state.closing) {
    state.bodyReader.release();
    throw sessionNotFound(state.id);
  }
  const body = parseChatBody(chat.body, state.bodyReader);
  // 31f1ca96 rewrites the request before positioning it; the newer Miles finds the attach node first.
  const resolvedLater = config.switches.forwardedRequestDefaults;
  const early = resolvedLater ? null : rewriteRequest(config, body);
  // `request_body.get("messages", [])`: whatever the client sent, read once.
  const requested = 'messages' in body ? body.messages : [];
  const messages = positionedMessages(state, requested);
  let attach: TrajectoryNode | null;
  try {
    attach = positionForRequest(state, messages, config.switches.activeLeaf);
  } catch (error) {
    if (error instanceof MatcherError) throw jsonError(500, error.message);
    throw error;
  }
  const rewritten = early ?? crashIsPlain500(() => resolveRequest(config, state, body, attach));
  renderable(requested);
  const memory = config.recordMemory;
  memory.adoptHistory(messages, attach);
  const prompt = crashIsPlain500(() =>
    preparePrompt(config.family, attach, messages, rewritten.kwargs, rewritten.tools),
  );
  memory.setPromptIds(body, prompt);
  const pool = config.forwardBuffers;
  const payload = memory.forwardedBytes(body, pool === undefined ? undefined : (size) => pool.take(size));
  const commitRaises = isEmptyObject(requested);
  return { body, payload, intent: rewritten.intent, messages, prompt, attachParent: attach, commitRaises };
}

/** Runs `step`; Miles' own refusals pass, anything else is the plain 500 of an unhandled exception. */
function crashIsPlain500<T>(step: () => T): T {
  try {
    return step();
  } catch (error) {
    if (error instanceof HttpFailure) throw error;
    throw internalServerError(error);
  }
}

function responseIdOf(response: Record<string, unknown>): string | null {
  if (!('id' in response)) return '';
  const id = response.id;
  if (id === null) return null;
  return typeof id === 'string' ? id : String(id);
}

/** Runs one chat request to completion; the returned response (or thrown `HttpFailure`) is the answer. */
export async function handleChat(config: ChatConfig, chat: IncomingChat): Promise<OutgoingResponse> {
  const { state } = chat;
  const prepared = await state.lock.run(() => phase1(config, chat));

  let upstream: Awaited<ReturnType<BackendClient['forward']>>;
  try {
    upstream = await config.backend.forward({
      method: chat.method,
      path: 'v1/chat/completions',
      query: chat.query,
      headers: chat.headers,
      body: prepared.payload,
      routingKey: state.id,
      ...(config.forwardBuffers === undefined
        ? {}
        : { onSent: () => config.forwardBuffers?.give(prepared.payload) }),
    });
  } catch (error) {
    if (error instanceof BackendTransportError) {
      throw jsonError(502, `backend transport error: ${error.className}: ${error.message}`);
    }
    throw internalServerError(error);
  }
  if (upstream.status !== 200) return passThrough(upstream);
  const completion = extractCompletion(upstream.body, config.switches.upstreamAbortIs503);
  try {
    config.family.tokenizer.learnMessage(completion.assistantMessage);
  } catch {
    // Learning the reply's words only improves decoded text; a reply the toy cannot render still commits.
  }

  await state.lock.run(() => {
    if (state.closing) {
      // Deleted while this request was out: nothing more to reuse in this session.
      state.bodyReader.release();
      return;
    }
    const record: SessionRecord = {
      timestamp: config.now(),
      request_timestamp: chat.requestTimestamp,
      method: 'POST',
      path: '/v1/chat/completions',
      request: prepared.body,
      response: completion.response,
      status_code: 200,
    };
    const finish = completion.choice.finish_reason;
    try {
      if (prepared.commitRaises) throw new TypeError("unhashable type: 'slice'");
      const node = commitGeneration(state, {
        attachParent: prepared.attachParent,
        requestMessages: prepared.messages,
        prompt: prepared.prompt,
        completionIds: completion.completionIds,
        assistantMessage: completion.assistantMessage,
        record,
        responseId: responseIdOf(completion.response),
        finishReason: pythonTruthy(finish) ? String(finish) : '',
        maxTrimTokens: config.family.maxTrimTokens,
      });
      config.recordMemory.committed(record.request, node);
      config.onCommitted?.(state.id, node.seq);
    } catch (error) {
      // The node cap is Miles' unhandled ValueError: a plain 500, like any other crash here.
      if (error instanceof HttpFailure) throw error;
      throw internalServerError(error);
    }
  });

  return prepared.intent.stream
    ? fakeStreamResponse(upstream.status, completion)
    : chatClientResponse(upstream, completion, {
        stripMetaInfo: config.switches.chatReplyStripsMetaInfo,
        logprobs: prepared.intent.logprobs,
      });
}
