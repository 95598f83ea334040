import { getResponse, http } from 'msw';
import { parseJson } from '../../../common/python-json/loads.ts';
import { type Directive, parseDirective } from '../../../contracts/directive.ts';
import { DIRECTIVE_HEADER } from '../../../contracts/policy-headers.ts';
import { createPolicy } from '../../policy/handlers.ts';
import type { TitoModel } from '../../tokenizer/tito.ts';
import type { ChatMessage } from '../engine/token-estimate.ts';

/**
 * For unit tests of the engine and the agent server: the real fake policy (`createPolicy`, synthetic
 * mode) answering at a session URL (`{baseUrl}/chat/completions`), as it would behind the session
 * server. It obeys `x-harness-directive` with the policy's own parser; `obeyDirectives: false` strips the
 * header first, so it answers like a real model that ignores it. Every request is recorded.
 */

export interface RecordedChatRequest {
  readonly url: string;
  readonly model: unknown;
  readonly messages: ChatMessage[];
  readonly body: Record<string, unknown>;
  readonly directive: Directive | undefined;
  readonly status: number;
  /** The policy's answer body (a completion's `choices[0]` and `meta_info` hold the ids). */
  readonly response: unknown;
}

export interface DirectivePolicyOptions {
  /** Base URL the handlers answer under; calls go to `{baseUrl}/chat/completions`. */
  readonly baseUrl: string;
  readonly obeyDirectives?: boolean;
  /** With `obeyDirectives: false`: the text the model writes (sent to the policy as its `content`). */
  readonly freeText?: (request: RecordedChatRequest, index: number) => string;
  /** Holds every answer until this signal aborts (a policy that is still thinking). */
  readonly holdUntil?: AbortSignal;
  /** The policy's TITO family (default the toy's): `qwen3` answers with Qwen3's real ids. */
  readonly tokenizer?: TitoModel;
}

export function directivePolicy(options: DirectivePolicyOptions) {
  const requests: RecordedChatRequest[] = [];
  const obey = options.obeyDirectives ?? true;
  const base = options.baseUrl.replace(/\/+$/, '');
  // The policy matches `{origin}/v1/chat/completions`; a session URL ends in `/v1`.
  const policy = createPolicy({
    mode: 'synthetic',
    origin: base.replace(/\/v1$/, ''),
    ...(options.tokenizer === undefined ? {} : { tokenizer: options.tokenizer }),
  });
  const handler = http.post(`${base}/chat/completions`, async ({ request }) => {
    const body = parseJson(await request.clone().text()) as Record<string, unknown>;
    const parsed = parseDirective(request.headers.get(DIRECTIVE_HEADER));
    const directive = parsed.ok ? (parsed.directive ?? undefined) : undefined;
    const headers = new Headers(request.headers);
    const index = requests.length;
    const recorded = {
      url: request.url,
      model: body.model,
      messages: body.messages as ChatMessage[],
      body,
      directive,
      status: 0,
      response: null as unknown,
    };
    requests.push(recorded);
    if (!obey) {
      headers.delete(DIRECTIVE_HEADER);
      const text = options.freeText?.(recorded, index);
      if (text !== undefined) headers.set(DIRECTIVE_HEADER, JSON.stringify({ content: text }));
    }
    if (options.holdUntil && !options.holdUntil.aborted)
      await new Promise((resolve) => options.holdUntil?.addEventListener('abort', resolve, { once: true }));
    const forwarded = new Request(request.url, { method: 'POST', headers, body: JSON.stringify(body) });
    const response = await getResponse(policy.handlers, forwarded);
    if (response === undefined) throw new Error(`the policy did not answer ${request.url}`);
    recorded.status = response.status;
    const text = await response.clone().text();
    recorded.response = text === '' ? null : parseJson(text);
    return response;
  });
  return { handler, requests, log: policy.log };
}
