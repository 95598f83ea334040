import { messageTrie } from '../../fakes/session/compose.ts';
import { addTurn } from '../../fakes/session/testing/build-tree.ts';
import { MAX_NODES, pathMessages, SessionTree, type TrajectoryNode } from '../../fakes/session/tree.ts';

/**
 * Benchmark 2: the cost of finding a request's attach point against the tree size, up to the 1024-node
 * cap. Trees are built of 16-node chains (one per compaction segment or retry branch); the request is
 * always a 16-turn history (33 messages) plus one new message, so only the tree size varies. An index
 * over message prefixes keeps the cost flat; a scan over nodes would grow with the tree.
 */

export const CHAIN_LENGTH = 16;
export const DEFAULT_TREE_SIZES = [16, 64, 256, MAX_NODES] as const;

export interface AttachSize {
  readonly nodes: number;
  /** Median over repeats of the mean time per search. */
  readonly ns_per_search: number;
  readonly searches: number;
}

export interface AttachBenchResult {
  readonly chain_length: number;
  readonly request_messages: number;
  readonly sizes: readonly AttachSize[];
  /** ns per search at the largest tree over the smallest: near 1 means flat. */
  readonly ratio_largest_smallest: number;
}

function buildTree(nodes: number): { tree: SessionTree; leaves: TrajectoryNode[] } {
  // The server's search: the trie index (fakes/session/compose.ts), not the walk it stands in for.
  const tree = new SessionTree(MAX_NODES, messageTrie());
  const leaves: TrajectoryNode[] = [];
  for (let chain = 0; tree.size < nodes; chain += 1) {
    let parent: TrajectoryNode | null = null;
    for (let depth = 0; depth < CHAIN_LENGTH && tree.size < nodes; depth += 1) {
      parent = addTurn(tree, parent, {
        prompt: [1, 2, 3],
        output: [10 + depth, 11],
        messages: [
          { role: depth === 0 ? 'user' : 'tool', content: `chain ${chain} step ${depth}: make -j4` },
        ],
      });
    }
    if (parent) leaves.push(parent);
  }
  return { tree, leaves };
}

function median(xs: readonly number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

export function benchAttachPoint(
  sizes: readonly number[] = DEFAULT_TREE_SIZES,
  searches = 20_000,
  repeats = 5,
): AttachBenchResult {
  const results: AttachSize[] = [];
  let requestMessages = 0;
  for (const nodes of sizes) {
    const { tree, leaves } = buildTree(nodes);
    // The newest chain and the oldest one, alternately: both must be found without scanning.
    const requests = [leaves.at(-1), leaves[0]].map((leaf) => [
      ...pathMessages(leaf ?? null),
      { role: 'tool', content: 'the next observation' },
    ]);
    requestMessages = requests[0]?.length ?? 0;
    let sink = 0;
    for (let i = 0; i < 1_000; i += 1) sink += tree.findAttachPoint(requests[i % 2] ?? []).matched;
    const perSearch: number[] = [];
    for (let r = 0; r < repeats; r += 1) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < searches; i += 1) sink += tree.findAttachPoint(requests[i % 2] ?? []).matched;
      perSearch.push(Number(process.hrtime.bigint() - started) / searches);
    }
    if (sink === 0) throw new Error('attach-point search matched nothing');
    results.push({ nodes: tree.size, ns_per_search: Math.round(median(perSearch)), searches });
  }
  const first = results[0]?.ns_per_search ?? Number.NaN;
  const last = results.at(-1)?.ns_per_search ?? Number.NaN;
  return {
    chain_length: CHAIN_LENGTH,
    request_messages: requestMessages,
    sizes: results,
    ratio_largest_smallest: Math.round((last / first) * 100) / 100,
  };
}
