import { isJsonObject, pythonTruthy, pythonTypeName } from '../../../common/python-json/values.ts';
import type { LeafRef, WireSample } from '../../../contracts/wire-sample.ts';
import type { SessionMetadata } from '../session-metadata.ts';
import { deferredSource, pickKeepingDeferred, spreadKeepingDeferred } from '../values/deferred-field.ts';
import { NumberRuns } from '../values/number-runs.ts';

/** Metadata keys the server owns; an agent can never set or replace them. */
export const SERVER_OWNED_KEYS = ['accumulated_token_ids', 'tito_session_mismatch', 'leaf'] as const;

/** `len(sample.tokens)`, without building the samples op's deferred tokens (their runs know their length). */
function tokenCount(sample: WireSample): number {
  const runs = deferredSource(sample, 'tokens');
  return runs instanceof NumberRuns ? runs.length : sample.tokens.length;
}

/**
 * The default postprocessor `default_postprocess` (radixark/miles@31f1ca96
 * miles/rollout/session/v2/postprocessor_hub/default_postprocess.py):
 * - each path node is owned by the smallest leaf id among the picked samples whose path holds it, and
 *   every other sample's mask is cleared over that node's completion span (log-probs are left alone), so
 *   each completion is trained once, in the earliest kept leaf;
 * - the agent metadata (`session_metadata.agent`) is merged into every sample's metadata, the
 *   server-owned keys winning;
 * - a non-null agent `reward` is set on every sample.
 */
export function defaultPostprocess(samples: WireSample[], sessionMetadata: SessionMetadata): WireSample[] {
  const rawAgent = sessionMetadata.agent;
  const agent: unknown = pythonTruthy(rawAgent) ? rawAgent : {};
  if (!isJsonObject(agent)) throw new TypeError(`'${pythonTypeName(agent)}' object has no attribute 'get'`);
  const reward = agent.reward ?? null;
  const agentFields = Object.fromEntries(
    Object.entries(agent).filter(([k]) => !(SERVER_OWNED_KEYS as readonly string[]).includes(k)),
  );

  const owner = new Map<number, number>();
  for (const sample of samples) {
    const leaf = sample.metadata.leaf as LeafRef;
    for (const id of leaf.path_node_ids)
      owner.set(id, Math.min(owner.get(id) ?? Number.POSITIVE_INFINITY, leaf.node_id));
  }
  const spans = new Map(sessionMetadata.tree.nodes.map((n) => [n.id, n.completion_span] as const));

  for (const sample of samples) {
    const leaf = sample.metadata.leaf as LeafRef;
    const responseStart = tokenCount(sample) - sample.response_length;
    for (const id of leaf.path_node_ids) {
      if (owner.get(id) === leaf.node_id) continue;
      const span = spans.get(id);
      if (span === undefined || sample.loss_mask === null) continue;
      const lo = Math.max(span[0] - responseStart, 0);
      const hi = Math.min(span[1] - responseStart, sample.response_length);
      for (let k = lo; k < hi; k += 1) sample.loss_mask[k] = 0;
    }
    const serverOwned = pickKeepingDeferred(
      sample.metadata,
      SERVER_OWNED_KEYS.filter((k) => k in sample.metadata),
    );
    // `{ ...metadata, ...agentFields, ...serverOwned }`, keeping the op's deferred ids unread.
    sample.metadata = spreadKeepingDeferred(sample.metadata, agentFields, serverOwned);
    if (reward !== null) sample.reward = reward;
  }
  return samples;
}
