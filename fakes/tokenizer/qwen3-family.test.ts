import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  CONVERSATIONS,
  expectedTitoAnswer,
  fakeTitoAnswer,
  sessionIds,
  type TitoCase,
  type TitoResult,
} from '../../test/helpers/qwen3-tito-cases.ts';
import { IdBuffer } from './id-buffer.ts';
import { qwen3Family } from './qwen3-family.ts';
import { QWEN3_IDS } from './qwen3-tokenizer.ts';

/**
 * The fake's qwen3 family against what Miles' own `Qwen3TITOTokenizer` and `TokenSeqComparator` answered
 * (fixtures/tito/qwen3-tito-vectors.json, made by scripts/fixtures/qwen3-tito-vectors.ts on HF's Rust tokenizer):
 * fresh prompts, canonical renders, merges at the `<|im_end|>` junction, and the mismatch entries of
 * each class. Loads the tokenizer once for the file.
 */

const vectors = JSON.parse(
  readFileSync(new URL('../../fixtures/tito/qwen3-tito-vectors.json', import.meta.url), 'utf8'),
) as { cases: Array<{ case: TitoCase; result: TitoResult }> };

const family = qwen3Family();

describe('qwen3 family vs Miles', () => {
  it.each(vectors.cases.map((v, k) => [k, v.case.op, v] as const))(
    'case %i (%s) answers as Miles did',
    (_k, _op, v) => {
      expect(fakeTitoAnswer(family, v.case)).toEqual(expectedTitoAnswer(v.result));
    },
  );

  it('the vectors reach every mismatch class and the junction', () => {
    const types = new Set(
      vectors.cases.flatMap((v) =>
        ('mismatches' in v.result ? v.result.mismatches : []).map((m) => (m as { type: string }).type),
      ),
    );
    expect([...types].sort()).toEqual([
      'assistant_text',
      'non_assistant_text',
      'special_token_count',
      'special_token_type',
    ]);
    const merges = vectors.cases.filter((v) => v.case.op === 'merge');
    expect(merges.some((v) => v.case.op === 'merge' && v.case.pretokenized.at(-1) === QWEN3_IDS.imEnd)).toBe(
      true,
    );
  });
});

describe('qwen3 session tokens', () => {
  it.each(CONVERSATIONS.map((c) => [c.name, c.messages] as const))(
    '%s: what a session stores turn by turn is the canonical render (no mismatch)',
    (_name, messages) => {
      const out = new IdBuffer();
      family.canonicalRenderInto(out, messages);
      // The canonical render ends `<|im_end|>\n`; the stored tokens stop at `<|im_end|>`.
      expect([...sessionIds(family, messages), QWEN3_IDS.newline]).toEqual(out.toArray());
    },
  );
});
