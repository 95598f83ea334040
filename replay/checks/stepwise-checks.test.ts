import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { NormalizationConfig } from '../grpo/config.ts';
import { normalizeRewards } from '../grpo/normalize.ts';
import { groupIndex } from '../model/ids.ts';
import { retainedRows } from '../model/retained.ts';
import type { Group, Rollout } from '../model/rollout.ts';
import { buildRollout, type NodeSpec, PROACTIVE_COMPACTION } from '../testing/build-rollout.ts';
import { runApplicableChecks } from './run-checks.ts';
import { StepwiseChecks } from './stepwise-checks.ts';
import type { CheckData, CheckStep } from './types.ts';

/** Tree shapes of the session server's rules (replay/testing/build-rollout.ts). */
const SHAPES: readonly (readonly NodeSpec[])[] = [
  [{ parent: null, prompt: 3, completion: 2 }],
  [
    { parent: null, prompt: 3, completion: 2 },
    { parent: 0, prompt: 2, completion: 2 },
    { parent: 0, prompt: 2, completion: 2 },
  ],
  // A retried turn: node 2 re-sends node 1's request.
  [
    { parent: null, prompt: 4, completion: 3 },
    { parent: 0, prompt: 2, completion: 3 },
    { parent: 0, prompt: 2, completion: 3, resends: 1 },
  ],
  PROACTIVE_COMPACTION,
];

const rolloutSpec = fc.record({
  shape: fc.nat({ max: SHAPES.length - 1 }),
  reward: fc.constantFrom(0, 1),
  /** A loss-mask flip planted at this position of the first sample (fails some checks). */
  flip: fc.option(fc.nat({ max: 30 }), { nil: null }),
});
const groupSpec = fc.record({
  rollouts: fc.array(rolloutSpec, { minLength: 1, maxLength: 3 }),
  dropped: fc.constantFrom(null, 'group_has_aborted' as const),
});
const stepSpec = fc.record({
  groups: fc.array(groupSpec, { maxLength: 3 }),
  advantages: fc.boolean(),
});
const runSpec = fc.record({
  steps: fc.array(stepSpec, { maxLength: 4 }),
  // Run-wide: a replay's rollouts all have trees and logs, a Miles dump none (see the mode rule).
  trees: fc.boolean(),
  requests: fc.boolean(),
  n: fc.option(fc.constantFrom(1, 2, 3), { nil: null }),
  batch: fc.option(fc.constantFrom(1, 2), { nil: null }),
});

type RunSpec = typeof runSpec extends fc.Arbitrary<infer T> ? T : never;

function build(spec: RunSpec): CheckData {
  const normalization: NormalizationConfig = {
    advantage_estimator: 'grpo',
    rewards_normalization: true,
    grpo_std_normalization: true,
    n_samples_per_prompt: spec.n ?? 2,
    rollout_batch_size: spec.batch ?? 2,
  };
  let index = 0;
  const steps: CheckStep[] = spec.steps.map((s, step) => {
    const groups: Group[] = s.groups.map((g, gi) => ({
      group_index: groupIndex(gi),
      dropped: g.dropped,
      rollouts: g.rollouts.map((r): Rollout => {
        const rollout = buildRollout({
          nodes: SHAPES[r.shape]!,
          reward: r.reward,
          group: gi,
          index: index++,
        });
        const sample = rollout.samples[0]!;
        if (r.flip !== null && sample.loss_mask && sample.loss_mask.length > 0) {
          const at = r.flip % sample.loss_mask.length;
          sample.loss_mask[at] = 1 - sample.loss_mask[at]!;
        }
        return {
          ...rollout,
          tree: spec.trees ? rollout.tree : null,
          requests: spec.requests ? rollout.requests : null,
        };
      }),
    }));
    let advantages: readonly number[] | null = null;
    if (s.advantages)
      try {
        advantages = normalizeRewards(retainedRows(groups), normalization).normalized;
      } catch {
        advantages = null;
      }
    return { step, groups, advantages };
  });
  return { steps, n_samples_per_prompt: spec.n, rollout_batch_size: spec.batch, normalization };
}

describe('StepwiseChecks', () => {
  it('gives what runApplicableChecks gives on all steps at once', () => {
    fc.assert(
      fc.property(runSpec, (spec) => {
        const data = build(spec);
        const stepwise = new StepwiseChecks({
          n_samples_per_prompt: data.n_samples_per_prompt,
          rollout_batch_size: data.rollout_batch_size,
          normalization: data.normalization,
        });
        for (const step of data.steps) stepwise.add(step);
        expect(JSON.stringify(stepwise.finish())).toBe(JSON.stringify(runApplicableChecks(data)));
      }),
      { numRuns: 150 },
    );
  });

  it('refuses to merge a check that ran in two modes (trees on one step, none on another)', () => {
    const a = buildRollout({ nodes: SHAPES[1]!, index: 0 });
    const b = { ...buildRollout({ nodes: SHAPES[1]!, index: 1 }), tree: null };
    const step = (rollout: Rollout, n: number): CheckStep => ({
      step: n,
      groups: [{ group_index: groupIndex(n), dropped: null, rollouts: [rollout] }],
      advantages: null,
    });
    const stepwise = new StepwiseChecks({
      n_samples_per_prompt: 1,
      rollout_batch_size: 1,
      normalization: null,
    });
    stepwise.add(step(a, 0));
    expect(() => stepwise.add(step(b, 1))).toThrow(/exactly_once ran as exact on one step and proxy/);
  });
});
