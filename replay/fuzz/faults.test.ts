import { describe, expect, it } from 'vitest';
import { isHarnessError } from '../../common/errors.ts';
import { FaultKindSchema } from '../../contracts/fault-scenario.ts';
import { FUZZ_FAULT_KINDS, faultParams } from './faults.ts';

/** `harness fuzz --faults` (docs/field-failures.md "In fuzzing"): the knobs each kind sets, and the refusals. */

const KNOWN =
  'known kinds: retry_after_rollback, infra_abort_scored_zero, infra_abort_group_dropped, length_abort, endoftext_turn_end (KIND[,KIND...][:RATE], RATE in [0, 1])';

function refusal(spec: string, tokenizer: 'toy' | 'qwen3' = 'toy'): string {
  try {
    faultParams(spec, tokenizer);
  } catch (error) {
    if (isHarnessError(error) && error.code === 'usage.invalid_option_value') return error.reason;
    throw error;
  }
  return 'accepted';
}

describe('--faults', () => {
  it('sets the knob of each kind at the rate given, 0.2 by default', () => {
    expect(faultParams('length_abort', 'toy')).toEqual({ truncation_rate: 0.2 });
    expect(faultParams('infra_abort_group_dropped,infra_abort_scored_zero:0', 'toy')).toEqual({
      first_turn_failure_rate: 0,
      policy_failure_rate: 0,
    });
    expect(faultParams('retry_after_rollback, endoftext_turn_end:1', 'qwen3')).toEqual({
      retry_rate: 1,
      endoftext_rate: 1,
    });
  });

  it('refuses an unknown kind, a rate outside [0, 1] and a kind the generator cannot mix, naming the known kinds', () => {
    expect(refusal('nope')).toBe(`fuzz: --faults: unknown fault kind "nope"; ${KNOWN}`);
    for (const rate of ['1.5', '-0.1', 'x', '', 'NaN', 'Infinity'])
      expect(refusal(`length_abort:${rate}`)).toBe(
        `fuzz: --faults: rate ${JSON.stringify(rate)} is not a number in [0, 1]; ${KNOWN}`,
      );
    expect(refusal('thinking_stripped')).toBe(
      `fuzz: --faults: thinking_stripped is a catalogue kind the episode generator cannot mix into episodes yet; ${KNOWN}`,
    );
  });

  it('refuses a fault the tokenizer cannot express', () => {
    expect(refusal('endoftext_turn_end')).toBe(
      `fuzz: --faults: fault endoftext_turn_end cannot be expressed on toy ids: the toy tokenizer has one end token and no <|endoftext|> (use --tokenizer qwen3); ${KNOWN}`,
    );
    expect(refusal('endoftext_turn_end', 'qwen3')).toBe('accepted');
  });

  it('mixes only catalogue kinds', () => {
    for (const kind of FUZZ_FAULT_KINDS) expect(FaultKindSchema.options).toContain(kind);
  });
});
