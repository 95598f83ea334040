import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { HarnessError } from '../../common/errors.ts';
import type { ServerEvents } from '../../common/events.ts';
import {
  type BodyLease,
  BodyTooLargeError,
  ClientGoneError,
  DEFAULT_BODY_LIMIT_BYTES,
} from '../../common/http/body.ts';
import { BodyBufferPool } from '../../common/http/body-buffers.ts';
import { starletteJson } from '../../common/python-json/dumps.ts';
import { pythonJsonLoadsBytes } from '../../common/python-json/loads.ts';
import { isJsonObject, unwrapPythonFloat } from '../../common/python-json/values.ts';
import { DEFAULT_MILES_PROFILE, type MilesSwitches } from '../../contracts/miles-profile.ts';
import { type TitoFamily, type TitoModel, titoFamily } from '../tokenizer/tito.ts';
import { BackendClient, BackendTransportError } from './backend.ts';
import { type ChatConfig, handleChat, launchKwargsFor } from './chat.ts';
import { wallClockSeconds } from './clock.ts';
import { recordMemory, samplesOpSpeed, sessionSpeed } from './compose.ts';
import { parseCreateSessionBody } from './create-session.ts';
import {
  detailError,
  HttpFailure,
  internalServerError,
  JSON_CONTENT_TYPE,
  jsonError,
  sessionNotFound,
} from './errors.ts';
import type { SessionServerEventMap } from './events.ts';
import { defaultPostprocess } from './hooks/default-postprocess.ts';
import { defaultPickerPath, pickerAtPath } from './hooks/picker-paths.ts';
import { DEFAULT_POSTPROCESSOR_PATH } from './hooks/types.ts';
import type { SessionServerOptions, SessionServerStats } from './options.ts';
import type { SessionRequestDefaults } from './request-args.ts';
import { type OutgoingResponse, passThrough } from './responses.ts';
import { matchRoute, type RouteMatch } from './routes.ts';
import { collectSamples, type SampleHooks, type SamplesOpSpeed } from './samples-op.ts';
import { buildSessionMetadata } from './session-metadata.ts';
import { type SessionSpeed, SessionState } from './state.ts';
import { MAX_NODES } from './tree.ts';
import { samplesReplyStream } from './wire/codec.ts';
import { ReplyBufferPool } from './wire/reply-buffers.ts';

/**
 * The fake session server's core: every route of Miles' session server v2 as request → response over
 * in-memory state, with no socket in sight (radixark/miles@31f1ca96 miles/rollout/session/server.py and
 * v2/; docs/session-server.md). `server.ts` is its node:http transport.
 */

/** A request as the core needs it: the transport reads the body only when a route asks for it. */
export interface AppRequest {
  readonly method: string;
  /** Path and query, as sent. */
  readonly url: string;
  readonly headers: IncomingHttpHeaders;
  /** The whole body (rejects with `BodyTooLargeError` past `limit`). */
  readBody(limit: number): Promise<Buffer>;
  /** The whole body in a buffer of `pool`, given back by the lease's `release`. */
  readBodyPooled(limit: number, pool: BodyBufferPool | false): Promise<BodyLease>;
  /** Drains a body the route does not read. */
  discardBody(): void;
}

/** The fake's stats route; Miles has none (there it is a 404). */
export const STATS_PATH = '/harness/stats';

/** `onWarning` fires at this many live sessions unless told otherwise (about a third of what kills a default heap). */
export const DEFAULT_SESSION_WARNING_THRESHOLD = 10_000;

const EMPTY_BODY = Buffer.alloc(0);

function hex32(): string {
  return randomUUID().replaceAll('-', '');
}

function isAsyncFunction(fn: unknown): boolean {
  return typeof fn === 'function' && fn.constructor.name === 'AsyncFunction';
}

function hookName(fn: (...args: never[]) => unknown, fallback: string): string {
  return fn.name.length > 0 ? fn.name : fallback;
}

function json(status: number, value: unknown): OutgoingResponse {
  return {
    status,
    headers: { 'content-type': JSON_CONTENT_TYPE },
    body: Buffer.from(starletteJson(value), 'utf8'),
  };
}

/**
 * `GET /health`. Switch `healthAnthropicField` (sii-avalanche/miles@4d412b5a miles/rollout/session/sessions.py
 * `health`): `anthropic_intermediate_system_supported`, SGLang's `detect_inline_system_support` of the
 * tokenizer's chat template (the family's `inlineSystemTemplate`: false for the toy, which has no template).
 */
function healthBody(
  instanceId: string,
  switches: MilesSwitches,
  family: TitoFamily,
): Record<string, unknown> {
  const body: Record<string, unknown> = { status: 'ok', session_server_instance_id: instanceId };
  if (switches.healthAnthropicField)
    body.anthropic_intermediate_system_supported = family.inlineSystemTemplate;
  return body;
}

