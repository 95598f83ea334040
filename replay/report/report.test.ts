import { describe, expect, it } from 'vitest';
import { DEFAULT_MILES_PROFILE, milesProfileNamed } from '../../contracts/miles-profile.ts';
import { DEFAULT_PICKER_PATH } from '../../fakes/session/hooks/types.ts';
import { checkDataFromOutcomes } from '../checks/from-step-outcomes.ts';
import { runApplicableChecks } from '../checks/run-checks.ts';
import type { Verdict } from '../checks/types.ts';
import type { NormalizationConfig } from '../grpo/config.ts';
import { groupIndex } from '../model/ids.ts';
import type { Group } from '../model/rollout.ts';
import { processStep } from '../step/process-step.ts';
import { buildRollout, type NodeSpec, PROACTIVE_COMPACTION } from '../testing/build-rollout.ts';
import { buildReport, reportedMilesProfile } from './build-report.ts';
import { replayExitCode, runVerdict } from './exit-code.ts';
import { renderHtml } from './html.ts';
import { ReplayReportSchema } from './schema.ts';
import { renderSummary } from './summary.ts';
import { rolloutStrips } from './token-strip.ts';

const SHARED_PREFIX: NodeSpec[] = [
  { parent: null, prompt: 3, completion: 2 },
  { parent: 0, prompt: 2, completion: 2 },
  { parent: 0, prompt: 2, completion: 2, resends: 1 },
  { parent: 2, prompt: 2, completion: 2 },
];

const normalization: NormalizationConfig = {
  advantage_estimator: 'grpo',
  rewards_normalization: true,
  grpo_std_normalization: true,
  n_samples_per_prompt: 2,
  rollout_batch_size: 2,
};

/** The config a one-step hand-built replay reports. */
const REPORT_CONFIG = {
  rollout_batch_size: 2,
  n_samples_per_prompt: 2,
  steps: 1,
  seed: 7,
  max_seq_len: null,
  prompts: 'hand-built',
  episodes: [],
  normalization,
  strict: false,
  miles_profile: reportedMilesProfile(DEFAULT_MILES_PROFILE, DEFAULT_PICKER_PATH),
};

function groups(): Group[] {
  return [
    {
      group_index: groupIndex(0),
      dropped: null,
      rollouts: [
        buildRollout({ nodes: PROACTIVE_COMPACTION, group: 0, index: 0, reward: 1 }),
        buildRollout({ nodes: [{ parent: null, prompt: 3, completion: 4 }], group: 0, index: 1, reward: 0 }),
      ],
    },
    {
      group_index: groupIndex(1),
      dropped: null,
      rollouts: [
        buildRollout({ nodes: SHARED_PREFIX, group: 1, index: 2, reward: 0 }),
        buildRollout({ nodes: PROACTIVE_COMPACTION, group: 1, index: 3, reward: 1 }),
      ],
    },
  ];
}

function report() {
  const outcome = processStep(0, groups(), normalization, 12);
  const checks = runApplicableChecks(checkDataFromOutcomes([outcome], normalization));
  return buildReport([outcome], checks, REPORT_CONFIG);
}

describe('token strips', () => {
  it('colours trained, shared, lost and not-generated tokens', () => {
    // Node 1 is a retry sibling of node 2 and trimmed; node 0 is shared by leaf 3 only after trimming.
    const rollout = buildRollout({ nodes: SHARED_PREFIX });
    const [strip] = rolloutStrips(rollout);
    expect(strip!.runs).toEqual([
      { kind: 'not_generated', start: 0, end: 3 },
      { kind: 'trained', start: 3, end: 5 },
      { kind: 'not_generated', start: 5, end: 7 },
      { kind: 'trained', start: 7, end: 9 },
      { kind: 'not_generated', start: 9, end: 11 },
      { kind: 'trained', start: 11, end: 13 },
    ]);
    rollout.samples[0]!.loss_mask![0] = 0;
    expect(rolloutStrips(rollout)[0]!.runs[1]).toEqual({ kind: 'masked_lost', start: 3, end: 4 });
  });

  it('marks masked tokens a sibling trains as shared', () => {
    const rollout = buildRollout({
      nodes: [
        { parent: null, prompt: 3, completion: 2 },
        { parent: 0, prompt: 2, completion: 2 },
        { parent: 1, prompt: 2, completion: 2 },
        { parent: 0, prompt: 4, completion: 2 },
      ],
    });
    // Leaf 2 (path 0,1,2) owns node 0; leaf 3 masks it.
    const strips = rolloutStrips(rollout);
    const leaf3 = rollout.samples.findIndex((s) => (s.metadata.leaf as { node_id: number }).node_id === 3);
    expect(strips[leaf3]!.runs[1]).toEqual({ kind: 'masked_shared', start: 3, end: 5 });
    expect(strips[leaf3]!.maskedShared).toBe(2);
  });
});

