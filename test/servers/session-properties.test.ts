import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { milesProfileNamed } from '../../contracts/miles-profile.ts';
import { DIRECTIVE_HEADER } from '../../contracts/policy-headers.ts';
import type { LeafRef, SamplesReply, TreeMetadata } from '../../contracts/wire-sample.ts';
import { replyMessage, startStack } from './support.ts';

// Properties over random traces sent over HTTP (Miles' tests/fast/router/test_tree_assembly_invariants.py
// oracle, radixark/miles@31f1ca96): retries, branches, new roots, carried summaries, truncated replies and
// backend failures, then the tree and the samples op checked against the invariants.

type Message = Record<string, unknown>;

type Op =
  | { kind: 'extend'; base: number; role: 'user' | 'tool'; length: boolean }
  | { kind: 'retry'; base: number }
  | { kind: 'root' }
  | { kind: 'carry'; base: number }
  | { kind: 'fail'; base: number };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('extend' as const),
      base: fc.nat(),
      role: fc.constantFrom('user' as const, 'tool' as const),
      length: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
    }),
  },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('retry' as const), base: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('root' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('carry' as const), base: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fail' as const), base: fc.nat() }) },
);

let stack: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  // The kept-set oracle below is 31f1ca96's drop_retries picker (root leaves plus leaves with no later
  // sibling); 4d412b5a's drop_same_prompt_retries keeps another set, so the property runs under 31f1ca96.
  stack = await startStack({ milesProfile: milesProfileNamed('31f1ca96')! }, { completionWords: 3 });
});
afterAll(() => stack.close());

interface Outcome {
  readonly okResponseIds: string[];
}

/** Plays the ops against a fresh session; every reply is replayed verbatim in later histories. */
async function play(sessionId: string, ops: readonly Op[]): Promise<Outcome> {
  const conversations: Message[][] = [];
  const requests: Message[][] = [];
  const okResponseIds: string[] = [];
  let counter = 0;
  const fresh = (role: string) => {
    counter += 1;
    return { role, content: `message ${counter} for ${role}` };
  };
  const send = async (messages: Message[], directive?: object) => {
    requests.push(messages);
    const answer = await stack.client.chat(
      sessionId,
      { messages },
      directive ? { headers: { [DIRECTIVE_HEADER]: JSON.stringify(directive) } } : {},
    );
    if (answer.status === 200) {
      okResponseIds.push((answer.json as { id: string }).id);
      conversations.push([...messages, replyMessage(answer.json)]);
    }
  };
  for (const op of [{ kind: 'root' } as Op, ...ops]) {
    const base =
      'base' in op && conversations.length > 0 ? conversations[op.base % conversations.length]! : null;
    switch (op.kind) {
      case 'root':
        await send([{ role: 'system', content: 'you are terminus' }, fresh('user')]);
        break;
      case 'extend':
        if (base) await send([...base, fresh(op.role)], op.length ? { finish_reason: 'length' } : undefined);
        break;
      case 'retry':
        if (requests.length > 0) await send(requests[op.base % requests.length]!);
        break;
      case 'carry':
        if (base)
          await send([
            ...base,
            fresh('tool'),
            { role: 'assistant', content: `summary ${counter}` },
            fresh('user'),
          ]);
        break;
      case 'fail':
        if (base)
          await send([...base, fresh('user')], {
            error: { status: 400, message: 'context length exceeded' },
          });
        break;
    }
  }
  return { okResponseIds };
}

function checkTree(tree: TreeMetadata, outcome: Outcome): void {
  const ids = tree.nodes.map((n) => n.id);
  expect(ids).toEqual(ids.map((_, i) => i));
  for (const n of tree.nodes) if (n.parent !== null) expect(n.parent).toBeLessThan(n.id);
  const parents = new Set(tree.nodes.map((n) => n.parent));
  expect(tree.leaves.map((l) => l.node_id)).toEqual(ids.filter((id) => !parents.has(id)));
  for (const leaf of tree.leaves) {
    const path: number[] = [];
    for (let id: number | null = leaf.node_id; id !== null; id = tree.nodes[id]!.parent) path.unshift(id);
    expect(leaf.path_node_ids).toEqual(path);
  }
  // Every committed generation (every 200) is a node, and nothing else is.
  expect(tree.nodes.map((n) => n.response_id).sort()).toEqual([...outcome.okResponseIds].sort());
  for (const n of tree.nodes) if (n.truncated) expect(parents.has(n.id)).toBe(false);
}

