import { isJsonObject } from '../../common/python-json/values.ts';
import type { TreeMetadata } from '../../contracts/wire-sample.ts';
import { sameJson } from './fast/same-json.ts';
import { sameStrictFields, strictMessageKey } from './matcher.ts';
import type { SessionRecord } from './record.ts';
import { TokenSnapshot } from './token-snapshot.ts';

/**
 * The trajectory tree of one v2 session (radixark/miles@31f1ca96
 * miles/rollout/session/v2/tree_trajectory.py). Nodes are never deleted; `seq` is creation order
 * and the node's public id.
 *
 * The attach-point search walks a trie over strict-matcher message keys instead of visiting every node:
 * a node is eligible exactly when its whole root→node message path equals the request's first messages,
 * so the deepest trie position along the request that ends some node's path is the answer. The cost is
 * one map lookup per request message, whatever the tree size (the cap is 1024 nodes). A client re-sends
 * its history every turn, so before building a message's key the search compares the message with the
 * one stored on the newest edge out of the current position: the same compared fields are the same key
 * (matcher.ts `sameStrictFields`), and the comparison is much cheaper than the key and its hash.
 */

/** `MAX_NODES` per session. */
export const MAX_NODES = 1024;

/** Miles' `ValueError` on the node cap; over HTTP it is an unhandled exception (500 plain). */
export class NodeCapError extends Error {
  constructor(cap: number) {
    super(
      `node cap reached (${cap}): the session cannot branch or extend further — this almost always means the harness is not replaying history verbatim`,
    );
    this.name = 'NodeCapError';
  }
}

interface MessageTrie {
  readonly children: Map<string, MessageTrie>;
  /** Nodes whose message path ends here, in seq order (so the last one wins a tie). */
  readonly endpoints: TrajectoryNode[];
  /** The stored message whose key leads here (the first one committed on this edge); null at the root. */
  readonly message: unknown;
  /** The child a node was last committed through: where a re-sent history most likely goes next. */
  newest: MessageTrie | null;
}

function emptyTrie(message: unknown): MessageTrie {
  return { children: new Map(), endpoints: [], message, newest: null };
}

export interface TrajectoryNode {
  readonly seq: number;
  readonly parent: TrajectoryNode | null;
  readonly children: TrajectoryNode[];
  /** The client's unmatched suffix messages, then the raw backend assistant message. Never empty. */
  readonly deltaMessages: readonly unknown[];
  /**
   * Root→node snapshot: prompt ids then completion ids, sharing its parent's ids where they agree
   * (token-snapshot.ts: at 32k-token contexts the per-node snapshots were most of a session's memory).
   */
  readonly tokens: TokenSnapshot;
  /** Half-open `[start, end)` of the completion in `tokens`. */
  readonly completionSpan: readonly [number, number];
  readonly committedAt: number;
  /** The response `id`; `""` when absent, `null` when the backend sent null. */
  readonly responseId: string | null;
  readonly record: SessionRecord;
  /** `choices[0].finish_reason`, or `""` when empty. */
  readonly finishReason: string;
  /** Number of messages on the root→node path. */
  readonly depth: number;
  readonly trie: MessageTrie;
}

/** Derived: only `finish_reason == "length"` truncates. */
export function isTruncated(node: TrajectoryNode): boolean {
  return node.finishReason === 'length';
}

/** What a commit supplies; the tree derives `seq`, `children`, `depth`, `trie` and the stored `tokens`. */
export type NewNode = Omit<TrajectoryNode, 'seq' | 'children' | 'depth' | 'trie' | 'tokens'> & {
  /**
   * Root→node ids; the node stores them as a `TokenSnapshot` and keeps no reference to this array. A
   * snapshot (the commit's: built over the parent's) is kept as it is.
   */
  readonly tokenIds: readonly number[] | TokenSnapshot;
};

/** In `findAttachPoint`'s `equalStored`: the message is not known to equal its edge's stored one. */
export const NOT_EQUAL: unique symbol = Symbol('not equal');

export interface AttachPoint {
  /** The eligible node with the most matched messages (ties: larger seq), or null for a new root. */
  readonly node: TrajectoryNode | null;
  readonly matched: number;
}

