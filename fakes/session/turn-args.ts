import { isJsonObject } from '../../common/python-json/values.ts';
import type { TrajectoryNode } from './tree.ts';

/**
 * Switch `turnArgs` (sii-avalanche/miles@4d412b5a miles/rollout/session/request_args.py `filter_turn_args`,
 * v2/core.py `_session_metadata`, v2/utils.py `tree_metadata` and `build_leaf_material`;
 * radixark/miles@2ea774cb v2/tree_trajectory.py `TrajectoryNode.turn_args`): each node keeps the full
 * resolved request it was generated from (its record's request), and metadata shows a copy without
 * `input_ids` and `messages`.
 */

const DROPPED = new Set(['input_ids', 'messages']);

/** Python's `deepcopy` of a JSON value. */
export function deepCopyJson(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(deepCopyJson);
  if (isJsonObject(value))
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, deepCopyJson(v)]));
  // Numbers, strings, PythonFloat (immutable, as Python's float is).
  return value;
}

/** `filter_turn_args(node.turn_args)`: a deep copy of the node's request without its two payloads. */
export function turnArgsOf(node: TrajectoryNode | null): Record<string, unknown> {
  if (node === null) return {};
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(node.record.request)) {
    if (!DROPPED.has(key)) out[key] = deepCopyJson(node.record.request[key]);
  }
  return out;
}