function failureResponse(failure: HttpFailure): OutgoingResponse {
  return {
    status: failure.status,
    headers: { 'content-type': failure.contentType, ...failure.headers },
    body: Buffer.from(failure.body, 'utf8'),
  };
}

/** Miles refuses an async picker or postprocessor at start; so does the fake. */
function refuseAsyncHooks(options: SessionServerOptions): void {
  for (const [label, fn] of [
    ['picker', options.picker],
    ['postprocessor', options.postprocessor],
  ] as const) {
    if (isAsyncFunction(fn))
      throw new HarnessError(
        'config.session_async_hook',
        `session sample ${label} resolved to an async function; a synchronous one is required`,
      );
  }
}

function sampleHooks(options: SessionServerOptions, switches: MilesSwitches): SampleHooks {
  const pickerPath = options.pickerPath ?? defaultPickerPath(switches);
  return {
    picker: options.picker ?? pickerAtPath(pickerPath),
    postprocessor: options.postprocessor ?? defaultPostprocess,
    pickerPath: options.picker ? hookName(options.picker, '<picker>') : pickerPath,
    postprocessorPath: options.postprocessor
      ? hookName(options.postprocessor, '<postprocessor>')
      : DEFAULT_POSTPROCESSOR_PATH,
  };
}

/** The live sessions, with the fake's own guard on their number (Miles keeps every one until DELETE). */
class SessionTable {
  readonly byId = new Map<string, SessionState>();
  readonly max: number | null;
  private readonly warnAt: number;
  private warned = false;

  private readonly options: SessionServerOptions;
  private readonly speed: SessionSpeed;

  constructor(options: SessionServerOptions) {
    this.options = options;
    this.speed = sessionSpeed(options.performance);
    this.max = options.maxSessions ?? null;
    if (this.max !== null && !(Number.isInteger(this.max) && this.max > 0))
      throw new HarnessError(
        'config.max_sessions',
        `maxSessions must be a positive integer, got ${this.max}`,
      );
    this.warnAt =
      options.sessionWarningThreshold ??
      Math.min(
        DEFAULT_SESSION_WARNING_THRESHOLD,
        this.max === null ? Number.POSITIVE_INFINITY : Math.max(1, Math.floor(this.max * 0.8)),
      );
  }

  create(requestDefaults?: SessionRequestDefaults): string {
    const { byId, max } = this;
    if (max !== null && byId.size >= max)
      throw jsonError(
        503,
        `session limit reached: ${byId.size} live sessions (max_sessions=${max}); delete finished sessions (DELETE /sessions/{id}) or raise --max-sessions`,
      );
    const id = hex32();
    byId.set(id, new SessionState(id, this.options.maxNodes ?? MAX_NODES, requestDefaults, this.speed));
    if (byId.size < this.warnAt) this.warned = false;
    else if (!this.warned) {
      this.warned = true;
      const heapMiB = Math.round(process.memoryUsage().heapUsed / 2 ** 20);
      this.options.onWarning?.(
        `${byId.size} live sessions (heap ${heapMiB} MiB used): a session is freed only by DELETE, so abandoned sessions grow memory until the process dies${max === null ? '; --max-sessions N caps them with a 503' : `; new sessions get 503 at ${max}`}`,
      );
    }
    return id;
  }

  /** The session, or Miles' 404 (a closing session is gone already). */
  open(id: string): SessionState {
    const state = this.byId.get(id);
    if (state === undefined || state.closing) throw sessionNotFound(id);
    return state;
  }

  stats(): SessionServerStats {
    let nodes = 0;
    let tokens = 0;
    for (const state of this.byId.values()) {
      nodes += state.tree.nodes.length;
      for (const node of state.tree.nodes) tokens += node.tokens.length;
    }
    const memory = process.memoryUsage();
    return {
      sessions: this.byId.size,
      max_sessions: this.max,
      nodes,
      stored_token_ids: tokens,
      heap_used_bytes: memory.heapUsed,
      rss_bytes: memory.rss,
    };
  }
}

/** `max_seq_len` as Python compares it: a bool counts as 0/1, a non-number raises only on a non-empty tree. */
function maxSeqLenOf(body: Record<string, unknown>, state: SessionState): number | null {
  let maxSeqLen = unwrapPythonFloat(body.max_seq_len) ?? null;
  if (typeof maxSeqLen === 'boolean') maxSeqLen = Number(maxSeqLen);
  if (maxSeqLen === null || typeof maxSeqLen === 'number') return maxSeqLen;
  if (state.tree.size > 0) throw internalServerError('max_seq_len type');
  return null;
}

