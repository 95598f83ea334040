import type { SessionServerEvents } from '../../fakes/session/events.ts';
import type { SessionRouting } from '../model/session-routing.ts';

/** A path naming one session: `/sessions/<id>`, `/sessions/<id>/samples`, `/sessions/<id>/v1/…`. */
const SESSION_PATH = /^\/sessions\/([^/]+)(?:\/|$)/;

/**
 * Watches every session-server worker's requests and records, per session, the workers that received a
 * call naming it (check 11 fails a session seen on two). Sessions are handed over per step (`take`), so
 * nothing accumulates across steps.
 */
export class SessionAffinityMonitor {
  private readonly seen = new Map<string, string[]>();
  private readonly stops: (() => void)[] = [];

  constructor(workers: readonly { readonly id: string; readonly events: SessionServerEvents }[]) {
    for (const worker of workers)
      this.stops.push(
        worker.events.on('request:start', ({ path }) => {
          const match = SESSION_PATH.exec(path);
          if (match === null) return;
          const sessionId = decodeURIComponent(match[1]!);
          const list = this.seen.get(sessionId);
          if (list === undefined) this.seen.set(sessionId, [worker.id]);
          else if (!list.includes(worker.id)) list.push(worker.id);
        }),
      );
  }

  /** The sessions seen since the last call, in the order first seen. */
  take(): SessionRouting[] {
    const out = [...this.seen].map(([session_id, workers]) => ({ session_id, workers }));
    this.seen.clear();
    return out;
  }

  dispose(): void {
    for (const stop of this.stops) stop();
    this.stops.length = 0;
  }
}