export class SessionTree {
  readonly nodes: TrajectoryNode[] = [];
  readonly maxNodes: number;
  private readonly trie = emptyTrie(null);

  constructor(maxNodes = MAX_NODES) {
    this.maxNodes = maxNodes;
  }

  get size(): number {
    return this.nodes.length;
  }

  /**
   * Pure: never mutates the tree (only `equalStored`). Throws `MatcherError` for a message the matcher
   * cannot compare. `equalStored`, when given, gets at index i the stored message of the edge the search
   * took for `messages[i]` when the two are the same JSON (same-json.ts), else `NOT_EQUAL`: the whole
   * message is compared here anyway (a same message is the common case, and then its compared fields
   * are the same), so the chat route's `shareStoredMessages` need not compare it again.
   */
  findAttachPoint(messages: readonly unknown[], equalStored?: unknown[]): AttachPoint {
    let position = this.trie;
    let bestNode: TrajectoryNode | null = null;
    let bestMatched = 0;
    for (let i = 0; i < messages.length; i += 1) {
      const newest = position.newest;
      if (newest === null) break;
      const message = messages[i];
      const stored = newest.message;
      // Same JSON as the stored message object: the same compared fields too, so the same key.
      const same = isJsonObject(message) && sameJson(message, stored);
      if (equalStored !== undefined) equalStored[i] = same ? stored : NOT_EQUAL;
      const next =
        same || sameStrictFields(message, stored) ? newest : position.children.get(strictMessageKey(message));
      if (next === undefined) break;
      position = next;
      const endpoints = position.endpoints;
      if (endpoints.length > 0) {
        bestNode = endpoints[endpoints.length - 1] as TrajectoryNode;
        bestMatched = i + 1;
      }
    }
    return { node: bestNode, matched: bestMatched };
  }

  createNode(spec: NewNode): TrajectoryNode {
    if (this.nodes.length >= this.maxNodes) throw new NodeCapError(this.maxNodes);
    let position = spec.parent?.trie ?? this.trie;
    for (const message of spec.deltaMessages) {
      const key = strictMessageKey(message);
      let next = position.children.get(key);
      if (next === undefined) {
        next = emptyTrie(message);
        position.children.set(key, next);
      }
      position.newest = next;
      position = next;
    }
    const node: TrajectoryNode = {
      seq: this.nodes.length,
      parent: spec.parent,
      children: [],
      deltaMessages: [...spec.deltaMessages],
      tokens:
        spec.tokenIds instanceof TokenSnapshot
          ? spec.tokenIds
          : TokenSnapshot.of(spec.tokenIds, spec.parent?.tokens ?? null),
      completionSpan: [spec.completionSpan[0], spec.completionSpan[1]],
      committedAt: spec.committedAt,
      responseId: spec.responseId,
      record: spec.record,
      finishReason: spec.finishReason,
      depth: (spec.parent?.depth ?? 0) + spec.deltaMessages.length,
      trie: position,
    };
    position.endpoints.push(node);
    this.nodes.push(node);
    spec.parent?.children.push(node);
    return node;
  }

  /** Childless nodes in seq order. */
  leaves(): TrajectoryNode[] {
    return this.nodes.filter((n) => n.children.length === 0);
  }

  metadata(): TreeMetadata {
    return {
      nodes: this.nodes.map((n) => ({
        id: n.seq,
        parent: n.parent?.seq ?? null,
        seq: n.seq,
        truncated: isTruncated(n),
        committed_at: n.committedAt,
        completion_span: [n.completionSpan[0], n.completionSpan[1]],
        num_tokens: n.tokens.length,
        response_id: n.responseId,
      })),
      leaves: this.leaves().map((n) => ({ node_id: n.seq, path_node_ids: pathNodes(n).map((p) => p.seq) })),
    };
  }
}

/** Root→node, inclusive. */
export function pathNodes(node: TrajectoryNode | null): TrajectoryNode[] {
  const out: TrajectoryNode[] = [];
  for (let n = node; n !== null; n = n.parent) out.push(n);
  return out.reverse();
}

/** The concatenated deltas of the root→node path. */
export function pathMessages(node: TrajectoryNode | null): unknown[] {
  return pathNodes(node).flatMap((n) => n.deltaMessages);
}
