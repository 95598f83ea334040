import type { TrajectoryNode } from '../tree.ts';
import { sameJson } from '../values/same-json.ts';

/**
 * Replaces each message of `messages` equal to the one stored at the same position on the root→`node`
 * path (the attach point: the request's first `node.depth` messages matched it) by that stored object,
 * so the texts a client re-sends every turn are held once (the assistant replies included: a node
 * stores the backend's message, which the client echoes). Equal means the same JSON with the same key
 * order (what a record prints: same-json.ts); anything else stays as it is. The forwarded-body writer
 * reuses the stored objects' texts. `equalStored`: what the trie search found for the same `messages`
 * (attach-hints.ts; a position whose entry is this very stored object needs no comparison).
 */
export function shareStoredMessages(
  messages: unknown[],
  node: TrajectoryNode | null,
  equalStored?: readonly unknown[],
): void {
  for (let n = node; n !== null; n = n.parent) {
    const delta = n.deltaMessages;
    const start = n.depth - delta.length;
    const end = Math.min(delta.length, messages.length - start);
    for (let k = 0; k < end; k++) {
      const stored = delta[k];
      // The attach search already found this message the same JSON as `stored` (attach-hints.ts).
      if (
        (stored !== undefined && equalStored?.[start + k] === stored) ||
        sameJson(messages[start + k], stored)
      )
        messages[start + k] = stored;
    }
  }
}