describe('the JSON report', () => {
  it('validates against its schema and carries the required fields', () => {
    const parsed = ReplayReportSchema.parse(JSON.parse(JSON.stringify(report())));
    const step = parsed.steps[0]!;
    expect(step.metrics['rollout/num_training_samples']).toBe(3 + 1 + 1 + 3);
    expect(step.groups.map((g) => g.group_index)).toEqual([0, 1]);
    const compacted = step.groups[0]!.rollouts[0]!;
    expect(compacted).toMatchObject({ rollout_id: 0, index: 0, reward: 1, aborted: false });
    expect(compacted.samples.map((s) => s.leaf_node_id)).toEqual([5, 7, 4]);
    expect(compacted.samples[0]).toMatchObject({ path_node_ids: [0, 1, 2, 3, 5], status: 'completed' });
    expect(compacted.samples.every((s) => s.advantage === compacted.advantage)).toBe(true);
    expect(step.groups[0]!.rollouts[1]!.rollout_id).toBeNull();
    // Group 0 logs 4 rows for its 2 rollouts (one compacted): --log-passrate's pass@k leaves it out.
    expect(parsed.checks.map((c) => [c.name, c.verdict])).toEqual([
      ['exactly_once', 'pass'],
      ['only_generated_tokens_trained', 'pass'],
      ['siblings_share_rollout_id_and_reward', 'pass'],
      ['every_sample_trainable', 'pass'],
      ['segmentation_invariance', 'pass'],
      ['group_accounting', 'pass'],
      ['token_accounting', 'pass'],
      ['agent_metrics_logged', 'pass'],
      ['tito_session_consistent', 'pass'],
      ['pass_at_k_counts_every_group', 'finding'],
      ['session_affinity', 'pass'],
    ]);
    expect(parsed.verdict).toBe('finding');
    // The step's accounting is the sum of its rollouts' and trains what the masks train.
    const rollouts = step.groups.flatMap((g) => g.rollouts);
    expect(step.accounting.completion_tokens).toBe(
      rollouts.reduce((a, r) => a + r.accounting.completion_tokens, 0),
    );
    expect(step.accounting.trained_tokens).toBe(rollouts.reduce((a, r) => a + r.trainable_tokens, 0));
  });

  it('reports the tree with kept, trimmed and later-root nodes', () => {
    const rollout = report().steps[0]!.groups[1]!.rollouts[0]!;
    expect(rollout.tree!.nodes.map((n) => [n.id, n.kept, n.leaf])).toEqual([
      [0, true, false],
      [1, false, true],
      [2, true, false],
      [3, true, true],
    ]);
    const compacted = report().steps[0]!.groups[0]!.rollouts[0]!;
    expect(compacted.tree!.nodes.filter((n) => n.later_root).map((n) => n.id)).toEqual([4, 6]);
  });
});

