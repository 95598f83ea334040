import { describe, expect, it } from 'vitest';
import { groupIndex, rolloutId } from '../model/ids.ts';
import type { Rollout } from '../model/rollout.ts';
import {
  buildRollout,
  type NodeSpec,
  PROACTIVE_COMPACTION,
  RETRY_TWIN,
  SHARED_PREFIX,
} from '../testing/build-rollout.ts';
import { checkDataOf } from '../testing/check-data.ts';
import { everySampleTrainableCheck } from './every-sample-trainable.ts';
import type { Evidence } from './evidence-schema.ts';
import { exactlyOnceCheck } from './exactly-once.ts';
import { groupAccountingCheck } from './group-accounting.ts';
import { onlyGeneratedTrainedCheck } from './only-generated-trained.ts';
import { ALL_CHECKS, runApplicableChecks } from './run-checks.ts';
import { segmentationInvarianceCheck } from './segmentation-invariance.ts';
import { siblingsAgreeCheck } from './siblings-agree.ts';
import type { CheckResult } from './types.ts';

/** Reactive compaction with m = 2 pairs unwound: the tail leaf and the summary leaf share R → A1. */
const REACTIVE_M2: NodeSpec[] = [
  { parent: null, prompt: 4, completion: 3 },
  { parent: 0, prompt: 2, completion: 3 },
  { parent: 1, prompt: 2, completion: 3 },
  { parent: 2, prompt: 2, completion: 3 },
  { parent: 1, prompt: 2, completion: 4 },
  { parent: 4, prompt: 3, completion: 2 },
];

/** The answers call re-rooted as a sibling of the summary (reasoning mismatch): S is trained nowhere. */
const REROOTED_ANSWERS: NodeSpec[] = [
  { parent: null, prompt: 4, completion: 3 },
  { parent: 0, prompt: 2, completion: 3 },
  { parent: 1, prompt: 2, completion: 4 },
  { parent: 1, prompt: 8, completion: 2 },
];

const kinds = (result: CheckResult, severity?: Evidence['severity']) =>
  result.evidence.filter((e) => severity === undefined || e.severity === severity).map((e) => e.kind);

function mutateMask(rollout: Rollout, sample: number, absolute: number, value: number): void {
  const s = rollout.samples[sample]!;
  const start = s.tokens.length - s.response_length;
  s.loss_mask![absolute - start] = value;
}

