import { starletteJson } from '../../common/python-json/dumps.ts';
import { pythonJsonLoadsBytes } from '../../common/python-json/loads.ts';
import { isJsonObject, pythonRepr, pythonTruthy } from '../../common/python-json/values.ts';
import type { BackendResult } from './backend.ts';
import { internalServerError, JSON_CONTENT_TYPE, jsonError } from './errors.ts';
import type { ReplyStream } from './wire/reply-stream.ts';

/**
 * What the session server does with a backend answer (radixark/miles@31f1ca96
 * miles/rollout/session/core.py: extract_completion, _chat_client_response, proxy_result_to_response).
 */

/** A response ready to write: status, headers (lowercase names) and bytes. */
export interface OutgoingResponse {
  readonly status: number;
  readonly headers: Record<string, string | readonly string[]>;
  readonly body: Buffer;
  /** A body streamed instead of `body` (the samples reply; content-length is its length). */
  readonly stream?: ReplyStream;
  /** Close the connection once this is sent (the fake's 413: the rest of a huge body is never read). */
  readonly closeConnection?: boolean;
}

export interface Completion {
  readonly response: Record<string, unknown>;
  readonly choice: Record<string, unknown>;
  readonly assistantMessage: Record<string, unknown>;
  readonly completionIds: number[];
}

const META_INFO_ERROR = 'meta_info and output_token_logprobs must be in choice (requires logprobs=True)';
const CONTENT_NONE_ERROR =
  'assistant message content is None, when tool call parser failed SGLang should still return an empty content rather than None. Please check your modified SGLang version.';

export const UPSTREAM_ABORTED_ERROR = 'upstream generation aborted before completion';

function pyStr(v: unknown): string {
  return typeof v === 'string' ? v : pythonRepr(v);
}

/**
 * Validates a 200 body. Miles' own checks become 502 JSON; anything its code would crash on (no JSON,
 * `choices: []`, no `completion_tokens`, …) is a plain 500.
 */
export function extractCompletion(body: Buffer, abortIs503 = false): Completion {
  let response: unknown;
  try {
    response = pythonJsonLoadsBytes(body);
  } catch (error) {
    throw internalServerError(error);
  }
  if (!isJsonObject(response)) throw internalServerError('backend JSON is not an object');
  const choices = 'choices' in response ? response.choices : [{}];
  if (!Array.isArray(choices) || choices.length === 0) throw internalServerError('no choices[0]');
  const choice = choices[0];
  if (!isJsonObject(choice)) throw internalServerError('choices[0] is not an object');
  // Switch `upstreamAbortIs503` (sii-avalanche/miles@4d412b5a miles/rollout/session/core.py
  // `extract_completion`, errors.py `UpstreamGenerationAbortedError`; radixark PR #3337): nothing is committed.
  if (abortIs503 && choice.finish_reason === 'abort') throw jsonError(503, UPSTREAM_ABORTED_ERROR);
  const meta = choice.meta_info;
  if (!isJsonObject(meta) || !('output_token_logprobs' in meta)) throw jsonError(502, META_INFO_ERROR);
  const message = pythonTruthy(choice.message) ? choice.message : {};
  if (!isJsonObject(message)) throw internalServerError('message is not an object');
  if (message.content === null || message.content === undefined) throw jsonError(502, CONTENT_NONE_ERROR);
  if (!('completion_tokens' in meta)) throw internalServerError("KeyError: 'completion_tokens'");
  const pairs = meta.output_token_logprobs;
  if (!Array.isArray(pairs)) throw internalServerError('output_token_logprobs has no len()');
  const declared =
    typeof meta.completion_tokens === 'boolean' ? Number(meta.completion_tokens) : meta.completion_tokens;
  if (pairs.length !== declared) {
    throw jsonError(
      502,
      `invalid chat completion response: len(output_token_logprobs)=${pairs.length} != completion_tokens=${pyStr(meta.completion_tokens)}. Please check whether you use the correct SGLang branch which has fix the tokenizer batch decode issue.`,
    );
  }
  const completionIds = pairs.map((pair) => {
    if (!Array.isArray(pair) || typeof pair[1] !== 'number') throw internalServerError('bad logprob entry');
    return pair[1];
  });
  return { response, choice, assistantMessage: message, completionIds };
}

function jsonBody(value: unknown): Buffer {
  try {
    return Buffer.from(starletteJson(value), 'utf8');
  } catch (error) {
    throw internalServerError(error);
  }
}

