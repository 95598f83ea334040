import { parseJson } from '../../common/python-json/loads.ts';
import type { FaultRollout } from '../../contracts/fault-scenario.ts';
import { TRACE_ID_HEADER, TRACE_TURN_HEADER } from '../../contracts/policy-headers.ts';
import { compact, type Exchange, type ExchangeRecord, exchange } from '../conformance/exchanges.ts';

/**
 * One catalogue rollout played against one session server (the fake or Miles' own), every exchange kept
 * raw as the conformance comparison keeps it (replay/conformance/exchanges.ts): create, each chat turn
 * (turns marked `concurrent` go out at the same moment as the turn before them), GET, the samples op with
 * the agent's reward as its metadata (what `agentic_tool_call.generate` sends: the `/run` result), DELETE.
 */

/** The turns in sending order: each batch is one turn and the concurrent turns right after it. */
function turnBatches(rollout: FaultRollout): number[][] {
  const batches: number[][] = [];
  rollout.turns.forEach((_turn, k) => {
    if (rollout.concurrent.includes(k) && batches.length > 0) batches.at(-1)!.push(k);
    else batches.push([k]);
  });
  return batches;
}

/** The `/run` result's four keys Miles keeps, as the samples op's metadata. */
export function agentMetadata(rollout: FaultRollout): Record<string, unknown> {
  return { reward: rollout.reward, exit_status: null, eval_report: null, agent_metrics: {} };
}

export async function playFaultRollout(
  rollout: FaultRollout,
  serverUrl: string,
  traceId: string,
): Promise<ExchangeRecord> {
  const created = await exchange('create', `${serverUrl}/sessions`, { method: 'POST' });
  const sessionId = (parseJson(Buffer.from(created.body).toString('utf8')) as { session_id: string })
    .session_id;
  const base = `${serverUrl}/sessions/${sessionId}`;
  const turns: Exchange[] = [];
  for (const batch of turnBatches(rollout)) {
    const answered = await Promise.all(
      batch.map((k) =>
        exchange(`turn ${k}`, `${base}/v1/chat/completions`, {
          method: 'POST',
          body: compact(rollout.turns[k]!.request),
          headers: { [TRACE_TURN_HEADER]: String(k), [TRACE_ID_HEADER]: traceId },
        }),
      ),
    );
    for (const answer of answered) turns.push(answer);
  }
  const get = await exchange('get', base, { method: 'GET' });
  const samplesBody = { max_seq_len: rollout.max_seq_len, metadata: agentMetadata(rollout) };
  const samples = await exchange('samples', `${base}/samples`, {
    method: 'POST',
    body: compact(samplesBody),
  });
  const deleted = await exchange('delete', base, { method: 'DELETE' });
  return { sessionId, exchanges: [created, ...turns, get, samples, deleted] };
}
