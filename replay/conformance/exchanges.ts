import { pythonJsonDumps } from '../../common/python-json/dumps.ts';
import { parseJson } from '../../common/python-json/loads.ts';
import { TRACE_ID_HEADER, TRACE_TURN_HEADER } from '../../contracts/policy-headers.ts';

/**
 * Every HTTP exchange of one trace replay against one session server, recorded raw (status, content type,
 * body bytes) so two servers can be compared answer by answer: create, each chat turn, GET, the samples
 * op, DELETE, and a second DELETE (404). Request bodies are written as Python's `json.dumps` would
 * write the trace (floats stay `1.0`), compact, so both servers receive the same bytes.
 */

export interface Exchange {
  /** `create`, `turn 3`, `get`, `samples`, `delete`, `delete again`. */
  readonly step: string;
  readonly status: number;
  readonly contentType: string;
  readonly body: Uint8Array;
  /** Chat requests the policy answered while this exchange ran (the raw requests record it). */
  readonly upstreamCalls?: number;
}

export interface ExchangeRecord {
  /** The session id the server gave (masked out of bodies before comparing). */
  readonly sessionId: string;
  readonly exchanges: readonly Exchange[];
}

/** A trace as read with its floats kept (`PythonFloat`), so its request bodies can be re-sent verbatim. */
export interface RawTrace {
  readonly turns: ReadonlyArray<{ readonly request: unknown }>;
  readonly max_seq_len?: unknown;
  readonly agent_metadata?: unknown;
}

/** A body as Python's `json.dumps(..., ensure_ascii=False, separators=(',', ':'))` writes it. */
export const compact = (value: unknown) =>
  pythonJsonDumps(value, { ensureAscii: false, separators: [',', ':'] });

/** One request to a session server, its status, content type and body bytes kept for comparison. */
export async function exchange(
  step: string,
  url: string,
  init: { method: string; body?: string; headers?: Record<string, string> },
): Promise<Exchange> {
  const response = await fetch(url, {
    method: init.method,
    redirect: 'manual',
    headers: {
      ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
      ...init.headers,
    },
    ...(init.body === undefined ? {} : { body: init.body }),
  });
  return {
    step,
    status: response.status,
    contentType: response.headers.get('content-type') ?? '',
    body: new Uint8Array(await response.arrayBuffer()),
  };
}

export async function recordExchanges(
  trace: RawTrace,
  serverUrl: string,
  traceId: string,
): Promise<ExchangeRecord> {
  const exchanges: Exchange[] = [];
  const created = await exchange('create', `${serverUrl}/sessions`, { method: 'POST' });
  exchanges.push(created);
  const sessionId = (parseJson(Buffer.from(created.body).toString('utf8')) as { session_id: string })
    .session_id;
  const base = `${serverUrl}/sessions/${sessionId}`;
  for (const [k, turn] of trace.turns.entries()) {
    exchanges.push(
      await exchange(`turn ${k}`, `${base}/v1/chat/completions`, {
        method: 'POST',
        body: compact(turn.request),
        headers: { [TRACE_TURN_HEADER]: String(k), [TRACE_ID_HEADER]: traceId },
      }),
    );
  }
  exchanges.push(await exchange('get', base, { method: 'GET' }));
  const samplesBody: Record<string, unknown> = { max_seq_len: trace.max_seq_len ?? null };
  if (trace.agent_metadata !== undefined) samplesBody.metadata = trace.agent_metadata;
  exchanges.push(
    await exchange('samples', `${base}/samples`, { method: 'POST', body: compact(samplesBody) }),
  );
  exchanges.push(await exchange('delete', base, { method: 'DELETE' }));
  exchanges.push(await exchange('delete again', base, { method: 'DELETE' }));
  return { sessionId, exchanges };
}
