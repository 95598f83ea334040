import { isJsonObject } from '../../../common/python-json/values.ts';
import type { StrictKeys } from '../matcher.ts';
import type { AttachIndex, AttachPoint, TrajectoryNode } from '../tree.ts';
import { sameJson } from '../values/same-json.ts';
import { rememberEqualStored } from './attach-hints.ts';

/**
 * The attach-point search as a trie over strict-matcher message keys (the server's `AttachIndex`;
 * the rule is tree.ts `milesAttachWalk`, and tree.test.ts checks the two agree). A node is eligible
 * exactly when its whole root→node message path equals the request's first messages, so the deepest
 * trie position along the request that ends some node's path is the answer. The cost is one map lookup
 * per request message, whatever the tree size (the cap is 1024 nodes). A client re-sends its history
 * every turn, so before building a message's key the search compares the message with the one stored on
 * the newest edge out of the current position: the same compared fields are the same key (matcher.ts
 * `sameStrictFields`; both come in as `StrictKeys` from compose.ts), and the comparison is much cheaper than the key and its hash. Which messages were
 * the same JSON as the stored ones is left for the record sharing (attach-hints.ts).
 */

interface TriePosition {
  readonly children: Map<string, TriePosition>;
  /** Nodes whose message path ends here, in seq order (so the last one wins a tie). */
  readonly endpoints: TrajectoryNode[];
  /** The stored message whose key leads here (the first one committed on this edge); null at the root. */
  readonly message: unknown;
  /** The child a node was last committed through: where a re-sent history most likely goes next. */
  newest: TriePosition | null;
}

function emptyPosition(message: unknown): TriePosition {
  return { children: new Map(), endpoints: [], message, newest: null };
}

/** In the hints: the message is not known to equal its edge's stored one. */
const NOT_EQUAL: unique symbol = Symbol('not equal');

export class MessageTrie implements AttachIndex {
  private readonly root = emptyPosition(null);
  /** Where each node's path ends, by seq. */
  private readonly positions: TriePosition[] = [];
  private readonly keys: StrictKeys;

  constructor(keys: StrictKeys) {
    this.keys = keys;
  }

  added(node: TrajectoryNode): void {
    let position = node.parent === null ? this.root : (this.positions[node.parent.seq] as TriePosition);
    for (const message of node.deltaMessages) {
      const key = this.keys.key(message);
      let next = position.children.get(key);
      if (next === undefined) {
        next = emptyPosition(message);
        position.children.set(key, next);
      }
      position.newest = next;
      position = next;
    }
    position.endpoints.push(node);
    this.positions[node.seq] = position;
  }

  find(messages: readonly unknown[]): AttachPoint {
    const equalStored: unknown[] = [];
    let position = this.root;
    let bestNode: TrajectoryNode | null = null;
    let bestMatched = 0;
    for (let i = 0; i < messages.length; i += 1) {
      const newest = position.newest;
      if (newest === null) break;
      const message = messages[i];
      const stored = newest.message;
      // Same JSON as the stored message object: the same compared fields too, so the same key.
      const same = isJsonObject(message) && sameJson(message, stored);
      equalStored[i] = same ? stored : NOT_EQUAL;
      const next =
        same || this.keys.sameFields(message, stored)
          ? newest
          : position.children.get(this.keys.key(message));
      if (next === undefined) break;
      position = next;
      const endpoints = position.endpoints;
      if (endpoints.length > 0) {
        bestNode = endpoints[endpoints.length - 1] as TrajectoryNode;
        bestMatched = i + 1;
      }
    }
    rememberEqualStored(messages, equalStored);
    return { node: bestNode, matched: bestMatched };
  }
}