/** Returns, per node, the leaf ids of the samples that train any of its completion tokens. */
function checkSamples(reply: SamplesReply, maxSeqLen: number | null): Map<number, number[]> {
  const tree = reply.sessionMetadata.tree;
  const trainedIn = new Map<number, number[]>();
  for (const sample of reply.samples) {
    const leaf = sample.metadata.leaf as LeafRef;
    const mask = sample.loss_mask!;
    expect(mask).toHaveLength(sample.response_length);
    expect(sample.rollout_log_probs).toHaveLength(sample.response_length);
    const snapshot = sample.metadata.accumulated_token_ids as number[];
    expect(snapshot.slice(0, sample.tokens.length)).toEqual(sample.tokens);
    if (maxSeqLen !== null) expect(sample.tokens.length).toBeLessThanOrEqual(maxSeqLen);
    const rs = sample.tokens.length - sample.response_length;
    const spanOwner = new Map<number, number>();
    for (const id of leaf.path_node_ids) {
      const [cs, ce] = tree.nodes[id]!.completion_span;
      for (let p = cs; p < ce; p += 1) spanOwner.set(p, id);
    }
    const nodesTrained = new Set<number>();
    mask.forEach((bit, k) => {
      if (bit !== 1) return;
      const owner = spanOwner.get(k + rs);
      // Mask 0 on every token that is not a completion.
      expect(owner, `trained position ${k + rs} outside every completion span`).toBeDefined();
      nodesTrained.add(owner!);
    });
    for (const id of nodesTrained) trainedIn.set(id, [...(trainedIn.get(id) ?? []), leaf.node_id]);
  }
  // No completion is trained in two returned samples.
  for (const [id, leaves] of trainedIn) expect(leaves, `node ${id} trained in ${leaves}`).toHaveLength(1);
  // Order: deepest path first, then latest leaf first.
  const keys = reply.samples.map((s) => {
    const leaf = s.metadata.leaf as LeafRef;
    return leaf.path_node_ids.length * 10_000 + leaf.node_id;
  });
  expect(keys).toEqual([...keys].sort((a, b) => b - a));
  return trainedIn;
}

describe('random traces (properties)', () => {
  it('keep the tree and sample invariants', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(opArb, { minLength: 1, maxLength: 10 }),
        fc.option(fc.integer({ min: 4, max: 80 }), { nil: null }),
        async (ops, maxSeqLen) => {
          const sessionId = await stack.client.create();
          try {
            const outcome = await play(sessionId, ops);
            const view = await stack.client.get(sessionId);
            checkTree(view.metadata.tree, outcome);
            const reply = await stack.client.collectSamples(sessionId, { metadata: { reward: 0.5 } });
            const trained = checkSamples(reply, null);
            // Exactly once: every completion on a kept leaf's path is trained in one kept sample.
            const tree = reply.sessionMetadata.tree;
            const kept = reply.samples.map((s) => (s.metadata.leaf as LeafRef).node_id);
            // ... in the earliest kept leaf whose path holds it (default_postprocess: owner = smallest leaf
            // id).
            for (const leafId of kept) {
              const path = tree.leaves.find((l) => l.node_id === leafId)!.path_node_ids;
              for (const id of path) {
                // bounded-spread: the kept leaves of one generated tree (a few dozen at most)
                const owner = Math.min(
                  ...kept.filter((k) => tree.leaves.find((l) => l.node_id === k)!.path_node_ids.includes(id)),
                );
                expect(trained.get(id), `node ${id}`).toEqual([owner]);
              }
            }
            // The kept set: root leaves plus leaves with no later sibling.
            const expectedKept = tree.leaves
              .map((l) => tree.nodes[l.node_id]!)
              .filter(
                (n) => n.parent === null || !tree.nodes.some((o) => o.parent === n.parent && o.id > n.id),
              )
              .map((n) => n.id);
            expect([...kept].sort((a, b) => a - b)).toEqual(expectedKept);
            for (const s of reply.samples) expect(s.reward).toBe(0.5);
            if (maxSeqLen !== null) {
              const cut = await stack.client.collectSamples(sessionId, { maxSeqLen });
              checkSamples(cut, maxSeqLen);
              if (cut.samples.length === 0) expect(cut.emptyReason).toBe('all_truncated');
            }
          } finally {
            await stack.client.delete(sessionId);
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