export class SessionServerApp {
  readonly instanceId = hex32();
  readonly titoModel: TitoModel;
  readonly sessions: SessionTable;
  /** The Miles profile's switches: which of Miles' rules this instance follows. */
  readonly switches: MilesSwitches;
  private readonly family: TitoFamily;
  private readonly backend: BackendClient;
  private readonly hooks: SampleHooks;
  private readonly chatConfig: ChatConfig;
  private readonly bodyLimit: number;
  private readonly chatBodies: BodyBufferPool | false;
  private readonly samplesSpeed: SamplesOpSpeed;

  private readonly events: ServerEvents<SessionServerEventMap>;

  constructor(options: SessionServerOptions, events: ServerEvents<SessionServerEventMap>) {
    refuseAsyncHooks(options);
    this.events = events;
    this.titoModel = options.titoModel ?? 'default';
    this.family = titoFamily(this.titoModel);
    this.sessions = new SessionTable(options);
    this.backend = new BackendClient({
      backendUrl: options.backendUrl,
      timeoutMs: options.backendTimeoutMs ?? null,
    });
    this.switches = (options.milesProfile ?? DEFAULT_MILES_PROFILE).switches;
    this.hooks = sampleHooks(options, this.switches);
    this.bodyLimit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT_BYTES;
    const performance = options.performance ?? {};
    this.chatBodies =
      performance.chatBodyBuffers === undefined ? new BodyBufferPool() : performance.chatBodyBuffers;
    this.samplesSpeed = samplesOpSpeed(performance);
    this.chatConfig = {
      family: this.family,
      backend: this.backend,
      launchKwargs: launchKwargsFor(this.family, options.chatTemplateKwargs ?? {}),
      returnRoutedExperts: options.returnRoutedExperts ?? false,
      returnIndexerTopk: options.returnIndexerTopk ?? false,
      lora: options.lora ?? false,
      now: options.clock ?? wallClockSeconds,
      switches: this.switches,
      recordMemory: recordMemory(performance),
      // As many idle as a recipe's batch keeps in flight (32 rollouts); each chat holds one while sending.
      ...(performance.poolForwardedBodies === false
        ? {}
        : { forwardBuffers: new ReplyBufferPool({ maxIdle: 32 }) }),
    };
  }

  /** Answers one request; a refusal comes back as Miles' error response, never as a throw. */
  async respond(req: AppRequest, requestId: number): Promise<OutgoingResponse> {
    try {
      return await this.route(req, requestId);
    } catch (error) {
      return this.errorResponse(error, requestId);
    }
  }

  /** Stops the backend client's connections. */
  close(): void {
    this.backend.close();
  }

  private async route(req: AppRequest, requestId: number): Promise<OutgoingResponse> {
    const requestTimestamp = this.chatConfig.now();
    const method = req.method.toUpperCase();
    const q = req.url.indexOf('?');
    const path = q === -1 ? req.url : req.url.slice(0, q);
    const query = q === -1 ? '' : req.url.slice(q + 1);
    if (path === STATS_PATH && method === 'GET') return json(200, this.sessions.stats());
    const match = matchRoute(method, path);
    switch (match.kind) {
      case 'not_found':
        this.events.emit('request:unhandled', { requestId, method, path });
        throw detailError(404, 'Not Found');
      case 'method_not_allowed':
        this.events.emit('request:unhandled', { requestId, method, path });
        throw detailError(405, 'Method Not Allowed', { allow: match.allow.join(', ') });
      case 'redirect': {
        const host = req.headers.host ?? '127.0.0.1';
        const location = `http://${host}${match.path}${query ? `?${query}` : ''}`;
        return { status: 307, headers: { location }, body: EMPTY_BODY };
      }
      case 'route':
        return this.routeTo(match, req, { requestId, method, query, requestTimestamp });
    }
  }

  private async routeTo(
    match: Extract<RouteMatch, { kind: 'route' }>,
    req: AppRequest,
    at: { requestId: number; method: string; query: string; requestTimestamp: number },
  ): Promise<OutgoingResponse> {
    switch (match.name) {
      case 'health':
        return json(200, healthBody(this.instanceId, this.switches, this.family));
      case 'create':
        return this.createSession(req);
      case 'get': {
        const state = this.sessions.byId.get(match.sessionId);
        if (state === undefined) throw sessionNotFound(match.sessionId);
        return json(200, {
          session_id: state.id,
          records: state.activeRecords(),
          metadata: buildSessionMetadata(state, this.family, undefined, this.switches.turnArgs),
        });
      }
      case 'delete':
        return this.deleteSession(match.sessionId);
      case 'chat':
        return this.chat(match.sessionId, req, at);
      case 'samples':
        return this.samples(match.sessionId, req);
      case 'proxy':
        return this.proxy(match.sessionId, match.path, req, at);
    }
  }

