import type { IncomingHttpHeaders } from 'node:http';
import { BodyTooLargeError } from '../../common/http/body.ts';
import { parseJson } from '../../common/python-json/loads.ts';
import { bearerMatches } from './admin-auth.ts';
import type { CallEvent } from './engine/episode-calls.ts';
import type { EpisodeCatalog } from './episode-catalog.ts';
import { resolveEpisode } from './episode-schema.ts';
import type { HarborServerEvents } from './events.ts';
import type { HarborOptions } from './harbor-options.ts';
import {
  baseUrlProblem,
  FlushRequestSchema,
  type FlushResult,
  type Health,
  instanceIdProblem,
  type RunRequest,
  RunRequestSchema,
} from './run-protocol.ts';
import { runResultJson } from './run-result-wire.ts';
import { runTrial, TrialCancelledError } from './trial.ts';
import type { TrialRecord, TrialRef } from './trial-record.ts';
import { TrialSlots } from './trial-slots.ts';

/**
 * The Harbor mock's core: `/run`, `/flush` and `/health` as request → reply over the trials it runs, with
 * no socket in sight (docs/harbor.md). `server.ts` is its node:http transport.
 */

/** `trials()` keeps this many of the latest records, so a long-lived server stays bounded. */
export const MAX_TRIAL_RECORDS = 10_000;

/** An answer: JSON text (Python's number types where Harbor writes them), its status and headers. */
export interface HarborReply {
  readonly status: number;
  readonly json: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Close the connection once sent (the 413: the rest of a huge body is never read). */
  readonly closeConnection?: boolean;
}

/** A request as the core needs it: its body is read only when a route asks for it. */
export interface HarborRequest {
  readonly method: string;
  /** The target as sent (path and query, or an absolute URL). */
  readonly target: string;
  readonly headers: IncomingHttpHeaders;
  readBody(limit: number): Promise<Buffer>;
  discardBody(): void;
  /** Aborts when the client goes away before its answer is written. */
  readonly clientGone: AbortSignal;
}

interface LiveTrial {
  readonly controller: AbortController;
  readonly sessionServerInstanceId: string | undefined;
  done: Promise<void>;
}

function fail(
  status: number,
  code: string,
  detail: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): HarborReply {
  return { status, json: JSON.stringify({ code, detail, ...extra }), headers };
}