describe('the terminal summary and the HTML page', () => {
  it('summarises metrics, every rollout and every check', () => {
    const text = renderSummary(report());
    expect(text).toContain('rollout/episode_raw_reward');
    for (const name of ['exactly_once', 'group_accounting', 'segmentation_invariance'])
      expect(text).toContain(name);
    // The compacted group's pass@k finding (check 10) is the only one.
    expect(text).toContain('verdict: FINDING');
    const table = text.split('\n').filter((l) => /^\s+\d+\s+\d+\s/.test(l));
    expect(table).toHaveLength(4);
  });

  it('renders one card per rollout with a tree and one strip per sample, escaping text', () => {
    const r = report();
    r.steps[0]!.groups[0]!.rollouts[0]!.instance_id = '<script>x</script>';
    const html = renderHtml(r);
    expect(html.match(/<section class="rollout/g)).toHaveLength(4);
    expect(html.match(/<svg class="tree"/g)).toHaveLength(4);
    expect(html.match(/<div class="strip">/g)).toHaveLength(8);
    // Token accounting: a bar for the step and one per rollout card.
    expect(html.match(/<div class="strip accounting">/g)).toHaveLength(5);
    expect(html).toContain('<h3>Token accounting</h3>');
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;');
  });

  it("shows every metric of the step's report, the rollout side's included, in both", () => {
    const r = report();
    const metrics = r.steps[0]!.metrics;
    // The rollout side (log_rollout_data): present in the step whatever the data.
    for (const key of [
      'rollout/step',
      'rollout/zero_std/all_zero_percentage',
      'rollout/prefix_cache_hit_rate',
      'rollout/repetition_frac',
      'perf/rollout_time',
      'perf/longest_effective_sample_tokens_per_sec',
    ])
      expect(metrics).toHaveProperty(key);
    const text = renderSummary(r);
    const html = renderHtml(r);
    for (const key of Object.keys(metrics)) {
      expect(text).toContain(key);
      expect(html).toContain(`<td>${key}</td>`);
    }
  });
});

describe('the Miles profile in the reports', () => {
  it('names the profile, its commits and picker in JSON (config and every check), terminal and HTML', () => {
    const newer = milesProfileNamed('4d412b5a')!;
    const picker = 'miles.rollout.session.v2.picker_hub.drop_same_prompt_retries';
    const outcome = processStep(0, groups(), normalization, 12);
    const checks = runApplicableChecks(checkDataFromOutcomes([outcome], normalization));
    const built = ReplayReportSchema.parse(
      JSON.parse(
        JSON.stringify(
          buildReport([outcome], checks, {
            ...REPORT_CONFIG,
            miles_profile: reportedMilesProfile(newer, picker),
          }),
        ),
      ),
    );
    expect(built.config.miles_profile).toEqual({
      name: '4d412b5a',
      commits: newer.commits,
      checked_against_miles: newer.checkedAgainstMiles,
      picker,
    });
    expect(built.checks.length).toBeGreaterThan(0);
    for (const check of built.checks) expect(check.miles_profile).toBe('4d412b5a');
    for (const text of [renderSummary(built), renderHtml(built)]) {
      expect(text).toContain('Miles profile 4d412b5a');
      for (const commit of newer.commits) expect(text).toContain(commit);
      expect(text).toContain(picker);
    }
  });
});

describe('a step Miles would refuse to convert', () => {
  it('keeps the rows, reports the error and leaves advantages null', () => {
    const broken = groups();
    broken[0]!.rollouts[0]!.samples[1]!.reward = 0;
    const outcome = processStep(0, broken, normalization, 1);
    expect(outcome.error).toMatchObject({ code: 'grpo.sibling_reward_mismatch' });
    expect(outcome.advantages).toBeNull();
    const data = checkDataFromOutcomes([outcome], normalization);
    const run = runApplicableChecks(data);
    expect(run.verdict).toBe('fail');
    expect(run.skipped).toEqual([{ name: 'segmentation_invariance', missing: ['advantages'] }]);
    const built = buildReport([outcome], run, { ...REPORT_CONFIG, seed: 0 });
    expect(built.steps[0]!.normalization_error?.code).toBe('grpo.sibling_reward_mismatch');
    expect(renderSummary(built)).toContain("Miles' conversion would raise (grpo.sibling_reward_mismatch)");
    expect(renderHtml(built)).toContain('grpo.sibling_reward_mismatch');
  });
});

describe('exit status', () => {
  it('fails on a failed check, and on findings only under --strict', () => {
    const cases: [Verdict, boolean, Verdict, number][] = [
      ['pass', true, 'pass', 0],
      ['finding', false, 'finding', 0],
      ['finding', true, 'fail', 1],
      ['fail', false, 'fail', 1],
    ];
    for (const [checks, strict, run, code] of cases) {
      expect(runVerdict(checks, strict)).toBe(run);
      expect(replayExitCode(runVerdict(checks, strict))).toBe(code);
    }
  });
});

describe('the train schedule in the reports', () => {
  it('shows the global batch size split and the rollouts it drops in JSON, terminal and HTML', () => {
    // 4 rollouts, global batch size 3: one optimizer step of rollouts 0-2; rollout 3 is dropped
    // (radixark/miles@31f1ca96 miles/utils/dp_schedule.py L57-75).
    const outcome = processStep(0, groups(), normalization, 1, {
      global_batch_size: 3,
      dp_size: 1,
      allow_partial_train_step: false,
    });
    expect(outcome.schedule.dropped_rollouts).toEqual(['3']);
    const run = runApplicableChecks(checkDataFromOutcomes([outcome], normalization));
    const built = ReplayReportSchema.parse(
      JSON.parse(JSON.stringify(buildReport([outcome], run, REPORT_CONFIG))),
    );
    const step = built.steps[0]!;
    expect(step.num_rollouts).toBe(3);
    expect(step.train_schedule).toMatchObject({
      mode: 'rollout_side',
      global_batch_size: 3,
      steps: [{ rollouts: [0, 1, 2], loss_divisor: 3 }],
      dropped_rollouts: [3],
      error: null,
    });
    const last = step.groups[1]!.rollouts[1]!;
    expect(last.loss_weight).toMatchObject({ trained: false, total: 0, loss_divisor: null });
    expect(step.groups[0]!.rollouts[0]!.loss_weight).toMatchObject({
      trained: true,
      train_step: 0,
      loss_divisor: 3,
    });
    const summary = renderSummary(built);
    expect(summary).toContain('global batch size 3');
    expect(summary).toMatch(/dropped 1 rollout \(\d+ rows?\): 3/);
    const html = renderHtml(built);
    expect(html).toContain('<th>train step</th>');
    expect(html).toContain('<td class="num">dropped</td>');
  });
});
