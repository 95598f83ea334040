import { z } from 'zod';
import { HarnessError } from '../../common/errors.ts';
import { parseJson } from '../../common/python-json/loads.ts';
import { type SamplesReply, TreeMetadataSchema } from '../../contracts/wire-sample.ts';
import { decodeSamples } from './wire/codec.ts';

/**
 * A small typed client for a Miles session server (the fake or a real one), used by every part of the
 * harness. Chats return their status whatever it is (non-200s are part of the protocol); the other calls
 * throw `SessionRequestError` on an unexpected status.
 */

/** An unexpected HTTP answer: `status` and the server's `detail` (its `error`/`detail` field, or text). */
export class SessionRequestError extends HarnessError {
  readonly status: number;
  readonly detail: string;
  constructor(operation: string, status: number, detail: string) {
    super('session.request_failed', `${operation} failed with HTTP ${status}: ${detail}`, {
      details: { operation, status, detail },
    });
    this.status = status;
    this.detail = detail;
  }
}

export interface ChatResult {
  readonly status: number;
  readonly headers: Headers;
  /** The raw body text (an SSE stream for `stream: true`). */
  readonly text: string;
  /** The parsed JSON body, or `null` when it is not JSON. */
  readonly json: unknown;
}

export const SessionViewSchema = z.object({
  session_id: z.string(),
  records: z.array(z.record(z.string(), z.unknown())),
  metadata: z.looseObject({
    accumulated_token_ids: z.array(z.number().int()),
    max_trim_tokens: z.number().int(),
    tree: TreeMetadataSchema,
  }),
});
/** `GET /sessions/{id}`. */
export type SessionView = z.infer<typeof SessionViewSchema>;

export interface CollectOptions {
  readonly maxSeqLen?: number | null;
  /** The agent metadata (sent as `metadata` only when given). */
  readonly metadata?: unknown;
}

export interface ChatOptions {
  readonly headers?: Readonly<Record<string, string>>;
  readonly signal?: AbortSignal;
}

export interface SessionClient {
  readonly baseUrl: string;
  health(): Promise<Record<string, unknown>>;
  /** `POST /sessions` → the new session id. */
  create(): Promise<string>;
  chat(sessionId: string, body: unknown, options?: ChatOptions): Promise<ChatResult>;
  get(sessionId: string): Promise<SessionView>;
  delete(sessionId: string): Promise<void>;
  /** `POST /sessions/{id}/samples`, decoded strictly. */
  collectSamples(sessionId: string, options?: CollectOptions): Promise<SamplesReply>;
}

function parseJsonOrNull(text: string): unknown {
  try {
    return parseJson(text);
  } catch {
    return null;
  }
}

/** The human part of an error body: `{"error": ...}`, `{"detail": ...}`, or the text. */
export function errorDetail(text: string): string {
  const json = parseJsonOrNull(text);
  if (typeof json === 'object' && json !== null) {
    const { error, detail, message } = json as Record<string, unknown>;
    for (const v of [error, detail, message]) if (typeof v === 'string') return v;
  }
  return text;
}

export function createSessionClient(baseUrl: string): SessionClient {
  const base = baseUrl.replace(/\/+$/, '');
  const enc = (id: string) => encodeURIComponent(id);

  const call = async (operation: string, method: string, path: string, expect: number, body?: unknown) => {
    const response = await fetch(`${base}${path}`, {
      method,
      ...(body === undefined
        ? {}
        : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
    });
    if (response.status !== expect) {
      throw new SessionRequestError(operation, response.status, errorDetail(await response.text()));
    }
    return response;
  };

  return {
    baseUrl: base,
    async health() {
      return parseJson(await (await call('health', 'GET', '/health', 200)).text()) as Record<string, unknown>;
    },
    async create() {
      const json = parseJson(await (await call('create session', 'POST', '/sessions', 200)).text()) as {
        session_id?: unknown;
      };
      if (typeof json.session_id !== 'string') {
        throw new SessionRequestError('create session', 200, 'reply has no session_id');
      }
      return json.session_id;
    },
    async chat(sessionId, body, options = {}) {
      const response = await fetch(`${base}/sessions/${enc(sessionId)}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(options.headers ?? {}) },
        body: JSON.stringify(body),
        ...(options.signal ? { signal: options.signal } : {}),
      });
      const text = await response.text();
      return { status: response.status, headers: response.headers, text, json: parseJsonOrNull(text) };
    },
    async get(sessionId) {
      const response = await call('get session', 'GET', `/sessions/${enc(sessionId)}`, 200);
      const parsed = SessionViewSchema.safeParse(parseJson(await response.text()));
      if (!parsed.success) throw new SessionRequestError('get session', 200, 'reply is not a session view');
      return parsed.data;
    },
    async delete(sessionId) {
      await call('delete session', 'DELETE', `/sessions/${enc(sessionId)}`, 204);
    },
    async collectSamples(sessionId, options = {}) {
      const body: Record<string, unknown> = { max_seq_len: options.maxSeqLen ?? null };
      if (options.metadata !== undefined) body.metadata = options.metadata;
      const response = await call(
        'collect samples',
        'POST',
        `/sessions/${enc(sessionId)}/samples`,
        200,
        body,
      );
      return decodeSamples(new Uint8Array(await response.arrayBuffer()));
    },
  };
}