/** A body that is not a JSON object is a 400, one past the limit a 413. */
async function readJsonObject(
  req: HarborRequest,
  limit: number,
): Promise<{ readonly body: Record<string, unknown> } | { readonly refused: HarborReply }> {
  let raw: Buffer;
  try {
    raw = await req.readBody(limit);
  } catch (error) {
    if (!(error instanceof BodyTooLargeError)) throw error;
    const tooLarge = fail(413, 'body_too_large', `request body exceeds ${limit} bytes`, {
      limit_bytes: limit,
    });
    return { refused: { ...tooLarge, closeConnection: true } };
  }
  let value: unknown;
  try {
    value = parseJson(raw.toString('utf8'));
  } catch {
    return { refused: fail(400, 'invalid_json', 'request body is not valid JSON') };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { refused: fail(400, 'invalid_json', 'request body must be a JSON object') };
  return { body: value as Record<string, unknown> };
}

/**
 * The routed path, as Starlette sees it: the target before `?`, percent-decoded, dot segments kept
 * (`new URL(target, base)` would read `//host/run` as a host and `/x/../run` as `/run`). An absolute-form
 * target routes by its path; anything else is undefined.
 */
function requestPath(target: string): string | undefined {
  let raw: string;
  if (target.startsWith('/')) raw = target.split('?', 1)[0] ?? '/';
  else {
    try {
      raw = new URL(target).pathname;
    } catch {
      return undefined;
    }
  }
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** The core's options with their defaults applied. */
type HarborAppOptions = HarborOptions & {
  readonly maxConcurrent: number;
  readonly agentTimeoutS: number;
  readonly bodyLimitBytes: number;
};

export class HarborApp {
  readonly finished: TrialRecord[] = [];
  private readonly slots: TrialSlots;
  private readonly live = new Map<number, LiveTrial>();
  private readonly trialCounts = new Map<string, number>();
  private nextTrialId = 0;
  private closing = false;

  readonly catalog: EpisodeCatalog;
  readonly events: HarborServerEvents;
  private readonly options: HarborAppOptions;

  constructor(catalog: EpisodeCatalog, events: HarborServerEvents, options: HarborAppOptions) {
    this.catalog = catalog;
    this.events = events;
    this.options = options;
    this.slots = new TrialSlots(options.maxConcurrent);
  }

  health(): Health {
    return {
      status: 'ok',
      running: this.slots.running,
      waiting: this.slots.waiting,
      max_concurrent: this.options.maxConcurrent,
      episodes: this.catalog.scripts.length,
      pool: this.catalog.pool.length,
    };
  }

  async respond(req: HarborRequest): Promise<HarborReply> {
    const path = requestPath(req.target);
    if (path === undefined) {
      req.discardBody();
      return fail(400, 'invalid_request_target', 'the request target is not a path or an absolute URL');
    }
    switch (`${req.method} ${path}`) {
      case 'POST /run':
        return this.run(req);
      case 'POST /flush':
        return this.flush(req);
      case 'GET /health':
        return { status: 200, json: JSON.stringify(this.health()) };
      default:
        req.discardBody();
        if (path === '/run' || path === '/flush' || path === '/health')
          return fail(405, 'method_not_allowed', `${req.method} is not allowed on ${path}`);
        return fail(404, 'not_found', `no route for ${req.method} ${path}`);
    }
  }

  /** Cancels running and waiting trials and waits for each to answer. */
  async close(): Promise<void> {
    this.closing = true;
    const pending = [...this.live.values()];
    for (const trial of pending) trial.controller.abort(new TrialCancelledError('server_closing'));
    await Promise.all(pending.map((t) => t.done));
  }

  /** `/run`'s refusals: a body that is not the schema, a bad id or URL, another agent, a closing server. */
  private async runRequest(
    req: HarborRequest,
  ): Promise<{ readonly request: RunRequest } | { readonly refused: HarborReply }> {
    const refused = (reply: HarborReply) => ({ refused: reply });
    const read = await readJsonObject(req, this.options.bodyLimitBytes);
    if ('refused' in read) return read;
    const parsed = RunRequestSchema.safeParse(read.body);
    if (!parsed.success)
      return refused(
        fail(400, 'invalid_request', 'request body does not match the /run schema', {
          issues: parsed.error.issues.map((i) => ({ path: i.path, message: i.message })),
        }),
      );
    const request = parsed.data;
    const idProblem = instanceIdProblem(request.instance_id);
    if (idProblem) return refused(fail(400, 'invalid_instance_id', idProblem));
    const urlProblem = baseUrlProblem(request.base_url, {
      allowRemote: this.options.allowRemoteBaseUrl ?? false,
    });
    if (urlProblem) return refused(fail(400, 'invalid_base_url', urlProblem));
    if (request.agent_name !== 'terminus-2')
      return refused(
        fail(400, 'unsupported_agent', `this mock plays terminus-2 only, not ${request.agent_name}`),
      );
    if (this.closing) return refused(fail(503, 'server_closing', 'the server is shutting down'));
    return { request };
  }

  /** One trial: the episode the request's instance and sample index pick, played against its base_url. */
  private async run(req: HarborRequest): Promise<HarborReply> {
    const checked = await this.runRequest(req);
    if ('refused' in checked) return checked.refused;
    const { request } = checked;
    const script = this.catalog.pick(request.instance_id);
    const trialIndex = this.trialCounts.get(request.instance_id) ?? 0;
    this.trialCounts.set(request.instance_id, trialIndex + 1);
    // The variant: by the copy's sample index when the request names it, else by arrival order.
    const episode = resolveEpisode(script, request.instance_id, request.harness_sample_index ?? trialIndex);
    const id = this.nextTrialId++;
    const controller = new AbortController();
    let settle = () => {};
    const trial: LiveTrial = {
      controller,
      sessionServerInstanceId: request.session_server_instance_id,
      done: new Promise<void>((resolve) => {
        settle = resolve;
      }),
    };
    this.live.set(id, trial);
    const gone = () => controller.abort(new TrialCancelledError('client_gone'));
    req.clientGone.addEventListener('abort', gone, { once: true });
    const ref: TrialRef = {
      id,
      instanceId: request.instance_id,
      trialIndex,
      episode: script.instance_id,
      variant: episode.variantIndex,
      sessionServerInstanceId: request.session_server_instance_id,
      baseUrl: request.base_url,
    };
    try {
      const result = await this.play(ref, request, episode, controller.signal);
      return { status: 200, json: runResultJson(result) };
    } finally {
      req.clientGone.removeEventListener('abort', gone);
      this.live.delete(id);
      settle();
    }
  }

  /** Waits for a slot (a cancelled waiter still answers: runTrial sees the aborted signal), then plays. */
  private async play(
    ref: TrialRef,
    request: RunRequest,
    episode: ReturnType<typeof resolveEpisode>,
    signal: AbortSignal,
  ): Promise<TrialRecord['result']> {
    const { options, events } = this;
    const who = { trialId: ref.id, instanceId: ref.instanceId };
    events.emit('trial:queued', who);
    const release = await this.slots.acquire(signal).catch(() => undefined);
    try {
      events.emit('trial:started', who);
      const { result } = await runTrial({
        episode,
        trialIndex: ref.trialIndex,
        baseUrl: request.base_url,
        model: request.model,
        samplingParams: request.sampling_params,
        signal,
        agentTimeoutS: options.agentTimeoutS,
        ...(options.fetchImpl ? { fetchImpl: options.fetchImpl } : {}),
        ...(options.onCall ? { onCall: (event: CallEvent) => options.onCall?.(ref, event) } : {}),
        ...(options.countTokens ? { countTokens: options.countTokens } : {}),
      });
      this.finished.push({ ...ref, result });
      events.emit('trial:ended', { ...who, result });
      if (this.finished.length > MAX_TRIAL_RECORDS)
        this.finished.splice(0, this.finished.length - MAX_TRIAL_RECORDS);
      return result;
    } finally {
      release?.();
    }
  }

  /** Cancels the live trials of one session server instance (the agent server's `/flush`). */
  private async flush(req: HarborRequest): Promise<HarborReply> {
    const adminSecret = this.options.adminSecret;
    if (
      adminSecret !== undefined &&
      adminSecret !== '' &&
      !bearerMatches(req.headers.authorization, adminSecret)
    ) {
      req.discardBody();
      return fail(401, 'unauthorized', 'missing or wrong bearer token', {}, { 'www-authenticate': 'Bearer' });
    }
    const read = await readJsonObject(req, this.options.bodyLimitBytes);
    if ('refused' in read) return read.refused;
    const parsed = FlushRequestSchema.safeParse(read.body);
    if (!parsed.success)
      return fail(400, 'invalid_request', 'session_server_instance_id (a non-empty string) is required');
    const target = parsed.data.session_server_instance_id;
    let cancelled = 0;
    for (const trial of this.live.values()) {
      if (trial.sessionServerInstanceId !== target || trial.controller.signal.aborted) continue;
      trial.controller.abort(new TrialCancelledError('flush'));
      cancelled += 1;
    }
    const reply: FlushResult = { session_server_instance_id: target, cancelled };
    return { status: 200, json: JSON.stringify(reply) };
  }
}