describe('check 1: exactly once', () => {
  it('passes clean compaction shapes, shared prefixes included', () => {
    for (const nodes of [SHARED_PREFIX, REACTIVE_M2, PROACTIVE_COMPACTION]) {
      const result = exactlyOnceCheck.run(checkDataOf([buildRollout({ nodes })]));
      expect(result.verdict).toBe('pass');
      expect(result.mode).toBe('exact');
      expect(result.evidence).toEqual([]);
    }
  });

  it('notes a superseded retry without failing', () => {
    const result = exactlyOnceCheck.run(checkDataOf([buildRollout({ nodes: RETRY_TWIN })]));
    expect(result.verdict).toBe('pass');
    expect(result.evidence).toMatchObject([
      { kind: 'superseded_retry', severity: 'info', node: 1, leaf_node_id: 1, token_range: [9, 12] },
    ]);
  });

  it('reports a re-rooted answers call as a lost completion (a finding, not a failure)', () => {
    const result = exactlyOnceCheck.run(checkDataOf([buildRollout({ nodes: REROOTED_ANSWERS })]));
    expect(result.verdict).toBe('finding');
    expect(result.evidence).toMatchObject([
      {
        kind: 'lost_completion',
        severity: 'finding',
        node: 2,
        data: { cause: 'trimmed_branch', later_sibling_ids: [3] },
      },
    ]);
  });

  it('cannot classify a trimmed branch without the request log', () => {
    const rollout = { ...buildRollout({ nodes: RETRY_TWIN }), requests: null };
    const result = exactlyOnceCheck.run(checkDataOf([rollout]));
    expect(result.evidence).toMatchObject([{ kind: 'lost_completion', data: { cause: 'unclassified' } }]);
  });

  it('fails a planted double-trained span, naming rollout, sample, node and token range', () => {
    const rollout = buildRollout({ nodes: SHARED_PREFIX, group: 3, index: 17 });
    // Sample 0 is leaf 6 (deepest first, latest first); n0's span [3, 5) belongs to leaf 3.
    mutateMask(rollout, 0, 3, 1);
    mutateMask(rollout, 0, 4, 1);
    const result = exactlyOnceCheck.run(checkDataOf([rollout]));
    expect(result.verdict).toBe('fail');
    expect(result.evidence).toMatchObject([
      {
        kind: 'double_trained',
        severity: 'fail',
        group_index: 3,
        rollout: 17,
        sample: 0,
        leaf_node_id: 6,
        node: 0,
        token_range: [3, 5],
        data: { trained_in_leaves: [6, 3] },
      },
    ]);
  });

  it('fails a planted untrained generated token in its owner', () => {
    const rollout = buildRollout({ nodes: REACTIVE_M2 });
    mutateMask(rollout, 1, 10, 0); // leaf 3 (sample 1) owns node 1, span [9, 12)
    const result = exactlyOnceCheck.run(checkDataOf([rollout]));
    expect(result.evidence).toMatchObject([
      { kind: 'untrained_completion', severity: 'fail', node: 1, leaf_node_id: 3, token_range: [10, 11] },
    ]);
  });

  it('reports a completion its owner no longer reaches as a finding (ownership by commit order)', () => {
    const rollout = buildRollout({ nodes: REACTIVE_M2 });
    const owner = rollout.samples[1]!; // leaf 3, cut inside node 1 as an early merge stop would
    const cut = 10;
    rollout.samples[1] = {
      ...owner,
      tokens: owner.tokens.slice(0, cut),
      response_length: cut - 4,
      loss_mask: owner.loss_mask!.slice(0, cut - 4),
    };
    const result = exactlyOnceCheck.run(checkDataOf([rollout]));
    expect(result.verdict).toBe('finding');
    expect(result.evidence).toMatchObject([
      { kind: 'lost_completion', node: 1, token_range: [10, 12], data: { cause: 'owner_cut' } },
      { kind: 'lost_completion', node: 2, token_range: [14, 17], data: { cause: 'beyond_sample_end' } },
      { kind: 'lost_completion', node: 3, data: { cause: 'beyond_sample_end' } },
    ]);
  });

  it('falls back to the common-prefix proxy without trees and still catches double training', () => {
    const rollout = { ...buildRollout({ nodes: SHARED_PREFIX }), tree: null };
    expect(exactlyOnceCheck.run(checkDataOf([rollout])).verdict).toBe('pass');
    mutateMask(rollout, 0, 4, 1);
    const result = exactlyOnceCheck.run(checkDataOf([rollout]));
    expect(result.mode).toBe('proxy');
    expect(result.evidence).toMatchObject([{ kind: 'double_trained', token_range: [4, 5], sample: 1 }]);
  });
});

describe('check 2: only generated tokens are trained', () => {
  it('passes clean rollouts and fails a trained tool-output token', () => {
    const rollout = buildRollout({ nodes: PROACTIVE_COMPACTION });
    expect(onlyGeneratedTrainedCheck.run(checkDataOf([rollout])).verdict).toBe('pass');
    mutateMask(rollout, 0, 7, 1); // the tool output after R's completion
    const result = onlyGeneratedTrainedCheck.run(checkDataOf([rollout]));
    expect(result.verdict).toBe('fail');
    expect(result.evidence).toMatchObject([
      { kind: 'trained_not_generated', sample: 0, token_range: [7, 8] },
    ]);
  });

  it('fails a trained token that differs from the policy’s output', () => {
    const rollout = buildRollout({ nodes: SHARED_PREFIX });
    rollout.samples[1]!.tokens[3] = 42;
    const result = onlyGeneratedTrainedCheck.run(checkDataOf([rollout]));
    expect(result.mode).toBe('spans+policy_log');
    expect(result.evidence).toMatchObject([
      { kind: 'trained_token_not_policy_output', sample: 1, node: 0, token_range: [3, 4] },
    ]);
  });
});

