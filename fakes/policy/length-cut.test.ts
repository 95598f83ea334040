import { describe, expect, it } from 'vitest';
import { titoFamily } from '../tokenizer/tito.ts';
import { SPECIAL, wordTokenId } from '../tokenizer/toy-tokenizer.ts';
import { idsFor, truncateToLength } from './length-cut.ts';

/**
 * A reply cut at `max_tokens` on the toy tokenizer (docs/policy.md "Modes"): a word is a token and the
 * completion ends with a stop token, so a reply of `max_tokens` words or more is cut to `max_tokens`
 * words (reasoning first, then content) and its ids lose the stop token.
 */

const toy = titoFamily('default');
const ids = (words: string) => words.split(' ').map(wordTokenId);

describe('the cut at max_tokens (toy)', () => {
  it('leaves a reply shorter than max_tokens alone', () => {
    const message = { role: 'assistant', content: 'a b c' };
    const kept = truncateToLength(toy, message, 4);
    expect(kept).toEqual({ message, cut: false });
    expect(kept.message).toBe(message);
    expect(idsFor(toy, message, false)).toEqual([...ids('a b c'), SPECIAL.end]);
  });

  it('cuts a reply of exactly max_tokens words: its stop token would be one too many', () => {
    const cut = truncateToLength(toy, { role: 'assistant', content: 'a  b\nc' }, 3);
    expect(cut).toEqual({ message: { role: 'assistant', content: 'a b c' }, cut: true });
    expect(idsFor(toy, cut.message, true)).toEqual(ids('a b c'));
  });

  it('keeps reasoning words first, then content words, each joined by one space', () => {
    const message = { role: 'assistant', reasoning_content: 'r1 r2', content: 'c1 c2 c3', tool_calls: null };
    expect(truncateToLength(toy, message, 3)).toEqual({
      message: { role: 'assistant', reasoning_content: 'r1 r2', content: 'c1', tool_calls: null },
      cut: true,
    });
    expect(truncateToLength(toy, message, 1).message).toMatchObject({ reasoning_content: 'r1', content: '' });
    expect(truncateToLength(toy, message, 0).message).toMatchObject({ reasoning_content: '', content: '' });
  });

  it('adds no reasoning to a reply without it', () => {
    const cut = truncateToLength(toy, { role: 'assistant', content: 'a b c', reasoning_content: null }, 2);
    expect(cut.message).toEqual({ role: 'assistant', content: 'a b', reasoning_content: null });
    expect(truncateToLength(toy, { content: 'a b c' }, 1).message).toEqual({ content: 'a' });
  });
});
