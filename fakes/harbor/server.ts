import type { IncomingMessage, ServerResponse } from 'node:http';
import { closeConnectionAfter, readBody, sendJsonText } from '../../common/http/body.ts';
import { type RunningServer, startHttpServer } from '../../common/http/server.ts';
import { HarborApp, type HarborRequest } from './app.ts';
import { DEFAULT_EPISODES_DIR, EpisodeCatalog, loadEpisodeScripts } from './episode-catalog.ts';
import type { EpisodeScript } from './episode-schema.ts';
import { createHarborServerEvents, type HarborServerEvents } from './events.ts';
import {
  DEFAULT_AGENT_TIMEOUT_S,
  DEFAULT_MAX_CONCURRENT,
  DEFAULT_RUN_BODY_LIMIT_BYTES,
  type HarborOptions,
} from './harbor-options.ts';
import type { Health } from './run-protocol.ts';
import type { TrialRecord } from './trial-record.ts';

/**
 * The mock Harbor "miles agent server": `POST /run`, `GET /health`, `POST /flush`
 * (docs/harbor.md; rebuilt from radixark/miles@31f1ca96 examples/swe-agent-harbor-docker/). Each `/run` is
 * one trial playing a scripted Terminus-2 episode against the request's `base_url`. The routes live in
 * `app.ts`; this is their node:http transport. The core's options are harbor-options.ts.
 */

/** The core's options, the scripts it plays and where it listens. */
export interface HarborServerOptions extends HarborOptions {
  /** A directory of episode scripts, or scripts already loaded. Default: the bundled fixtures. */
  readonly episodes?: string | readonly EpisodeScript[];
  readonly host?: string;
  readonly port?: number;
}

export interface HarborServer {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly catalog: EpisodeCatalog;
  /** Finished trials, in completion order (the latest MAX_TRIAL_RECORDS). */
  trials(): readonly TrialRecord[];
  health(): Health;
  /** Trial lifecycle events, for tests to await (see `HarborServerEventMap`). */
  readonly events: HarborServerEvents;
  /** Cancels running and waiting trials, then stops listening. Idempotent. */
  close(): Promise<void>;
}

function checkPositive(name: string, value: number, integer: boolean): void {
  if (!Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value)))
    throw new RangeError(`${name} must be a positive ${integer ? 'integer' : 'number'}, got ${value}`);
}

/** The core's view of a node request; `clientGone` aborts when the socket closes before the answer. */
function harborRequest(req: IncomingMessage, res: ServerResponse): HarborRequest {
  const gone = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) gone.abort();
  });
  return {
    method: req.method ?? 'GET',
    target: req.url ?? '/',
    headers: req.headers,
    readBody: (limit) => readBody(req, limit),
    discardBody: () => req.resume(),
    clientGone: gone.signal,
  };
}

export async function startHarborServer(options: HarborServerOptions = {}): Promise<HarborServer> {
  const maxConcurrent = options.maxConcurrent ?? DEFAULT_MAX_CONCURRENT;
  const agentTimeoutS = options.agentTimeoutS ?? DEFAULT_AGENT_TIMEOUT_S;
  const bodyLimitBytes = options.bodyLimitBytes ?? DEFAULT_RUN_BODY_LIMIT_BYTES;
  checkPositive('maxConcurrent', maxConcurrent, true);
  checkPositive('agentTimeoutS', agentTimeoutS, false);
  checkPositive('bodyLimitBytes', bodyLimitBytes, true);
  const source = options.episodes ?? DEFAULT_EPISODES_DIR;
  const catalog = new EpisodeCatalog(typeof source === 'string' ? await loadEpisodeScripts(source) : source);
  const app = new HarborApp(catalog, createHarborServerEvents(), {
    ...options,
    maxConcurrent,
    agentTimeoutS,
    bodyLimitBytes,
  });
  const http: RunningServer = await startHttpServer(
    async (req, res) => {
      const reply = await app.respond(harborRequest(req, res));
      if (res.destroyed) return;
      if (reply.closeConnection === true) closeConnectionAfter(res);
      sendJsonText(res, reply.status, reply.json, { ...reply.headers });
    },
    {
      ...(options.host !== undefined ? { host: options.host } : {}),
      ...(options.port !== undefined ? { port: options.port } : {}),
    },
  );

  let closed: Promise<void> | undefined;
  return {
    url: http.url,
    host: http.host,
    port: http.port,
    catalog,
    trials: () => [...app.finished],
    events: app.events,
    health: () => app.health(),
    close() {
      closed ??= (async () => {
        await app.close();
        await http.close();
      })();
      return closed;
    },
  };
}
