import type { TreeMetadata } from '../../contracts/wire-sample.ts';
import { strictMatch } from './matcher.ts';
import type { SessionRecord } from './record.ts';
import { TokenSnapshot } from './token-snapshot.ts';
import { turnArgsOf } from './turn-args.ts';

/**
 * The trajectory tree of one v2 session (radixark/miles@31f1ca96
 * miles/rollout/session/v2/tree_trajectory.py). Nodes are never deleted; `seq` is creation order
 * and the node's public id.
 *
 * The attach-point search is Miles' walk (`milesAttachWalk` below). A tree may be given an
 * `AttachIndex` that answers the same search faster (the server's: fakes/session/fast/message-trie.ts,
 * plugged in by compose.ts and property-tested against the walk); the walk stays the rule.
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
}

/** Derived: only `finish_reason == "length"` truncates. */
export function isTruncated(node: TrajectoryNode): boolean {
  return node.finishReason === 'length';
}

/** What a commit supplies; the tree derives `seq`, `children`, `depth` and the stored `tokens`. */
export type NewNode = Omit<TrajectoryNode, 'seq' | 'children' | 'depth' | 'tokens'> & {
  /**
   * Root→node ids; the node stores them as a `TokenSnapshot` and keeps no reference to this array. A
   * snapshot (the commit's: built over the parent's) is kept as it is.
   */
  readonly tokenIds: readonly number[] | TokenSnapshot;
};

export interface AttachPoint {
  /** The eligible node with the most matched messages (ties: larger seq), or null for a new root. */
  readonly node: TrajectoryNode | null;
  readonly matched: number;
}

/**
 * A faster way to the same attach point (speed only): told every node as it is created, it answers
 * `find` exactly as `milesAttachWalk` would on the same tree, throwing `MatcherError` where the walk does.
 */
export interface AttachIndex {
  added(node: TrajectoryNode): void;
  find(messages: readonly unknown[]): AttachPoint;
}

export class SessionTree {
  readonly nodes: TrajectoryNode[] = [];
  readonly maxNodes: number;
  private readonly index: AttachIndex | null;

  constructor(maxNodes = MAX_NODES, index: AttachIndex | null = null) {
    this.maxNodes = maxNodes;
    this.index = index;
  }

  get size(): number {
    return this.nodes.length;
  }

  /** Pure: never mutates the tree. Throws `MatcherError` for a message the matcher cannot compare. */
  findAttachPoint(messages: readonly unknown[]): AttachPoint {
    return this.index === null ? milesAttachWalk(this, messages) : this.index.find(messages);
  }

  createNode(spec: NewNode): TrajectoryNode {
    if (this.nodes.length >= this.maxNodes) throw new NodeCapError(this.maxNodes);
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
    };
    this.nodes.push(node);
    spec.parent?.children.push(node);
    this.index?.added(node);
    return node;
  }

  /** Childless nodes in seq order. */
  leaves(): TrajectoryNode[] {
    return this.nodes.filter((n) => n.children.length === 0);
  }

  /** `tree_metadata`; with `turnArgs` (the profile switch) each node's `turn_args` last (turn-args.ts). */
  metadata(turnArgs = false): TreeMetadata {
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
        ...(turnArgs ? { turn_args: turnArgsOf(n) } : {}),
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

/**
 * `find_attach_point` (radixark/miles@31f1ca96 miles/rollout/session/v2/tree_trajectory.py): a
 * depth-first walk from the roots comparing each node's delta, message by message, with the request's
 * next messages under the strict matcher (matcher.ts). A node whose whole delta matches is eligible and
 * its children are walked on; the eligible node with the most matched messages wins, a tie the larger
 * seq. None eligible: a new root, matched 0.
 */
export function milesAttachWalk(tree: SessionTree, request: readonly unknown[]): AttachPoint {
  let best: TrajectoryNode | null = null;
  let bestMatched = 0;
  const stack: Array<[TrajectoryNode, number]> = [];
  for (let k = tree.nodes.length - 1; k >= 0; k -= 1) {
    const node = tree.nodes[k] as TrajectoryNode;
    if (node.parent === null) stack.push([node, 0]);
  }
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [node, offset] = top;
    const delta = node.deltaMessages;
    let i = 0;
    while (i < delta.length && offset + i < request.length && strictMatch(delta[i], request[offset + i]))
      i += 1;
    if (i < delta.length) continue;
    const matched = offset + delta.length;
    if (matched > bestMatched || (matched === bestMatched && best !== null && node.seq > best.seq)) {
      best = node;
      bestMatched = matched;
    }
    for (let c = node.children.length - 1; c >= 0; c -= 1)
      stack.push([node.children[c] as TrajectoryNode, matched]);
  }
  return { node: best, matched: bestMatched };
}