describe('check 3: siblings share rollout id and reward', () => {
  it('passes stamped siblings and single-leaf rollouts', () => {
    const data = checkDataOf([
      buildRollout({ nodes: PROACTIVE_COMPACTION, index: 0 }),
      buildRollout({ nodes: [{ parent: null, prompt: 3, completion: 2 }], index: 1 }),
    ]);
    expect(siblingsAgreeCheck.run(data).verdict).toBe('pass');
  });

  it('fails a planted reward mismatch', () => {
    const rollout = buildRollout({ nodes: PROACTIVE_COMPACTION, index: 4 });
    rollout.samples[2]!.reward = 0;
    const data = checkDataOf([rollout], { advantages: 'none' });
    const result = siblingsAgreeCheck.run(data);
    expect(result.evidence).toMatchObject([
      { kind: 'reward_mismatch', severity: 'fail', rollout: 4, sample: 2 },
    ]);
    // Miles' own normalisation raises on it too, so check 5 cannot vouch for the advantages.
    const withAdvantages = { ...data, steps: [{ ...data.steps[0]!, advantages: [0, 0, 0] }] };
    expect(segmentationInvarianceCheck.run(withAdvantages).evidence).toMatchObject([
      { kind: 'not_normalizable', data: { code: 'grpo.sibling_reward_mismatch' } },
    ]);
  });

  it('fails unset, differing or colliding rollout ids', () => {
    const unset = buildRollout({ nodes: PROACTIVE_COMPACTION, index: 1 });
    unset.samples[1]!.rollout_id = null;
    expect(kinds(siblingsAgreeCheck.run(checkDataOf([unset])))).toEqual(['rollout_id_unset']);
    const differing = buildRollout({ nodes: PROACTIVE_COMPACTION, index: 1 });
    differing.samples[1]!.rollout_id = rolloutId(2);
    expect(kinds(siblingsAgreeCheck.run(checkDataOf([differing])))).toEqual(['rollout_id_mismatch']);
    const a = buildRollout({ nodes: PROACTIVE_COMPACTION, index: 5, group: 0 });
    const b = buildRollout({ nodes: PROACTIVE_COMPACTION, index: 5, group: 1 });
    expect(kinds(siblingsAgreeCheck.run(checkDataOf([a, b])))).toEqual(['rollout_id_collision']);
  });
});

describe('check 4: every retained sample is trainable', () => {
  it('fails a planted sample with no trainable token', () => {
    const rollout = buildRollout({ nodes: PROACTIVE_COMPACTION });
    rollout.samples[1]!.loss_mask!.fill(0);
    const result = everySampleTrainableCheck.run(checkDataOf([rollout]));
    expect(result.evidence).toMatchObject([{ kind: 'no_trainable_token', severity: 'fail', sample: 1 }]);
  });

  it('calls an empty sample Miles cut short, or a remove_sample row, a finding', () => {
    const rollout = buildRollout({ nodes: PROACTIVE_COMPACTION });
    rollout.samples[1]!.loss_mask!.fill(0);
    rollout.samples[1]!.status = 'truncated';
    rollout.samples[2]!.remove_sample = true;
    const result = everySampleTrainableCheck.run(checkDataOf([rollout]));
    expect(result.verdict).toBe('finding');
    expect(kinds(result, 'finding')).toEqual(['no_trainable_token', 'removed_sample']);
  });
});

describe('check 5: segmentation invariance', () => {
  const group = () => [
    buildRollout({ nodes: PROACTIVE_COMPACTION, index: 0, reward: 1 }),
    buildRollout({ nodes: [{ parent: null, prompt: 3, completion: 2 }], index: 1, reward: 0 }),
    buildRollout({ nodes: REACTIVE_M2, index: 2, reward: 0 }),
    buildRollout({ nodes: [{ parent: null, prompt: 3, completion: 2 }], index: 3, reward: 1 }),
  ];

  it('passes Miles’ advantages and shows what per-sample normalisation would give', () => {
    const result = segmentationInvarianceCheck.run(checkDataOf(group()));
    expect(result.verdict).toBe('pass');
    expect(result.evidence.map((e) => [e.kind, e.rollout])).toEqual([
      ['per_sample_would_differ', 0],
      ['per_sample_would_differ', 2],
    ]);
    expect(result.evidence[0]!.data).toMatchObject({ per_rollout: expect.closeTo(0.866024, 5) });
  });

  it('fails planted per-sample normalisation', () => {
    const data = checkDataOf(group());
    const rows = data.steps[0]!.groups.flatMap((g) => g.rollouts.flatMap((r) => r.samples));
    // rows: 3 + 1 + 2 + 1 = 7 rewards [1,1,1,0,0,0,1]; naive per row: mean 4/7.
    const naive = rows.map(
      (r) => ((r.reward ?? 0) - 4 / 7) / (Math.sqrt((4 * (3 / 7) ** 2 + 3 * (4 / 7) ** 2) / 6) + 1e-6),
    );
    const planted = { ...data, steps: [{ ...data.steps[0]!, advantages: naive }] };
    const result = segmentationInvarianceCheck.run(planted);
    expect(result.verdict).toBe('fail');
    expect(new Set(kinds(result, 'fail'))).toEqual(new Set(['per_sample_normalization']));
  });

  it('fails advantages that match neither', () => {
    const data = checkDataOf(group());
    const off = data.steps[0]!.advantages!.map((a, i) => (i === 4 ? a! + 0.1 : a));
    const result = segmentationInvarianceCheck.run({
      ...data,
      steps: [{ ...data.steps[0]!, advantages: off }],
    });
    expect(result.evidence.filter((e) => e.severity === 'fail')).toMatchObject([
      { kind: 'advantage_mismatch', rollout: 2, sample: 0 },
    ]);
  });
});

