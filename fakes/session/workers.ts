import { HarnessError } from '../../common/errors.ts';
import type { SessionServerOptions } from './options.ts';
import { type SessionServerHandle, startSessionServer } from './server.ts';

/**
 * `--session-server-workers N` (newer Miles, PR #2774; default 32 there): N independent session servers,
 * each its own instance (own instance id, own sessions) on its own port; the rollout side picks one per
 * session and every later call of the session goes to that one (sii-avalanche/miles,
 * radixark/miles@067dc320 miles/rollout/generate_utils/openai_endpoint_utils.py
 * `OpenAIEndpointTracer.create`). Miles runs each as its own process; here each is an in-process server
 * on its own loopback port (real HTTP, separate state): 32 Node processes would cost about 32 × 50 MB,
 * past the replay's memory budget, and nothing a client sees differs.
 */
export interface SessionServerWorkers {
  /** In worker order; worker `i` listens on `port + i` when a starting port was given. */
  readonly workers: readonly SessionServerHandle[];
  close(): Promise<void>;
}

/** Miles' text (radixark/miles miles/ray/rollout/session_server.py `wait_session_server_ready`). */
const TOO_FEW_WORKERS = '--session-server-workers must be at least 1.';

/**
 * Starts `count` fake session servers with the same options. With a starting port (`options.port` > 0),
 * worker `i` listens on `port + i`, as Miles resolves `--session-server-port` for its workers (the port
 * "offset by cell"); otherwise each takes a free port. If one fails to start the others are stopped.
 */
export async function startSessionServerWorkers(
  options: SessionServerOptions,
  count: number,
): Promise<SessionServerWorkers> {
  if (!Number.isInteger(count) || count < 1)
    throw new HarnessError('config.invalid', TOO_FEW_WORKERS, {
      details: { field: 'session_server_workers' },
    });
  const started: SessionServerHandle[] = [];
  const closeAll = () => Promise.all(started.map((w) => w.close())).then(() => undefined);
  try {
    for (let i = 0; i < count; i++) {
      const port = options.port !== undefined && options.port > 0 ? options.port + i : options.port;
      started.push(await startSessionServer({ ...options, ...(port === undefined ? {} : { port }) }));
    }
  } catch (error) {
    await closeAll();
    throw error;
  }
  let closing: Promise<void> | undefined;
  return {
    workers: started,
    close() {
      closing ??= closeAll();
      return closing;
    },
  };
}