  /**
   * `POST /sessions`: the body ignored (31f1ca96), or with the `validateCreateSession` switch read as
   * `CreateSessionRequest` (create-session.ts): a 400 for an invalid one, else the session's defaults.
   */
  private async createSession(req: AppRequest): Promise<OutgoingResponse> {
    if (!this.switches.validateCreateSession) {
      req.discardBody();
      return json(200, { session_id: this.sessions.create() });
    }
    const defaults = parseCreateSessionBody(await req.readBody(this.bodyLimit));
    return json(200, { session_id: this.sessions.create(defaults) });
  }

  /** Marks the session closing, waits for its in-flight chat, then drops it. */
  private async deleteSession(id: string): Promise<OutgoingResponse> {
    const state = this.sessions.open(id);
    state.closing = true;
    await state.lock.run(() => {
      this.sessions.byId.delete(state.id);
    });
    return { status: 204, headers: {}, body: EMPTY_BODY };
  }

  private async chat(
    id: string,
    req: AppRequest,
    at: { requestId: number; method: string; query: string; requestTimestamp: number },
  ): Promise<OutgoingResponse> {
    const state = this.sessions.open(id);
    const lease = await req.readBodyPooled(this.bodyLimit, this.chatBodies);
    const onCommitted = (sessionId: string, nodeId: number) =>
      this.events.emit('chat:committed', { requestId: at.requestId, sessionId, nodeId });
    // The body is parsed in phase 1 (the reuse keeps a copy): its buffer goes back once answered.
    try {
      return await handleChat(
        { ...this.chatConfig, onCommitted },
        {
          state,
          headers: req.headers,
          query: at.query,
          method: at.method,
          body: lease.body,
          requestTimestamp: at.requestTimestamp,
        },
      );
    } finally {
      lease.release();
    }
  }

  private async samples(id: string, req: AppRequest): Promise<OutgoingResponse> {
    const raw = await req.readBody(this.bodyLimit);
    let body: unknown = {};
    if (raw.length > 0) {
      try {
        // Floats stay floats: the agent's `"reward": 1.0` comes back as `1.0`, as Miles writes it.
        body = pythonJsonLoadsBytes(raw, { keepFloats: true });
      } catch (error) {
        throw internalServerError(error);
      }
    }
    if (!isJsonObject(body)) throw internalServerError('samples body is not a JSON object');
    const state = this.sessions.byId.get(id);
    if (state === undefined) throw sessionNotFound(id);
    const maxSeqLen = maxSeqLenOf(body, state);
    const reply = collectSamples(
      state,
      this.family,
      this.hooks,
      {
        maxSeqLen,
        agentMetadata: body.metadata,
        turnArgs: this.switches.turnArgs,
        weightVersionSpans: this.switches.samplesWire === 'spans',
      },
      this.samplesSpeed,
    );
    try {
      const stream = samplesReplyStream(reply);
      return {
        status: 200,
        headers: { 'content-type': 'application/octet-stream' },
        body: EMPTY_BODY,
        stream,
      };
    } catch (error) {
      throw internalServerError(error);
    }
  }

  private async proxy(
    id: string,
    path: string,
    req: AppRequest,
    at: { method: string; query: string },
  ): Promise<OutgoingResponse> {
    const body = await req.readBody(this.bodyLimit);
    try {
      const upstream = await this.backend.forward({
        method: at.method,
        path,
        query: at.query,
        headers: req.headers,
        body,
        routingKey: id,
      });
      return passThrough(upstream);
    } catch (error) {
      if (error instanceof BackendTransportError)
        throw jsonError(502, `backend transport error: ${error.className}: ${error.message}`);
      throw error;
    }
  }

  /**
   * Starlette's answer to what a route raised: its HTTP error as it is, a body past the fake's limit as
   * 413, anything else a plain 500 (reported as `request:crashed`). A client that left is the
   * transport's to handle, so it is thrown on.
   */
  private errorResponse(error: unknown, requestId: number): OutgoingResponse {
    // The fake's own guard: the connection closes after the 413, so the rest of the body is never read.
    if (error instanceof BodyTooLargeError)
      return { ...failureResponse(jsonError(413, error.message)), closeConnection: true };
    if (error instanceof HttpFailure) {
      if (error.status === 500 && error.body === 'Internal Server Error') this.reportCrash(error, requestId);
      return failureResponse(error);
    }
    if (error instanceof ClientGoneError) throw error;
    this.reportCrash(error, requestId);
    return failureResponse(internalServerError(error));
  }

  /** Set by the transport: what to tell the operator about a 500. */
  onCrash: ((error: unknown) => void) | undefined;

  /** A 500 the fake did not mean, or a reply that broke while streaming: told to the operator and to tests. */
  reportCrash(error: unknown, requestId: number): void {
    this.onCrash?.(error);
    this.events.emit('request:crashed', { requestId, error });
  }
}
