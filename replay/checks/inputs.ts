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

type RunShape = Pick<CheckData, 'normalization' | 'n_samples_per_prompt'>;

/**
 * One rule per input, read by both questions below (what a whole run carries, what one step rules
 * out): a run-wide condition on the run's fields, a condition every step must meet, and the count that
 * must not be zero for "every … has it" to mean anything.
 */
const INPUT_RULES: Record<
  CheckInput,
  {
    readonly run: (data: RunShape) => boolean;
    readonly step: (facts: StepInputFacts) => boolean;
    readonly nonEmpty: 'samples' | 'rollouts' | 'steps' | null;
  }
> = {
  leaf_refs: { run: () => true, step: (f) => f.everySampleHasLeaf, nonEmpty: 'samples' },
  trees: { run: () => true, step: (f) => f.everyRolloutHasTree, nonEmpty: 'rollouts' },
  request_logs: { run: () => true, step: (f) => f.everyRolloutHasRequests, nonEmpty: 'rollouts' },
  advantages: { run: (d) => d.normalization !== null, step: (f) => f.advantagesAligned, nonEmpty: 'steps' },
  group_shape: { run: (d) => d.n_samples_per_prompt !== null, step: () => true, nonEmpty: null },
};

/** The inputs a run carries, from its steps' facts and its run-wide fields. */
export function inputsFromFacts(facts: readonly StepInputFacts[], data: RunShape): Set<CheckInput> {
  const counts = {
    samples: facts.reduce((n, f) => n + f.samples, 0),
    rollouts: facts.reduce((n, f) => n + f.rollouts, 0),
    steps: facts.length,
  };
  const have = new Set<CheckInput>();
  for (const [input, rule] of Object.entries(INPUT_RULES) as [
    CheckInput,
    (typeof INPUT_RULES)[CheckInput],
  ][]) {
    if (!rule.run(data) || (rule.nonEmpty !== null && counts[rule.nonEmpty] === 0)) continue;
    if (facts.every(rule.step)) have.add(input);
  }
  return have;
}

/** Which inputs the data carries, for every retained rollout of every step. */
export function availableInputs(data: CheckData): Set<CheckInput> {
  return inputsFromFacts(data.steps.map(stepInputFacts), data);
}

/**
 * Whether one step alone rules `input` out for the whole run (it breaks an "every … has it" rule, or
 * the run's fields do); a step that merely lacks rollouts or samples does not.
 */
export function stepRulesOut(facts: StepInputFacts, input: CheckInput, data: RunShape): boolean {
  const rule = INPUT_RULES[input];
  return !rule.run(data) || !rule.step(facts);
}
