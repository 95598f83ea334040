import { describe, expect, it } from 'vitest';
import { inputsFromFacts, type StepInputFacts, stepRulesOut } from './inputs.ts';

const NORMALIZATION = {
  advantage_estimator: 'grpo',
  rewards_normalization: true,
  grpo_std_normalization: true,
  n_samples_per_prompt: 2,
  rollout_batch_size: 1,
} as const;

const full: StepInputFacts = {
  samples: 3,
  everySampleHasLeaf: true,
  rollouts: 2,
  everyRolloutHasTree: true,
  everyRolloutHasRequests: true,
  advantagesAligned: true,
};
const empty: StepInputFacts = { ...full, samples: 0, rollouts: 0 };

describe('check inputs', () => {
  it('a run without steps carries only the run-wide group shape ("every step has it" says nothing)', () => {
    expect([...inputsFromFacts([], { normalization: NORMALIZATION, n_samples_per_prompt: 2 })]).toEqual([
      'group_shape',
    ]);
  });

  it('steps without samples or rollouts carry no per-sample or per-rollout input', () => {
    const have = inputsFromFacts([empty, empty], {
      normalization: NORMALIZATION,
      n_samples_per_prompt: null,
    });
    expect([...have].sort()).toEqual(['advantages']);
  });

  it('one step breaking a rule takes the input from the whole run', () => {
    const broken = { ...full, everyRolloutHasTree: false };
    const data = { normalization: NORMALIZATION, n_samples_per_prompt: 2 };
    expect([...inputsFromFacts([full, broken], data)].sort()).toEqual([
      'advantages',
      'group_shape',
      'leaf_refs',
      'request_logs',
    ]);
    expect(stepRulesOut(broken, 'trees', data)).toBe(true);
    expect(stepRulesOut(full, 'trees', data)).toBe(false);
  });

  it('a step without rollouts rules nothing out; missing run fields rule out for every step', () => {
    const data = { normalization: null, n_samples_per_prompt: null };
    expect(stepRulesOut(empty, 'trees', data)).toBe(false);
    expect(stepRulesOut(empty, 'leaf_refs', data)).toBe(false);
    expect(stepRulesOut(full, 'advantages', data)).toBe(true);
    expect(stepRulesOut(full, 'group_shape', data)).toBe(true);
  });
});
