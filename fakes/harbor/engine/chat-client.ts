import { parseJson } from '../../../common/python-json/loads.ts';
import type { Directive } from '../../../contracts/directive.ts';
import { DIRECTIVE_HEADER } from '../../../contracts/policy-headers.ts';
import { ChatCallError, EpisodeAbortedError } from './errors.ts';
import type { ChatMessage } from './token-estimate.ts';

/**
 * One OpenAI-style chat-completion call against the trial's `base_url` (the Miles session URL,
 * `…/sessions/<id>/v1`). Steering for the fake policy travels in one header; the fake session
 * server forwards client headers to its backend and a real policy ignores the header.
 */

/** The directive protocol is the fake policy's (one definition; docs/architecture.md "Policy directives"). */
export type PolicyDirective = Directive;

/**
 * `_is_context_length_error`'s markers (Harbor 6c9ba3f0 src/harbor/llms/lite_llm.py), compared lower-case.
 */
const CONTEXT_LENGTH_MARKERS = [
  'context length exceeded',
  'context_length_exceeded',
  'maximum context length',
  "model's context length",
  'prompt is too long',
  'input is too long for requested model',
  '`inputs` tokens + `max_new_tokens`',
] as const;

export function isContextLengthMessage(text: string): boolean {
  const lower = text.toLowerCase();
  return CONTEXT_LENGTH_MARKERS.some((marker) => lower.includes(marker));
}

interface ChatUsage {
  readonly promptTokens: number;
  readonly completionTokens: number;
}

export interface ChatReply {
  readonly content: string;
  readonly reasoning?: string;
  /** `choices[0].message.tool_calls` when it is a non-empty list. */
  readonly toolCalls?: readonly unknown[];
  readonly finishReason: string;
  readonly usage?: ChatUsage;
  readonly responseId?: string;
}

export interface ChatRequest {
  readonly baseUrl: string;
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  readonly samplingParams: Readonly<Record<string, unknown>>;
  readonly directive?: PolicyDirective;
  readonly signal: AbortSignal;
  readonly fetchImpl: typeof fetch;
}

/** Header values must be ByteStrings: escape everything outside printable ASCII. */
export function encodeDirective(directive: PolicyDirective): string {
  return JSON.stringify(directive).replace(
    /[^\x20-\x7e]/g,
    (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** Keys the agent owns; sampling params never override them. */
const RESERVED_BODY_KEYS = new Set(['model', 'messages', 'stream', 'stream_options']);

export function chatCompletionsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/chat/completions`;
}

function toWireMessage(message: ChatMessage): Record<string, unknown> {
  const wire: Record<string, unknown> = { role: message.role, content: message.content };
  if (message.reasoning_content !== undefined && message.reasoning_content !== '')
    wire.reasoning_content = message.reasoning_content;
  if (message.tool_calls !== undefined) wire.tool_calls = message.tool_calls;
  if (message.tool_call_id !== undefined) wire.tool_call_id = message.tool_call_id;
  return wire;
}

function abortedError(signal: AbortSignal): EpisodeAbortedError {
  return new EpisodeAbortedError(signal.reason);
}

function readUsage(value: unknown): ChatUsage | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { prompt_tokens: p, completion_tokens: c } = value as Record<string, unknown>;
  if (typeof p !== 'number' || typeof c !== 'number') return undefined;
  return { promptTokens: p, completionTokens: c };
}

/** Sends one request; resolves with the reply or rejects with ChatCallError / EpisodeAbortedError. */
export async function postChatCompletion(request: ChatRequest): Promise<ChatReply> {
  if (request.signal.aborted) throw abortedError(request.signal);
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(request.samplingParams))
    if (!RESERVED_BODY_KEYS.has(key) && value !== null && value !== undefined) body[key] = value;
  body.model = request.model;
  body.messages = request.messages.map(toWireMessage);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (request.directive && Object.keys(request.directive).length > 0)
    headers[DIRECTIVE_HEADER] = encodeDirective(request.directive);

  let response: Response;
  let text: string;
  try {
    response = await request.fetchImpl(chatCompletionsUrl(request.baseUrl), {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal: request.signal,
      // A redirect would send the episode somewhere its base_url check never saw: fail instead.
      redirect: 'error',
    });
    text = await response.text();
  } catch (error) {
    if (request.signal.aborted) throw abortedError(request.signal);
    throw new ChatCallError('transport', `chat completion request failed: ${String(error)}`, {
      cause: error,
    });
  }
  if (response.status !== 200) {
    const kind = response.status === 400 && isContextLengthMessage(text) ? 'context_length' : 'http';
    throw new ChatCallError(kind, `chat completion answered ${response.status}: ${text.slice(0, 500)}`, {
      status: response.status,
    });
  }
  let parsed: unknown;
  try {
    parsed = parseJson(text);
  } catch (error) {
    throw new ChatCallError('bad_response', 'chat completion body is not JSON', {
      status: 200,
      cause: error,
    });
  }
  const root = (typeof parsed === 'object' && parsed !== null ? parsed : {}) as Record<string, unknown>;
  const choice = Array.isArray(root.choices)
    ? (root.choices[0] as Record<string, unknown> | undefined)
    : undefined;
  const message = choice?.message as Record<string, unknown> | undefined;
  if (!choice || !message)
    throw new ChatCallError('bad_response', 'chat completion has no choices[0].message', { status: 200 });
  const content = typeof message.content === 'string' ? message.content : '';
  const reasoning = typeof message.reasoning_content === 'string' ? message.reasoning_content : undefined;
  const toolCalls =
    Array.isArray(message.tool_calls) && message.tool_calls.length > 0 ? message.tool_calls : null;
  const usage = readUsage(root.usage);
  return {
    content,
    ...(reasoning !== undefined && reasoning !== '' ? { reasoning } : {}),
    ...(toolCalls === null ? {} : { toolCalls }),
    finishReason: typeof choice.finish_reason === 'string' ? choice.finish_reason : 'stop',
    ...(usage ? { usage } : {}),
    ...(typeof root.id === 'string' ? { responseId: root.id } : {}),
  };
}
