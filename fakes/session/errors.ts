import { starletteJson } from '../../common/python-json/dumps.ts';

/**
 * An HTTP answer that ends a request early, shaped as Miles sends it (radixark/miles@31f1ca96
 * miles/rollout/session/errors.py and the handlers in sessions.py; docs/architecture.md "Errors"): handled
 * errors are Starlette `JSONResponse`s `{"error": "..."}`; unhandled Python exceptions are a plain-text 500.
 */
export class HttpFailure extends Error {
  readonly status: number;
  readonly contentType: string;
  readonly body: string;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    status: number,
    contentType: string,
    body: string,
    options: { message?: string; headers?: Record<string, string> } = {},
  ) {
    super(options.message ?? body);
    this.name = 'HttpFailure';
    this.status = status;
    this.contentType = contentType;
    this.body = body;
    this.headers = options.headers ?? {};
  }
}

export const JSON_CONTENT_TYPE = 'application/json';
export const PLAIN_CONTENT_TYPE = 'text/plain; charset=utf-8';

/** A handled error: `{"error": message}`, compact, non-ASCII kept. */
export function jsonError(status: number, message: string): HttpFailure {
  return new HttpFailure(status, JSON_CONTENT_TYPE, starletteJson({ error: message }), { message });
}

/** FastAPI's own errors (`{"detail": ...}`): unknown route, wrong method. */
export function detailError(
  status: number,
  detail: string,
  headers: Record<string, string> = {},
): HttpFailure {
  return new HttpFailure(status, JSON_CONTENT_TYPE, starletteJson({ detail }), { message: detail, headers });
}

/** A plain-text answer (the samples op's 422s). */
export function plainError(status: number, text: string): HttpFailure {
  return new HttpFailure(status, PLAIN_CONTENT_TYPE, text);
}

/** What Starlette sends for an unhandled exception; `cause` is kept for logs, never sent. */
export function internalServerError(cause?: unknown): HttpFailure {
  const failure = new HttpFailure(500, PLAIN_CONTENT_TYPE, 'Internal Server Error', {
    message: `Internal Server Error (${cause instanceof Error ? cause.message : String(cause)})`,
  });
  return failure;
}

/** `SessionNotFoundError`. */
export function sessionNotFound(sessionId: string): HttpFailure {
  return jsonError(404, `session not found: session_id=${sessionId}`);
}
