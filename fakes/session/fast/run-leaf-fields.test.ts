import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WireSample } from '../../../contracts/wire-sample.ts';
import { type TitoModel, titoFamily } from '../../tokenizer/tito.ts';
import { buildLeafMaterial, plainLeafFields } from '../assembly.ts';
import { runFoldLeafFields } from '../compose.ts';
import { addTurn } from '../testing/build-tree.ts';
import { SessionTree, type TrajectoryNode } from '../tree.ts';

// The oracle is Miles' rules on plain lists (assembly.ts `plainLeafFields`): on any tree, the runs fold
// with its deferred fields must give the same samples (every field read, -0 apart from 0) or the same
// assembly error.

interface TurnPlan {
  readonly parent: number;
  readonly observation: number[];
  readonly output: number[];
  readonly finish: string;
  readonly dropLast: boolean;
}

const ids = (max: number) => fc.array(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: max });
/** Mostly some ids, now and then none (an empty observation: Miles' `obs_len must be > 0`). */
const someIds = (max: number) =>
  fc.oneof({ arbitrary: ids(max), weight: 9 }, { arbitrary: fc.constant<number[]>([]), weight: 1 });
const plan = fc.record({
  model: fc.constantFrom<TitoModel>('default', 'glm47'),
  maxSeqLen: fc.option(fc.integer({ min: 1, max: 60 }), { nil: null }),
  turns: fc.array(
    fc.record({
      parent: fc.integer({ min: -1, max: 3 }),
      observation: someIds(4),
      output: someIds(5),
      finish: fc.constantFrom('stop', 'stop', 'stop', 'length', 'abort'),
      dropLast: fc.integer({ min: 0, max: 4 }).map((k) => k === 0),
    }),
    { minLength: 1, maxLength: 9 },
  ),
});

/**
 * A tree from the plan: each turn a root (`parent` -1) or under the node `parent` places back from the
 * latest, its prompt that node's ids plus the observation.
 */
function treeOf(turns: readonly TurnPlan[]): SessionTree {
  const tree = new SessionTree();
  const nodes: TrajectoryNode[] = [];
  for (const t of turns) {
    const parent = t.parent < 0 ? null : (nodes[Math.max(nodes.length - 1 - t.parent, 0)] ?? null);
    let prompt = parent === null ? [] : parent.tokens.toArray();
    // A parent's last output id dropped: a trim for glm47 (one allowed), a refusal otherwise.
    if (t.dropLast && prompt.length > 0) prompt = prompt.slice(0, -1);
    const output = t.output.map((id, k) => (k === 0 ? -0 : -id / 64));
    nodes.push(
      addTurn(tree, parent, {
        prompt: prompt.concat(t.observation),
        output: t.output,
        logprobs: output,
        finish: t.finish,
      }),
    );
  }
  return tree;
}

/** Every field read (the deferred ones built), or the error's text. */
function outcome(build: () => WireSample[]): unknown {
  try {
    return build().map((s) => ({ ...s, metadata: { ...s.metadata } }));
  } catch (error) {
    return { error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  }
}

describe('runLeafFields', () => {
  it('gives the samples (or the error) Miles’ plain lists give, on any tree', () => {
    fc.assert(
      fc.property(plan, ({ model, maxSeqLen, turns }) => {
        const family = titoFamily(model);
        const tree = treeOf(turns);
        const runs = outcome(() => buildLeafMaterial(tree, family, maxSeqLen, undefined, runFoldLeafFields));
        const plain = outcome(() => buildLeafMaterial(tree, family, maxSeqLen, undefined, plainLeafFields));
        expect(runs).toEqual(plain);
      }),
      { numRuns: 300 },
    );
  });

  it('hands each leaf its own accumulated_token_ids and masks, as the plain lists do', () => {
    const tree = new SessionTree();
    const root = addTurn(tree, null, { prompt: [1, 2], output: [3] });
    addTurn(tree, root, { prompt: [1, 2, 3, 4], output: [5] });
    addTurn(tree, null, { prompt: [7], output: [3] });
    const [a, b] = buildLeafMaterial(tree, titoFamily('default'), null, undefined, runFoldLeafFields);
    (a!.metadata.accumulated_token_ids as number[]).push(0);
    a!.loss_mask!.fill(9);
    expect(root.tokens.toArray()).toEqual([1, 2, 3]);
    expect(b!.loss_mask).toEqual([1]);
    expect(b!.metadata.accumulated_token_ids).toEqual([7, 3]);
  });
});
