import { describe, expect, it } from 'vitest';
import { messageTrie } from './compose.ts';
import type { SessionRecord } from './record.ts';
import {
  isTruncated,
  MAX_NODES,
  NodeCapError,
  pathMessages,
  SessionTree,
  type TrajectoryNode,
} from './tree.ts';

// Shapes from Miles' tests/fast/router/test_tree_trajectory.py (radixark/miles@31f1ca96).
const S = { role: 'system', content: 'sys' };
const U = { role: 'user', content: 'task' };
const m = (role: string, content: string) => ({ role, content });
const A1 = m('assistant', 'a1');
const T1 = m('tool', 't1');
const A2 = m('assistant', 'a2');
const T2 = m('tool', 't2');
const A3 = m('assistant', 'a3');

const record = {} as SessionRecord;

function commit(
  tree: SessionTree,
  parent: TrajectoryNode | null,
  delta: unknown[],
  finish = 'stop',
): TrajectoryNode {
  const tokens = [...(parent?.tokens.toArray() ?? []), tree.size + 10];
  return tree.createNode({
    parent,
    deltaMessages: delta,
    tokenIds: tokens,
    completionSpan: [tokens.length - 1, tokens.length],
    committedAt: tree.size,
    responseId: `r${tree.size}`,
    record,
    finishReason: finish,
  });
}

function chain() {
  const tree = new SessionTree();
  const n0 = commit(tree, null, [S, U, A1]);
  const n1 = commit(tree, n0, [T1, A2]);
  const n2 = commit(tree, n1, [T2, A3]);
  return { tree, n0, n1, n2 };
}

describe('attach-point search', () => {
  it.each([
    ['strict extension', [S, U, A1, T1, A2, T2, A3, m('user', 'more')], 2, 7],
    ['degenerate resend', [S, U, A1, T1, A2, T2, A3], 2, 7],
    ['divergence in the last delta', [S, U, A1, T1, A2, m('tool', 't2-other')], 1, 5],
    ['divergence after the root', [S, U, A1, m('tool', 'other')], 0, 3],
    [
      'rewritten assistant (compaction)',
      [S, U, A1, T1, m('assistant', 'a2-rewritten'), m('user', 'x')],
      0,
      3,
    ],
    ['rewritten user', [S, m('user', 'other')], null, 0],
    ['strict prefix of the root delta', [S, U], null, 0],
    ['zero overlap', [m('user', 'hello')], null, 0],
    ['empty request', [], null, 0],
  ])('%s', (_name, request, seq, matched) => {
    const { tree } = chain();
    const found = tree.findAttachPoint(request);
    expect(found.node?.seq ?? null).toBe(seq);
    expect(found.matched).toBe(matched);
  });

  it('prefers the later of identical twins and the deepest match across roots', () => {
    const tree = new SessionTree();
    const n0 = commit(tree, null, [S, U, A1]);
    commit(tree, n0, [T1, A2]);
    const twin = commit(tree, n0, [T1, A2]);
    expect(tree.findAttachPoint([S, U, A1, T1, A2, T2]).node).toBe(twin);
    const other = commit(tree, null, [S, m('user', 'other'), A1]);
    const deeper = commit(tree, other, [T1, A2]);
    const deepest = commit(tree, deeper, [T2, A3]);
    expect(tree.findAttachPoint([S, m('user', 'other'), A1, T1, A2, T2, A3, T1]).node).toBe(deepest);
  });

  // find_attach_point (radixark/miles@31f1ca96 miles/rollout/session/v2/tree_trajectory.py): the deepest
  // match wins, a tie on depth the latest seq, whatever order the walk meets them in.
  it.each([
    ['the walk', () => new SessionTree()],
    ['the trie', () => new SessionTree(MAX_NODES, messageTrie())],
  ])('keeps the later seq of a tie met first, and no later shallower match (%s)', (_name, make) => {
    const tree = make();
    const root = commit(tree, null, [S, U, A1]);
    // A root holding the child's whole path (seq 1) ties with the child (seq 2) at five messages; the walk
    // meets the child first (depth first from the first root), then this root, then the shallow twin root.
    commit(tree, null, [S, U, A1, T1, A2]);
    const child = commit(tree, root, [T1, A2]);
    commit(tree, null, [S, U, A1]);
    const found = tree.findAttachPoint([S, U, A1, T1, A2, T2]);
    expect(found.node).toBe(child);
    expect(found.matched).toBe(5);
  });

  it('handles a 1024-deep chain and then refuses the next node (node cap)', () => {
    const tree = new SessionTree();
    let parent: TrajectoryNode | null = null;
    const request: unknown[] = [];
    for (let i = 0; i < 1024; i += 1) {
      const delta = [m('user', `u${i}`), m('assistant', `a${i}`)];
      // bounded-spread: a generated delta of a few messages
      request.push(...delta);
      parent = commit(tree, parent, delta);
    }
    expect(tree.findAttachPoint([...request, m('user', 'next')]).node).toBe(parent);
    expect(() => commit(tree, parent, [m('user', 'x'), A1])).toThrow(NodeCapError);
    expect(() => commit(tree, parent, [m('user', 'x'), A1])).toThrow('node cap reached (1024)');
    expect(tree.size).toBe(1024);
  });

  it('applies a lower cap when configured, as Miles tests patch MAX_NODES', () => {
    const tree = new SessionTree(2);
    const n0 = commit(tree, null, [U, A1]);
    commit(tree, n0, [T1, A2]);
    expect(() => commit(tree, n0, [T2, A3])).toThrow('node cap reached (2)');
  });
});

describe('tree model', () => {
  it('derives truncation from finish_reason length only, and not for children', () => {
    const tree = new SessionTree();
    const cut = commit(tree, null, [U, A1], 'length');
    const aborted = commit(tree, null, [T1, A2], 'abort');
    const child = commit(tree, cut, [T1, A2]);
    expect([isTruncated(cut), isTruncated(aborted), isTruncated(child)]).toEqual([true, false, false]);
  });

  it('concatenates deltas along the path and lists leaves in creation order', () => {
    const { tree, n0, n2 } = chain();
    const retry = commit(tree, n0, [T1, A2]);
    expect(pathMessages(n2)).toEqual([S, U, A1, T1, A2, T2, A3]);
    expect(tree.leaves()).toEqual([n2, retry]);
    expect(tree.metadata().leaves).toEqual([
      { node_id: 2, path_node_ids: [0, 1, 2] },
      { node_id: 3, path_node_ids: [0, 3] },
    ]);
    expect(tree.metadata().nodes[3]).toEqual({
      id: 3,
      parent: 0,
      seq: 3,
      truncated: false,
      committed_at: 3,
      completion_span: [1, 2],
      num_tokens: 2,
      response_id: 'r3',
    });
  });

  it('stores the ids it is given, and no later change to the caller array reaches the node', () => {
    const tree = new SessionTree();
    const tokens = [1, 2, 3];
    const node = tree.createNode({
      parent: null,
      deltaMessages: [A1],
      tokenIds: tokens,
      completionSpan: [2, 3],
      committedAt: 0,
      responseId: '',
      record,
      finishReason: 'stop',
    });
    tokens.push(4);
    tokens[0] = 9;
    expect(node.tokens.toArray()).toEqual([1, 2, 3]);
  });
});
