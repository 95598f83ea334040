import type { TreeNode } from '../../contracts/wire-sample.ts';
import type { PolicyRequest } from '../model/rollout.ts';

/** Joins tree nodes to the policy's request log by `response_id`; unmatched or ambiguous ids stay out. */
export function requestsByResponseId(requests: readonly PolicyRequest[]): Map<string, PolicyRequest> {
  const byId = new Map<string, PolicyRequest>();
  const seen = new Set<string>();
  for (const request of requests) {
    const id = request.response_id;
    if (id === null || id === '') continue;
    if (seen.has(id)) byId.delete(id);
    else byId.set(id, request);
    seen.add(id);
  }
  return byId;
}

export function requestForNode(
  node: TreeNode,
  byId: ReadonlyMap<string, PolicyRequest>,
): PolicyRequest | null {
  return node.response_id ? (byId.get(node.response_id) ?? null) : null;
}

/**
 * Whether `a` re-sends `b`: the same prompt ids when both logs have them, else the same messages;
 * compared by length and digest (the log keeps no arrays).
 */
export function isResend(a: PolicyRequest, b: PolicyRequest): boolean {
  if (a.input_ids_digest !== null && b.input_ids_digest !== null)
    return a.input_ids_length === b.input_ids_length && a.input_ids_digest === b.input_ids_digest;
  return a.messages_digest === b.messages_digest;
}
