import type { IncomingMessage, ServerResponse } from 'node:http';
import { getResponse, type RequestHandler } from 'msw';
import {
  type BodyLease,
  BodyTooLargeError,
  closeConnectionAfter,
  DEFAULT_BACKEND_BODY_LIMIT_BYTES,
  readBodyPooled,
} from '../../common/http/body.ts';
import { BodyBufferPool } from '../../common/http/body-buffers.ts';
import { type ListenOptions, type RunningServer, startHttpServer } from '../../common/http/server.ts';

/**
 * Serves msw request handlers on a real socket, for clients in other processes (a Python trainer, the
 * Harbor agent, `harness serve`): IncomingMessage → `Request` → msw's `getResponse` → the response
 * written back. A request no handler answers gets a 404 and is reported, mirroring
 * `onUnhandledFrame: 'error'` in-process (msw 3's name).
 */

export interface UnhandledRequest {
  readonly method: string;
  readonly url: string;
}

/** A JSON answer written straight to the socket, as `HttpResponse.json` would have written it. */
export interface DirectJsonAnswer {
  readonly status: number;
  readonly body: unknown;
}

export interface BridgeOptions extends ListenOptions {
  readonly bodyLimitBytes?: number;
  readonly onUnhandled?: (request: UnhandledRequest) => void;
  /**
   * Where request bodies are read into (each given back once its request is answered; the handlers
   * get a copy); default a pool of its own. `false`: a fresh buffer per body.
   */
  readonly bodyBuffers?: BodyBufferPool | false;
  /**
   * A hot route served without msw: called with the read body; `undefined` hands the request to the
   * handlers. Same bytes on the wire (content-type, content-length, JSON.stringify body).
   */
  readonly direct?: (
    req: IncomingMessage,
    body: Buffer,
    origin: string,
  ) => Promise<DirectJsonAnswer | undefined>;
}

/** Methods the fetch `Request` constructor refuses; an HTTP server answers them 405 (Starlette does). */
const FORBIDDEN_METHODS = new Set(['CONNECT', 'TRACE', 'TRACK']);

function toRequest(req: IncomingMessage, origin: string, body: Buffer): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name === 'host' || name === 'connection' || name === 'transfer-encoding')
      continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  const method = req.method ?? 'GET';
  const hasBody = method !== 'GET' && method !== 'HEAD';
  // Origin + path, not `new URL(path, origin)`: a path starting with `//` is not a host.
  const target = req.url ?? '/';
  const url = target.startsWith('/') ? new URL(`${origin}${target}`) : new URL(target, origin);
  return new Request(url, {
    method,
    headers,
    ...(hasBody ? { body: new Uint8Array(body) } : {}),
  });
}

async function writeResponse(res: ServerResponse, response: Response): Promise<void> {
  const body = Buffer.from(await response.arrayBuffer());
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'content-length' && name !== 'transfer-encoding') headers[name] = value;
  });
  headers['content-length'] = String(body.length);
  res.writeHead(response.status, headers);
  res.end(body);
}

export async function serveHandlers(
  handlers: RequestHandler[],
  options: BridgeOptions = {},
): Promise<RunningServer> {
  const limit = options.bodyLimitBytes ?? DEFAULT_BACKEND_BODY_LIMIT_BYTES;
  const pool = options.bodyBuffers === undefined ? new BodyBufferPool() : options.bodyBuffers;
  let origin = 'http://127.0.0.1';
  const server = await startHttpServer(
    async (req, res) => {
      let lease: BodyLease;
      try {
        lease = await readBodyPooled(req, limit, pool);
      } catch (error) {
        if (!(error instanceof BodyTooLargeError)) throw error;
        closeConnectionAfter(res);
        res.writeHead(413, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ detail: error.message }));
        return;
      }
      // The body is read only until the answer is built (the chat route reads it synchronously, the
      // handlers get a copy in their `Request`): the buffer goes back once the handler is done.
      try {
        await answer(req, res, lease.body);
      } finally {
        lease.release();
      }
    },
    {
      ...(options.host === undefined ? {} : { host: options.host }),
      ...(options.port === undefined ? {} : { port: options.port }),
    },
  );
  origin = server.url;
  return server;

  async function answer(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<void> {
    if (FORBIDDEN_METHODS.has((req.method ?? '').toUpperCase())) {
      res.writeHead(405, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: 'Method Not Allowed' }));
      return;
    }
    const direct = await options.direct?.(req, body, origin);
    if (direct !== undefined) {
      const text = Buffer.from(JSON.stringify(direct.body) ?? '', 'utf8');
      res.writeHead(direct.status, {
        'content-type': 'application/json',
        'content-length': String(text.length),
      });
      res.end(text);
      return;
    }
    let request: Request;
    try {
      request = toRequest(req, origin, body);
    } catch {
      // A request target no URL can be built from (absolute-form oddities): the client's fault.
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: 'Invalid request target' }));
      return;
    }
    const response = await getResponse(handlers, request);
    if (response === undefined) {
      options.onUnhandled?.({ method: request.method, url: request.url });
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ detail: 'Not Found' }));
      return;
    }
    await writeResponse(res, response);
  }
}
