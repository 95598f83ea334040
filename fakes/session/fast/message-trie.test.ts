import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messageTrie } from '../compose.ts';
import { MatcherError } from '../matcher.ts';
import { buildForest, forestCase, parseMessage } from '../testing/near-miss-forest.ts';
import { milesAttachWalk } from '../tree.ts';

/** The outcome of a search: the node's seq and the matched count, or the matcher's refusal. */
function outcome(search: () => { node: { seq: number } | null; matched: number }): unknown {
  try {
    const found = search();
    return [found.node?.seq ?? null, found.matched];
  } catch (error) {
    if (error instanceof MatcherError) return 'matcher error';
    throw error;
  }
}

// The rule is Miles' walk (tree.ts `milesAttachWalk`, radixark/miles@31f1ca96
// miles/rollout/session/v2/tree_trajectory.py `find_attach_point`); the trie is only an index over it.
describe('the message trie against Miles’ attach walk', () => {
  it('finds the same node and count on trees of near-miss messages (re-spelt, reordered, changed)', () => {
    let shortcuts = 0;
    fc.assert(
      fc.property(forestCase, (forest) => {
        const { tree } = buildForest(forest, messageTrie());
        for (const texts of forest.requests) {
          const request = texts.map(parseMessage);
          const found = tree.findAttachPoint(request);
          const walked = milesAttachWalk(tree, request);
          expect([found.node?.seq ?? null, found.matched]).toEqual([
            walked.node?.seq ?? null,
            walked.matched,
          ]);
          expect(found.node).toBe(walked.node);
          if (found.matched > 0) shortcuts += 1;
        }
      }),
      { numRuns: 400 },
    );
    // The cases matched something often enough to exercise the search, not only its first step.
    expect(shortcuts).toBeGreaterThan(400);
  });

  it('refuses a message the matcher cannot compare exactly where the walk does', () => {
    let refused = 0;
    fc.assert(
      fc.property(forestCase, fc.nat(), fc.constantFrom('"text"', '7', 'null', '[1]'), (forest, at, odd) => {
        const { tree } = buildForest(forest, messageTrie());
        for (const texts of forest.requests) {
          const request = texts.map(parseMessage);
          if (request.length > 0) request[at % request.length] = parseMessage(odd);
          const trie = outcome(() => tree.findAttachPoint(request));
          expect(trie).toEqual(outcome(() => milesAttachWalk(tree, request)));
          if (trie === 'matcher error') refused += 1;
        }
      }),
      { numRuns: 200 },
    );
    expect(refused).toBeGreaterThan(20);
  });
});
