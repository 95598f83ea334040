import { retainedRollouts, retainedRows } from '../model/retained.ts';
import { leafOf } from '../model/sample.ts';
import type { CheckData, CheckInput, CheckStep } from './types.ts';

/**
 * What one step contributes to the inputs a run carries: counts and "every … has it" flags, so a run
 * checked step by step (stepwise-checks.ts) can decide its inputs without keeping the steps.
 */
export interface StepInputFacts {
  readonly samples: number;
  readonly everySampleHasLeaf: boolean;
  readonly rollouts: number;
  readonly everyRolloutHasTree: boolean;
  readonly everyRolloutHasRequests: boolean;
  /** Advantages present and aligned with the step's retained rows. */
  readonly advantagesAligned: boolean;
}

export function stepInputFacts(step: CheckStep): StepInputFacts {
  const rollouts = retainedRollouts(step.groups);
  const samples = rollouts.flatMap((r) => r.samples);
  return {
    samples: samples.length,
    everySampleHasLeaf: samples.every((s) => leafOf(s) !== null),
    rollouts: rollouts.length,
    everyRolloutHasTree: rollouts.every((r) => r.tree !== null),
    everyRolloutHasRequests: rollouts.every((r) => r.requests !== null),
    advantagesAligned:
      step.advantages !== null && step.advantages.length === retainedRows(step.groups).length,
  };
}

/** The inputs a run carries, from its steps' facts and its run-wide fields. */
export function inputsFromFacts(
  facts: readonly StepInputFacts[],
  data: Pick<CheckData, 'normalization' | 'n_samples_per_prompt'>,
): Set<CheckInput> {
  const samples = facts.reduce((n, f) => n + f.samples, 0);
  const rollouts = facts.reduce((n, f) => n + f.rollouts, 0);
  const have = new Set<CheckInput>();
  if (samples > 0 && facts.every((f) => f.everySampleHasLeaf)) have.add('leaf_refs');
  if (rollouts > 0 && facts.every((f) => f.everyRolloutHasTree)) have.add('trees');
  if (rollouts > 0 && facts.every((f) => f.everyRolloutHasRequests)) have.add('request_logs');
  if (data.normalization !== null && facts.length > 0 && facts.every((f) => f.advantagesAligned))
    have.add('advantages');
  if (data.n_samples_per_prompt !== null) have.add('group_shape');
  return have;
}

/** Which inputs the data carries, for every retained rollout of every step. */
export function availableInputs(data: CheckData): Set<CheckInput> {
  return inputsFromFacts(data.steps.map(stepInputFacts), data);
}

/**
 * Whether one step alone rules `input` out for the whole run (it breaks an "every … has it" rule);
 * a step that merely lacks rollouts or samples does not.
 */
export function stepRulesOut(
  facts: StepInputFacts,
  input: CheckInput,
  data: Pick<CheckData, 'normalization' | 'n_samples_per_prompt'>,
): boolean {
  switch (input) {
    case 'leaf_refs':
      return !facts.everySampleHasLeaf;
    case 'trees':
      return !facts.everyRolloutHasTree;
    case 'request_logs':
      return !facts.everyRolloutHasRequests;
    case 'advantages':
      return data.normalization === null || !facts.advantagesAligned;
    case 'group_shape':
      return data.n_samples_per_prompt === null;
  }
}
