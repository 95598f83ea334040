import type { TreeMetadata } from '../../contracts/wire-sample.ts';
import type { TitoFamily } from '../tokenizer/tito.ts';
import { LeafMismatchMemo } from './mismatch.ts';
import type { SessionState } from './state.ts';
import { turnArgsOf } from './turn-args.ts';

/**
 * The session metadata GET prints and the hooks receive (radixark/miles@31f1ca96
 * miles/rollout/session/v2/core.py `SessionCoreV2._session_metadata`), in Miles' key order.
 */
export type SessionMetadata = Record<string, unknown> & { tree: TreeMetadata };

/**
 * `_session_metadata`: `tito_session_mismatch` (only with an active leaf and a successful comparison),
 * `accumulated_token_ids`, the launch-level `max_trim_tokens`, and the whole tree.
 */
export function buildSessionMetadata(
  state: SessionState,
  family: TitoFamily,
  mismatches: LeafMismatchMemo = new LeafMismatchMemo(family),
  turnArgs = false,
): SessionMetadata {
  const out: Record<string, unknown> = {};
  const leaf = state.activeLeaf;
  if (leaf !== null) {
    const mismatch = mismatches.forLeaf(leaf);
    if (mismatch !== null) out.tito_session_mismatch = mismatch;
  }
  out.accumulated_token_ids = state.activeTokenIds();
  out.max_trim_tokens = family.maxTrimTokens;
  const tree = state.tree.metadata(turnArgs);
  Object.assign(out, { tree });
  // Switch `turnArgs`: the view's (the last committed node's) request, after the tree (turn-args.ts).
  if (turnArgs) out.turn_args = turnArgsOf(leaf);
  return out as SessionMetadata;
}
