import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isHarnessError } from '../../common/errors.ts';
import { parseJson } from '../../common/python-json/loads.ts';
import { CATALOGUE_DIR } from './catalogue.ts';
import { parseFaultScenario } from './scenario-file.ts';

/**
 * A scenario its tokenizer cannot play is refused with the reason (docs/field-failures.md "Refusals"):
 * a fault kind the toy ids cannot express, stated ids on the toy, ids outside Qwen3's vocabulary.
 */

// biome-ignore lint/suspicious/noExplicitAny: the tests edit the row's JSON deep inside
type Json = Record<string, any>;
const row = (): Json =>
  parseJson(readFileSync(join(CATALOGUE_DIR, 'endoftext-turn-end.json'), 'utf8')) as Json;

function refusal(raw: unknown): { code: string; reason: string } {
  try {
    parseFaultScenario(raw, 'row.json');
  } catch (error) {
    if (isHarnessError(error))
      return { code: error.code, reason: String(error.details.reason ?? error.message) };
    throw error;
  }
  return { code: 'accepted', reason: '' };
}

describe('scenario refusals', () => {
  it('accepts the row as written', () => {
    expect(refusal(row()).code).toBe('accepted');
  });

  it('refuses <|endoftext|> on toy ids, naming the kind and why', () => {
    const toy = { ...row(), tokenizer: 'toy' };
    expect(refusal(toy)).toEqual({
      code: 'config.scenario_refused',
      reason:
        'fault endoftext_turn_end cannot be expressed on toy ids: the toy tokenizer has one end token and no <|endoftext|>',
    });
  });

  it('refuses stated ids on the toy tokenizer for a kind it can express', () => {
    const toy = { ...row(), tokenizer: 'toy', kind: 'upstream_abort' };
    expect(refusal(toy).reason).toMatch(
      /^rollouts\.0\.turns\.0\.response\.completion_ids: the toy tokenizer cannot decode stated ids/,
    );
  });

  it('refuses an id outside the Qwen3 vocabulary, naming where it is', () => {
    const bad = row();
    bad.rollouts[0].turns[1].response.completion_ids[2] = 151669;
    expect(refusal(bad)).toEqual({
      code: 'config.scenario_refused',
      reason:
        'rollouts.0.turns.1.response.completion_ids.2: id 151669 is not in the Qwen3 vocabulary (0-151668), so no tokenizer can decode it',
    });
    bad.rollouts[0].turns[1].response.completion_ids[2] = 151668;
    expect(refusal(bad).code).toBe('accepted');
  });

  it('refuses a concurrent turn that does not exist, and a file of the wrong shape', () => {
    const late = row();
    late.rollouts[0].concurrent = [5];
    expect(refusal(late).reason).toBe('rollouts.0.concurrent: turn 5 does not exist');
    expect(refusal({ ...row(), kind: 'typo' }).code).toBe('config.scenario_invalid');
  });
});
