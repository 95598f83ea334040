import type { IncomingMessage, ServerResponse } from 'node:http';
import type { BodyBufferPool } from './body-buffers.ts';

/** Thrown when a request body exceeds the server's limit; servers answer it with 413. */
export class BodyTooLargeError extends Error {
  readonly limitBytes: number;
  constructor(limitBytes: number) {
    super(`request body exceeds ${limitBytes} bytes`);
    this.name = 'BodyTooLargeError';
    this.limitBytes = limitBytes;
  }
}

/** The client went away before its request body arrived; there is nobody to answer. */
export class ClientGoneError extends Error {
  constructor(cause: unknown) {
    super('client disconnected before sending the whole request body', { cause });
    this.name = 'ClientGoneError';
  }
}

/**
 * Default cap on a chat body (session server): the largest request a 32k-context Terminus episode sends
 * is ~105 KB here and at most ~640 KiB with a real tokenizer (32,768 tokens of `\uXXXX`-escaped text plus
 * `input_ids`), while one 4 MiB word-dense body already costs seconds of CPU (docs/security.md
 * "Limits and defaults", scripts/bench/body-size-probe.ts).
 */
export const DEFAULT_BODY_LIMIT_BYTES = 4 * 1024 * 1024;

/**
 * Default cap for the policy, which receives the session server's forwarded body: the same messages plus
 * `input_ids`, up to ~4.5x the chat body for one-character words ("a a a" is 2 bytes a token, an id
 * up to 7). 8x the chat cap, so the policy never answers 413 to what the session server let through.
 */
export const DEFAULT_BACKEND_BODY_LIMIT_BYTES = 8 * DEFAULT_BODY_LIMIT_BYTES;

/** Reads the whole body as bytes, failing fast (without buffering the rest) once it passes `limitBytes`. */
export async function readBody(req: IncomingMessage, limitBytes = DEFAULT_BODY_LIMIT_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limitBytes) {
    req.resume();
    throw new BodyTooLargeError(limitBytes);
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of req) {
      const buf = chunk as Buffer;
      total += buf.length;
      if (total > limitBytes) {
        req.resume();
        throw new BodyTooLargeError(limitBytes);
      }
      chunks.push(buf);
    }
  } catch (error) {
    // Node rejects with `Error: aborted` (ECONNRESET) when the client hangs up mid-body.
    if (!(error instanceof BodyTooLargeError) && req.destroyed) throw new ClientGoneError(error);
    throw error;
  }
  return Buffer.concat(chunks, total);
}

/** A body read into a buffer lent by a pool (`readBodyPooled`). */
export interface BodyLease {
  readonly body: Buffer;
  /**
   * Gives the buffer back to the pool: call it once, when nothing reads `body` any more (the next
   * request may overwrite it). Twice throws.
   */
  release(): void;
}

const notPooled = (body: Buffer): BodyLease => ({ body, release: () => {} });

/**
 * `readBody`, the bytes read straight into a buffer lent by `pool` and sized by `content-length`
 * (no chunk list, no `Buffer.concat`, no fresh buffer per request): the same bytes, and the same
 * errors at the same points (413 before reading when the declared length is over the limit, or as
 * soon as the bytes pass it; `ClientGoneError` when the client hangs up mid-body). On an error the
 * buffer goes straight back to the pool (nothing else has seen it). A body without a declared length
 * (chunked), or any body when `pool` is false, is read by `readBody` into a buffer of its own.
 */
export async function readBodyPooled(
  req: IncomingMessage,
  limitBytes: number,
  pool: BodyBufferPool | false,
): Promise<BodyLease> {
  const header = req.headers['content-length'];
  const declared = header === undefined ? Number.NaN : Number(header);
  if (pool === false || !(Number.isSafeInteger(declared) && declared > 0 && declared <= limitBytes))
    return notPooled(await readBody(req, limitBytes));
  let target = pool.take(declared);
  // False once the bytes outgrew the declared length (a stream that is not Node's parser) and moved.
  let pooled = true;
  let total = 0;
  try {
    for await (const chunk of req) {
      const buf = chunk as Buffer;
      const end = total + buf.length;
      if (end > limitBytes) {
        req.resume();
        throw new BodyTooLargeError(limitBytes);
      }
      if (end > target.length) {
        const grown = Buffer.allocUnsafe(Math.min(limitBytes, 2 * end));
        target.copy(grown, 0, 0, total);
        if (pooled) pool.give(target);
        pooled = false;
        target = grown;
      }
      buf.copy(target, total);
      total = end;
    }
  } catch (error) {
    if (pooled) pool.give(target);
    // Node rejects with `Error: aborted` (ECONNRESET) when the client hangs up mid-body.
    if (!(error instanceof BodyTooLargeError) && req.destroyed) throw new ClientGoneError(error);
    throw error;
  }
  const body = total === target.length ? target : target.subarray(0, total);
  if (!pooled) return notPooled(body);
  let released = false;
  return {
    body,
    release: () => {
      if (released) throw new Error('request body released twice');
      released = true;
      pool.give(target);
    },
  };
}

/**
 * Makes the answer being written the connection's last: `connection: close`, and the socket destroyed
 * once the answer is out. A 413 uses it, so a client declaring a huge body cannot keep the server
 * reading and discarding it (Node otherwise drains the rest of the body to reuse the connection).
 * Call before writing the head.
 */
export function closeConnectionAfter(res: ServerResponse): void {
  res.shouldKeepAlive = false;
  res.setHeader('connection', 'close');
  const socket = res.socket;
  res.once('finish', () => socket?.destroy());
}

/** Writes JSON text already rendered (e.g. with Python's number types, common/python-json/dumps.ts). */
export function sendJsonText(
  res: import('node:http').ServerResponse,
  status: number,
  text: string,
  headers: Record<string, string> = {},
): void {
  const payload = Buffer.from(text);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(payload.length),
    ...headers,
  });
  res.end(payload);
}
