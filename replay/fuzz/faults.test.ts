import { describe, expect, it } from 'vitest';
import { isHarnessError } from '../../common/errors.ts';
import { FaultKindSchema } from '../../contracts/fault-scenario.ts';
import { FAULT_KIND_FACTS } from '../faults/kinds.ts';
import { FUZZ_FAULT_KINDS, faultParams, mixableKinds } from './faults.ts';

/** `harness fuzz --faults` (docs/field-failures.md "In fuzzing"): the knobs each kind sets, and the refusals. */

const KNOWN =
  'known kinds: resent_first_turn, retry_after_rollback, rollback_then_longer, concurrent_requests, upstream_abort, infra_abort_scored_zero, infra_abort_group_dropped, length_recover, length_abort, endoftext_turn_end, empty_think_rerendered, newline_after_im_end, thinking_stripped, retokenized_text, tool_call_zero_args, tool_call_literal_end, tool_call_split_markers, tool_call_numbers_as_strings, group_rows_differ_grpo, group_rows_differ_metrics, group_rows_differ_pass_at_k (KIND[,KIND...][:RATE], RATE in [0, 1])';

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
    expect(faultParams('length_abort,resent_first_turn,group_rows_differ_grpo:0.5', 'toy')).toEqual({
      truncation_rate: 0.5,
      faults: { resend_first: 0.5, uneven_group: 0.5 },
    });
    expect(faultParams('tool_call_split_markers,empty_think_rerendered:1', 'qwen3')).toEqual({
      faults: { tool_call_split_markers: 1, think_in_content: 1 },
    });
  });

  it('mixes every catalogue kind but one, which no generated episode can carry', () => {
    expect(FaultKindSchema.options.filter((k) => !FUZZ_FAULT_KINDS.includes(k))).toEqual([
      'sibling_rewards_differ',
    ]);
    expect(mixableKinds('qwen3')).toEqual(FUZZ_FAULT_KINDS);
    expect(mixableKinds('toy')).toEqual(
      FUZZ_FAULT_KINDS.filter((k) => FAULT_KIND_FACTS[k].tokenizers.includes('toy')),
    );
  });

  it('refuses an unknown kind, a rate outside [0, 1] and a kind no episode can carry, naming the known kinds', () => {
    expect(refusal('nope')).toBe(`fuzz: --faults: unknown fault kind "nope"; ${KNOWN}`);
    for (const rate of ['1.5', '-0.1', 'x', '', 'NaN', 'Infinity'])
      expect(refusal(`length_abort:${rate}`)).toBe(
        `fuzz: --faults: rate ${JSON.stringify(rate)} is not a number in [0, 1]; ${KNOWN}`,
      );
    expect(refusal('sibling_rewards_differ')).toBe(
      `fuzz: --faults: sibling_rewards_differ is not a property of one generated episode: the rewards come from Miles' custom reward function, not the agent, and Harbor's /run result carries one reward per trial (docs/harbor.md "API"); ${KNOWN}`,
    );
  });

  it('refuses a fault the tokenizer cannot express', () => {
    expect(refusal('endoftext_turn_end')).toBe(
      `fuzz: --faults: fault endoftext_turn_end cannot be expressed on toy ids: the toy tokenizer has one end token and no <|endoftext|> (use --tokenizer qwen3); ${KNOWN}`,
    );
    expect(refusal('endoftext_turn_end', 'qwen3')).toBe('accepted');
    expect(refusal('tool_call_literal_end')).toBe(
      `fuzz: --faults: fault tool_call_literal_end cannot be expressed on toy ids: it is a difference between the ids the policy emits and the message its parser returns, and toy ids are the message's words (stated ids cannot be decoded on the toy) (use --tokenizer qwen3); ${KNOWN}`,
    );
  });

  it('mixes only catalogue kinds', () => {
    for (const kind of FUZZ_FAULT_KINDS) expect(FaultKindSchema.options).toContain(kind);
  });
});