/** The backend JSON minus `routed_experts` and `indexer_topk` in every choice's `meta_info`. */
export function clientCopy(response: Record<string, unknown>): Record<string, unknown> {
  const choices = Array.isArray(response.choices)
    ? response.choices.map((c) => {
        if (!isJsonObject(c) || !isJsonObject(c.meta_info)) return c;
        const { routed_experts: _r, indexer_topk: _i, ...meta } = c.meta_info;
        return { ...c, meta_info: meta };
      })
    : response.choices;
  return 'choices' in response ? { ...response, choices } : { ...response };
}

/**
 * Switch `chatReplyStripsMetaInfo` (sii-avalanche/miles@4d412b5a miles/rollout/session/core.py
 * `_client_response_body`): every choice without `meta_info`, and without `logprobs` unless the client's
 * request asked for them; the recorded response keeps both.
 */
export function clientBodyWithoutMetaInfo(
  response: Record<string, unknown>,
  logprobs: boolean,
): Record<string, unknown> {
  const choices = Array.isArray(response.choices) ? response.choices : [];
  return {
    ...response,
    choices: choices.map((choice) => {
      if (!isJsonObject(choice)) throw internalServerError('choice is not a dict');
      const { meta_info: _meta, ...kept } = choice;
      if (!logprobs) delete kept.logprobs;
      return kept;
    }),
  };
}

/** How the reply to the client is cut from the backend's (the profile's switch and the client's ask). */
export interface ClientReplyShape {
  readonly stripMetaInfo: boolean;
  /** The client's own `logprobs` was truthy. */
  readonly logprobs: boolean;
}

/** The non-stream 200 for the client. */
export function chatClientResponse(
  upstream: BackendResult,
  completion: Completion,
  shape: ClientReplyShape = { stripMetaInfo: false, logprobs: true },
): OutgoingResponse {
  const headers: Record<string, string | readonly string[]> = { ...upstream.headers };
  headers['content-type'] ??= JSON_CONTENT_TYPE;
  const body = shape.stripMetaInfo
    ? clientBodyWithoutMetaInfo(completion.response, shape.logprobs)
    : clientCopy(completion.response);
  return { status: 200, headers, body: jsonBody(body) };
}

/**
 * The single-chunk fake stream: one `chat.completion.chunk`, then `[DONE]` (core.py `_chat_client_response`).
 */
export function fakeStreamResponse(status: number, completion: Completion): OutgoingResponse {
  const { response, choice, assistantMessage: message } = completion;
  const delta: Record<string, unknown> = {
    role: pythonTruthy(message.role) ? message.role : 'assistant',
    content: message.content,
  };
  if (message.reasoning_content !== null && message.reasoning_content !== undefined) {
    delta.reasoning_content = message.reasoning_content;
  }
  if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) {
    delta.tool_calls = message.tool_calls.map((call, index) =>
      isJsonObject(call) ? { ...call, index } : call,
    );
  }
  const chunk: Record<string, unknown> = {
    id: response.id ?? null,
    object: 'chat.completion.chunk',
    created: response.created ?? null,
    model: response.model ?? null,
    choices: [{ index: 0, delta, finish_reason: choice.finish_reason ?? null }],
  };
  if (response.usage !== null && response.usage !== undefined) chunk.usage = response.usage;
  let payload: string;
  try {
    payload = starletteJson(chunk);
  } catch (error) {
    throw internalServerError(error);
  }
  return {
    status,
    headers: {
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      'content-type': 'text/event-stream; charset=utf-8',
    },
    body: Buffer.from(`data: ${payload}\n\ndata: [DONE]\n\n`, 'utf8'),
  };
}

/** `proxy_result_to_response`: upstream status; JSON re-rendered compact, anything else verbatim. */
export function passThrough(upstream: BackendResult): OutgoingResponse {
  const headers: Record<string, string | readonly string[]> = { ...upstream.headers };
  let parsed: unknown;
  let isJson = upstream.body.length > 0;
  if (isJson) {
    try {
      parsed = pythonJsonLoadsBytes(upstream.body);
    } catch {
      isJson = false;
    }
  }
  if (!isJson) return { status: upstream.status, headers, body: upstream.body };
  headers['content-type'] ??= JSON_CONTENT_TYPE;
  return { status: upstream.status, headers, body: jsonBody(parsed) };
}