describe('check 6: group accounting', () => {
  const rollouts = (n: number, group = 0) =>
    Array.from({ length: n }, (_, i) =>
      buildRollout({ nodes: PROACTIVE_COMPACTION, group, index: group * 10 + i }),
    );

  it('counts rollouts, not segments', () => {
    expect(groupAccountingCheck.run(checkDataOf(rollouts(4), { n: 4 })).verdict).toBe('pass');
  });

  it('fails a planted short group', () => {
    const result = groupAccountingCheck.run(checkDataOf(rollouts(3), { n: 4 }));
    expect(result.evidence).toMatchObject([
      { kind: 'short_group', severity: 'fail', group_index: 0, data: { rollouts: 3, expected: 4 } },
    ]);
  });

  it('accepts a group dropped for an aborted sample and fails one dropped without', () => {
    const data = checkDataOf([...rollouts(2, 0), ...rollouts(2, 1)], { n: 2, batch: 1 });
    const [kept, dropped] = data.steps[0]!.groups;
    const aborted = { ...dropped!.rollouts[0]!, aborted: true, abort_reason: 'no_records' };
    const step = {
      ...data.steps[0]!,
      groups: [kept!, { ...dropped!, dropped: 'group_has_aborted' as const, rollouts: [aborted] }],
    };
    const ok = groupAccountingCheck.run({ ...data, steps: [step] });
    expect(ok.verdict).toBe('pass');
    expect(kinds(ok)).toEqual(['dropped_aborted_group']);
    const bad = { ...step, groups: [kept!, { ...dropped!, dropped: 'group_has_aborted' as const }] };
    expect(kinds(groupAccountingCheck.run({ ...data, steps: [bad] }), 'fail')).toEqual([
      'dropped_without_abort',
    ]);
  });

  it('fails a kept group holding an aborted rollout, and a short batch', () => {
    const group = rollouts(2);
    group[1] = { ...group[1]!, aborted: true };
    const result = groupAccountingCheck.run(checkDataOf(group, { n: 2, batch: 2 }));
    expect(kinds(result, 'fail')).toEqual(['aborted_in_kept_group', 'batch_short']);
  });
});

describe('runApplicableChecks', () => {
  it('runs all six on full replay data', () => {
    const run = runApplicableChecks(checkDataOf([buildRollout({ nodes: SHARED_PREFIX })]));
    expect(run.results.map((r) => r.name)).toEqual(ALL_CHECKS.map((c) => c.name));
    expect(run.skipped).toEqual([]);
    expect(run.verdict).toBe('pass');
  });

  it('skips what a dump cannot support and says what is missing', () => {
    const rollout = { ...buildRollout({ nodes: SHARED_PREFIX }), tree: null, requests: null };
    const data = { ...checkDataOf([rollout], { advantages: 'none' }), n_samples_per_prompt: null };
    const run = runApplicableChecks(data);
    expect(run.results.map((r) => r.name)).toEqual([
      'exactly_once',
      'siblings_share_rollout_id_and_reward',
      'every_sample_trainable',
      'agent_metrics_logged',
      'tito_session_consistent',
      'session_affinity',
    ]);
    expect(run.skipped).toEqual([
      { name: 'only_generated_tokens_trained', missing: ['trees'] },
      { name: 'segmentation_invariance', missing: ['advantages'] },
      { name: 'group_accounting', missing: ['group_shape'] },
      { name: 'token_accounting', missing: ['trees'] },
      { name: 'pass_at_k_counts_every_group', missing: ['group_shape'] },
    ]);
  });

  it('reports the worst verdict', () => {
    const rollout = buildRollout({ nodes: REROOTED_ANSWERS });
    expect(runApplicableChecks(checkDataOf([rollout])).verdict).toBe('finding');
    rollout.samples[0]!.reward = null;
    expect(runApplicableChecks(checkDataOf([rollout], { advantages: 'none' })).verdict).toBe('fail');
  });

  it('keeps group indices comparable with plain numbers', () => {
    expect(groupIndex(3)).toBe(3);
  });
});
