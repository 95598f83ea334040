import { TRACE_ID_HEADER, TRACE_TURN_HEADER } from '../../contracts/policy-headers.ts';
import type { SessionTrace, TraceTurn } from '../../contracts/trace.ts';
import type { HeaderReader } from './policy-request.ts';

/**
 * Script mode's traces (`session-trace/1`, contracts/trace.ts) and where each one is. A request's
 * trace is the one `x-harness-trace-id` names, or the only one loaded; its turn is the one
 * `x-harness-trace-turn` names, so a turn the session server refuses before calling the backend (a 409)
 * does not shift the script, or else the trace's next turn in arrival order. Either way the trace's
 * cursor moves past the turn answered.
 */

/** A scripted turn to answer with, or why there is none (the status and message of the refusal). */
export type ScriptChoice =
  | { readonly ok: true; readonly turn: number; readonly response: TraceTurn['response'] }
  | { readonly ok: false; readonly status: number; readonly message: string };

export class ScriptBook {
  // A Map, not an object: a trace id such as `constructor` or `__proto__` names no trace unless loaded.
  readonly #traces: Map<string, SessionTrace>;
  /** Per trace id, the turn arrival order answers next. */
  readonly #cursors = new Map<string, number>();

  /** `script` is loaded as the trace `default`, over one of that id in `scripts`. */
  constructor(script: SessionTrace | undefined, scripts: Readonly<Record<string, SessionTrace>> | undefined) {
    this.#traces = new Map(Object.entries(scripts ?? {}));
    if (script) this.#traces.set('default', script);
  }

  choose(headers: HeaderReader): ScriptChoice {
    const chosen = this.#trace(headers.get(TRACE_ID_HEADER));
    if (typeof chosen === 'string') return { ok: false, status: 500, message: `script: ${chosen}` };
    const header = headers.get(TRACE_TURN_HEADER);
    const turn = header === null ? (this.#cursors.get(chosen.id) ?? 0) : Number(header);
    if (!Number.isInteger(turn) || turn < 0)
      return { ok: false, status: 400, message: `invalid ${TRACE_TURN_HEADER}: ${header}` };
    const entry = chosen.trace.turns[turn];
    if (entry === undefined) {
      const message = `script exhausted: trace ${chosen.id} has ${chosen.trace.turns.length} turns, asked for turn ${turn}`;
      return { ok: false, status: 500, message };
    }
    this.#cursors.set(chosen.id, turn + 1);
    return { ok: true, turn, response: entry.response };
  }

  /** The trace `wanted` names (or the only one, when null), or why there is none. */
  #trace(wanted: string | null): { id: string; trace: SessionTrace } | string {
    const ids = [...this.#traces.keys()];
    if (wanted !== null) {
      const trace = this.#traces.get(wanted);
      return trace
        ? { id: wanted, trace }
        : `unknown trace id ${JSON.stringify(wanted)} (loaded: ${ids.join(', ')})`;
    }
    if (ids.length === 1) return { id: ids[0]!, trace: this.#traces.get(ids[0]!)! };
    return ids.length === 0 ? 'no script loaded' : `several traces loaded; send ${TRACE_ID_HEADER}`;
  }
}
