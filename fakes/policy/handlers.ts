import { HttpResponse, http, type RequestHandler } from 'msw';
import { isJsonObject } from '../../common/python-json/values.ts';
import { createAnswerState } from './answer.ts';
import { answerRequest, type ChatRouteState } from './chat-route.ts';
import { bodyBytesReader, promptHashing } from './compose.ts';
import { Counter } from './counter.ts';
import { createPolicyEvents, type PolicyEvents } from './events.ts';
import type { PolicyOptions } from './options.ts';
import type { PolicyChatReply, PolicyRequestLike } from './policy-request.ts';
import { PolicyRequestLog } from './request-log.ts';

export type { PolicyOptions } from './options.ts';
export type { PolicyRequestLike } from './policy-request.ts';

/**
 * The fake SGLang-style policy backend, defined once as msw request handlers: `setupServer(...handlers)`
 * in-process (unit tests, fault injection), or served to other processes by `startPolicyServer`.
 *
 * - **synthetic**: a deterministic Terminus-2 style reply derived from the prompt tokens; optional
 *   context length, above which it answers SGLang's context-length 400.
 * - **script**: the answers of `session-trace/1` files; turn k's answer is chosen by the
 *   `x-harness-trace-turn` header (so turns the session server refuses before calling the backend, such
 *   as a 409, do not shift the script), or in arrival order without it.
 *
 * Both obey `x-harness-directive`. Token ids come from the same toy tokenizer as the session server.
 * How a chat is answered: chat-route.ts, then answer.ts; this file wires them to msw and the events.
 */

type Chat = (request: PolicyRequestLike) => Promise<PolicyChatReply>;

export interface Policy {
  readonly handlers: RequestHandler[];
  readonly log: PolicyRequestLog;
  /** The chat route without msw, for the socket server's hot path; the msw handler calls the same. */
  readonly chat: Chat;
  /** What the policy did (`chat:answered`, `request:unhandled`, `request:crashed`), for tests to await. */
  readonly events: PolicyEvents;
  /** The next request id of `events`' sequence (the server numbers its unhandled requests with it). */
  readonly nextRequestId: () => number;
}

export function createPolicy(options: PolicyOptions): Policy {
  const log = options.log ?? new PolicyRequestLog();
  const answer = createAnswerState(options);
  const state: ChatRouteState = {
    log,
    // Each session's previous body, so a re-sent history is compared rather than parsed (compose.ts).
    bytesReader: bodyBytesReader(log.keepMessages),
    clock: answer.clock,
    hashes: promptHashing(),
    answer,
  };
  const events = createPolicyEvents();
  const requests = new Counter();
  const nextRequestId = () => requests.next();
  const chat = observed((request) => answerRequest(state, request), events, nextRequestId);
  const handlers = routes(options.origin ?? '*', answer.model, chat);
  return { handlers, log, chat, events, nextRequestId };
}

/** `chat`, numbered and reported on `events`. */
function observed(chat: Chat, events: PolicyEvents, nextRequestId: () => number): Chat {
  return async (request) => {
    const requestId = nextRequestId();
    let reply: PolicyChatReply;
    try {
      reply = await chat(request);
    } catch (error) {
      events.emit('request:crashed', { requestId, error });
      throw error;
    }
    const { status, body } = reply;
    const responseId = status === 200 && isJsonObject(body) && typeof body.id === 'string' ? body.id : null;
    events.emit('chat:answered', { requestId, status, responseId });
    return reply;
  };
}

/** The msw handlers under `origin`: the chat route, and what else SGLang and its router answer. */
function routes(origin: string, model: string, chat: Chat): RequestHandler[] {
  return [
    http.post(`${origin}/v1/chat/completions`, async ({ request }) => {
      const answer = await chat(request);
      return HttpResponse.json(answer.body as never, { status: answer.status });
    }),
    http.get(`${origin}/health`, () => new HttpResponse(null, { status: 200 })),
    http.get(`${origin}/v1/models`, () =>
      HttpResponse.json({ object: 'list', data: [{ id: model, object: 'model', owned_by: 'harness' }] }),
    ),
    // Miles ends every rollout step by listing the router's workers and aborting each one
    // (radixark/miles@31f1ca96 inference_rollout_train.py abort/get_worker_urls: sglang-router > 0.2.1
    // answers `GET /workers` with `{"workers": [{"url"}]}`; SGLang's `POST /abort_request` answers an
    // empty 200). This fake is its own router and only worker; nothing of it is ever in flight to abort.
    http.get(`${origin}/workers`, ({ request }) =>
      HttpResponse.json({ workers: [{ url: new URL(request.url).origin }] }),
    ),
    http.post(`${origin}/abort_request`, () => new HttpResponse(null, { status: 200 })),
  ];
}

/** The policy's msw handlers (see `createPolicy` for the request log alongside them). */
export function policyHandlers(options: PolicyOptions): RequestHandler[] {
  return createPolicy(options).handlers;
}
