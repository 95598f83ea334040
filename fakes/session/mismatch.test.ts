import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { titoFamily } from '../tokenizer/tito.ts';
import { compareSequences, computeSessionMismatch } from './mismatch.ts';

// What Miles' own `TokenSeqComparator.compare_sequences` (radixark/miles@31f1ca96
// miles/utils/chat_template_utils/token_seq_comparator.py) returned for these toy-token sequences,
// configured as the default family configures it (scripts/oracles/oracle_vectors.py).
const oracle = JSON.parse(
  readFileSync(new URL('../../fixtures/miles-oracle/mismatch.json', import.meta.url), 'utf8'),
) as {
  vocabulary: string[];
  cases: Array<{ name: string; expected_ids: number[]; actual_ids: number[]; result: unknown[] }>;
};

const family = titoFamily('default');
family.tokenizer.encodeText(oracle.vocabulary.join(' '));
const U = { role: 'user', content: 'do it' };
const A = { role: 'assistant', content: 'done' };
const T = { role: 'tool', content: 'ok' };

describe('tito_session_mismatch (toy)', () => {
  it.each(oracle.cases)("$name: as Miles' comparator reports it", (c) => {
    expect(compareSequences(family, c.expected_ids, c.actual_ids)).toEqual(c.result);
  });

  it('is empty for a path whose tokens came from pretokenized generation', () => {
    const prompt = family.renderPrompt([U], {});
    const tokens = [...prompt, ...family.completionIds(A)];
    const extended = [...family.mergeTokens(tokens, [T], {}), ...family.completionIds(A)];
    expect(computeSessionMismatch(family, [U, A], tokens)).toEqual([]);
    expect(computeSessionMismatch(family, [U, A, T, A], extended)).toEqual([]);
  });

  it('reports a prompt-side (carried) assistant as a segment count difference', () => {
    const tokens = [...family.renderPrompt([U, A, T], {}), ...family.completionIds(A)];
    const [entry] = computeSessionMismatch(family, [U, A, T, A], tokens)!;
    expect(entry).toMatchObject({
      type: 'special_token_count',
      segment_index: -1,
      detail: 'segment count differs: expected 10, got 9',
    });
  });

  it('is null when there are no tokens or the messages cannot be rendered', () => {
    expect(computeSessionMismatch(family, [U], [])).toBeNull();
    expect(computeSessionMismatch(family, ['not a message'], [1])).toBeNull();
  });

  it('glm47 trims its boundary ids and calls content after <|assistant|> assistant text', () => {
    const glm = titoFamily('glm47');
    glm.tokenizer.encodeText('a b');
    const [a, b] = glm.tokenizer.encodeText('a b') as [number, number];
    expect(compareSequences(glm, [3, a, 7], [3, a])).toEqual([]);
    expect(compareSequences(glm, [3, a], [3, b])).toEqual([
      { type: 'assistant_text', segment_index: 1, expected_text: 'a', actual_text: 'b', detail: '' },
    ]);
  });
});

describe('tito_session_mismatch on Float64Array ids (the samples op reads its copies)', () => {
  // The comparison reads any array-like; the samples op hands it Float64Array copies of the canonical
  // render and of the leaf snapshot. Same entries as on the plain arrays, odd ids included.
  const id = fc.oneof(
    fc.constantFrom(...(family.tokenizer.encodeText(oracle.vocabulary.join(' ')) as number[])),
    fc.constantFrom(1, 2, 3, 4, 5, 6, 7, 8, 9, 0, -0, 7.5, Number.NaN, 100_999, 101_000),
  );
  it('gives the entries the plain arrays give', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('default' as const, 'glm47' as const),
        fc.array(id, { maxLength: 30 }),
        fc.array(id, { maxLength: 30 }),
        (model, expected, actual) => {
          const fam = model === 'default' ? family : titoFamily('glm47');
          expect(compareSequences(fam, Float64Array.from(expected), Float64Array.from(actual))).toEqual(
            compareSequences(fam, expected, actual),
          );
        },
      ),
    );
  });
});
