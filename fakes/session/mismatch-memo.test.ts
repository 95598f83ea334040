import { describe, expect, it, vi } from 'vitest';
import { titoFamily } from '../tokenizer/tito.ts';
import { SPECIAL, wordTokenId } from '../tokenizer/toy-tokenizer.ts';
import { computeSessionMismatch, LeafMismatchMemo } from './mismatch.ts';
import { addTurn } from './testing/build-tree.ts';
import { pathMessages, SessionTree } from './tree.ts';

/**
 * The samples op's per-leaf mismatch memo: the second comparison of a leaf reuses the first only while
 * the tokenizer has learned nothing (its decodes would read other words otherwise), and every caller
 * gets a copy of its own.
 */

/** Two words with one toy id (the id space is 100,000 wide, so a few hundred candidates find a pair). */
function collidingWords(): [string, string] {
  const seen = new Map<number, string>();
  for (let k = 0; ; k += 1) {
    const word = `c${k}`;
    const other = seen.get(wordTokenId(word));
    if (other !== undefined) return [other, word];
    seen.set(wordTokenId(word), word);
  }
}

describe('LeafMismatchMemo', () => {
  const [first, second] = collidingWords();
  const shared = wordTokenId(first);

  /** A one-node tree whose completion is the id both words share: a text mismatch naming the word. */
  function leafAndFamily() {
    const family = titoFamily('default');
    const tree = new SessionTree();
    const hello = wordTokenId('hello');
    const leaf = addTurn(tree, null, {
      prompt: [SPECIAL.user, hello, SPECIAL.assistant],
      output: [shared, SPECIAL.end],
      messages: [{ role: 'user', content: 'hello' }],
    });
    return { family, leaf };
  }

  it('compares a leaf once while the tokenizer learns nothing, handing out copies', () => {
    const { family, leaf } = leafAndFamily();
    family.tokenizer.encodeText(first);
    const render = vi.spyOn(family, 'canonicalRenderInto');
    const memo = new LeafMismatchMemo(family);
    const once = memo.forLeaf(leaf);
    const again = memo.forLeaf(leaf);
    expect(render).toHaveBeenCalledTimes(1);
    expect(once).toMatchObject([{ actual_text: first }]);
    expect(again).toEqual(once);
    expect(again).not.toBe(once);
    expect(again?.[0]).not.toBe(once?.[0]);
  });

  it('compares again, as Miles would, once a word has been learned since', () => {
    const { family, leaf } = leafAndFamily();
    family.tokenizer.encodeText(first);
    const memo = new LeafMismatchMemo(family);
    expect(memo.forLeaf(leaf)).toMatchObject([{ actual_text: first }]);
    // The colliding word takes the shared id's place in the vocabulary: decodes now read it.
    family.tokenizer.encodeText(second);
    const later = memo.forLeaf(leaf);
    expect(later).toMatchObject([{ actual_text: second }]);
    expect(later).toEqual(computeSessionMismatch(family, pathMessages(leaf), leaf.tokens.toArray()));
  });
});
