import { describe, expect, it } from 'vitest';
import { DEFAULT_MILES_PROFILE } from '../../contracts/miles-profile.ts';
import { DEFAULT_PICKER_PATH } from '../../fakes/session/hooks/types.ts';
import { checkDataFromOutcomes } from '../checks/from-step-outcomes.ts';
import { runApplicableChecks } from '../checks/run-checks.ts';
import type { NormalizationConfig } from '../grpo/config.ts';
import { groupIndex } from '../model/ids.ts';
import type { Group, Rollout } from '../model/rollout.ts';
import { applyAbortedFilter } from '../step/aborted-filter.ts';
import { processStep } from '../step/process-step.ts';
import { buildRollout, PROACTIVE_COMPACTION } from '../testing/build-rollout.ts';
import { buildReport, reportedMilesProfile } from './build-report.ts';
import { renderHtml } from './html.ts';
import { ReplayReportSchema } from './schema.ts';
import { renderSummary } from './summary.ts';

/**
 * What each rollout row shows besides its numbers: the episode script Harbor's mock played (and whether
 * its pool stood in), and why a rollout aborted, in the JSON report, the terminal table and the HTML page.
 */

const normalization: NormalizationConfig = {
  advantage_estimator: 'grpo',
  rewards_normalization: true,
  grpo_std_normalization: true,
  n_samples_per_prompt: 2,
  rollout_batch_size: 2,
};

function withEpisode(rollout: Rollout, script: string, variant: number, poolFallback: boolean): Rollout {
  return { ...rollout, episode: { script, variant, pool_fallback: poolFallback } };
}

function groups(): Group[] {
  const noRecords: Rollout = {
    ...buildRollout({ nodes: [{ parent: null, prompt: 3, completion: 2 }], group: 1, index: 2 }),
    aborted: true,
    abort_reason: 'no_records',
    episode: null,
  };
  return [
    {
      group_index: groupIndex(0),
      dropped: null,
      rollouts: [
        withEpisode(
          buildRollout({ nodes: PROACTIVE_COMPACTION, group: 0, index: 0, reward: 1 }),
          'proactive-once',
          0,
          false,
        ),
        withEpisode(
          buildRollout({
            nodes: [{ parent: null, prompt: 3, completion: 4 }],
            group: 0,
            index: 1,
            reward: 0,
          }),
          'pool-build',
          5,
          true,
        ),
      ],
    },
    applyAbortedFilter({
      group_index: groupIndex(1),
      dropped: null,
      rollouts: [
        noRecords,
        withEpisode(
          buildRollout({
            nodes: [{ parent: null, prompt: 3, completion: 4 }],
            group: 1,
            index: 3,
            reward: 1,
          }),
          'no-compaction',
          1,
          false,
        ),
      ],
    }),
  ];
}

function report() {
  const outcome = processStep(0, groups(), normalization, 5);
  const checks = runApplicableChecks(checkDataFromOutcomes([outcome], normalization));
  const built = buildReport([outcome], checks, {
    rollout_batch_size: 2,
    n_samples_per_prompt: 2,
    steps: 1,
    seed: 1,
    max_seq_len: null,
    prompts: 'hand-built',
    episodes: [],
    normalization,
    strict: false,
    miles_profile: reportedMilesProfile(DEFAULT_MILES_PROFILE, DEFAULT_PICKER_PATH),
  });
  return ReplayReportSchema.parse(JSON.parse(JSON.stringify(built)));
}

describe('a rollout row', () => {
  it('carries the played episode and the abort reason in the JSON report', () => {
    const rollouts = report().steps[0]!.groups.flatMap((g) => g.rollouts);
    expect(rollouts.map((r) => r.episode)).toEqual([
      { script: 'proactive-once', variant: 0, pool_fallback: false },
      { script: 'pool-build', variant: 5, pool_fallback: true },
      null,
      { script: 'no-compaction', variant: 1, pool_fallback: false },
    ]);
    expect(rollouts.map((r) => r.abort_reason)).toEqual([null, null, 'no_records', null]);
  });

  it('refuses a report whose episode lacks the pool flag (the schema holds the field)', () => {
    const json = JSON.parse(JSON.stringify(report()));
    delete json.steps[0].groups[0].rollouts[0].episode.pool_fallback;
    expect(ReplayReportSchema.safeParse(json).success).toBe(false);
  });

  it('shows episode, variant, pool fallback and abort reason in the terminal table', () => {
    const lines = renderSummary(report()).split('\n');
    const row = (key: number) => lines.find((l) => new RegExp(`^\\s+\\d+\\s+${key}\\s`).test(l)) ?? '';
    expect(row(0)).toMatch(/\sproactive-once v0$/);
    expect(row(1)).toMatch(/\spool-build v5 \(pool\)$/);
    expect(row(2)).toContain('dropped: group_has_aborted (aborted: no_records)');
    expect(row(2)).toMatch(/\s-$/);
    expect(row(3)).toMatch(/dropped: group_has_aborted\s+no-compaction v1$/);
    expect(lines.some((l) => l.includes('(pool): no episode script has'))).toBe(true);
  });

  it('says nothing of the pool when no rollout fell back to it', () => {
    const r = report();
    for (const g of r.steps[0]!.groups)
      for (const rollout of g.rollouts) if (rollout.episode) rollout.episode.pool_fallback = false;
    expect(renderSummary(r)).not.toContain('(pool)');
    expect(renderHtml(r)).not.toContain('pool fallback');
  });

  it('shows them in the GRPO table and on each rollout card of the HTML page', () => {
    const html = renderHtml(report());
    const cells = [...html.matchAll(/<td class="episode">([^<]*)<\/td>/g)].map((m) => m[1]);
    expect(cells).toEqual(['proactive-once v0', 'pool-build v5 (pool)', '-', 'no-compaction v1']);
    const states = [...html.matchAll(/<td class="state">([^<]*)<\/td>/g)].map((m) => m[1]);
    expect(states[2]).toBe('dropped: group_has_aborted (aborted: no_records)');
    const card = (group: number, key: number) => {
      const start = html.indexOf(`id="s0-g${group}-r${key}"`);
      return html.slice(start, html.indexOf('</section>', start));
    };
    expect(card(0, 1)).toContain(
      '<div class="meta episode pool-fallback">episode: pool-build, variant 5 · pool fallback',
    );
    expect(card(1, 2)).toContain('aborted: no_records');
    expect(card(1, 2)).toContain('episode: - (no /run result)');
    expect(card(0, 0)).toContain('<div class="meta episode">episode: proactive-once, variant 0</div>');
  });
});

describe('counts in the reports', () => {
  it('are singular for exactly one (1 note, 1 finding, 1 rollout, 1 row, 1 optimizer step)', () => {
    const r = report();
    const step = r.steps[0]!;
    step.num_rollouts = 1;
    step.train_schedule.steps = [{ rollouts: [0], row_count: 1, loss_divisor: 1 }];
    step.train_schedule.distinct_rollouts = 1;
    step.train_schedule.dropped_rollouts = [3];
    step.train_schedule.dropped_rows = 1;
    const check = r.checks[0]!;
    check.counts = { fail: 0, finding: 1, info: 1 };
    check.evidence = check.evidence.slice(0, 1);
    const wrong =
      /\b1 (notes|findings|rollouts|rows|optimizer steps|distinct rollouts|evidence items)\b|\(s\)/;
    const summary = renderSummary(r);
    expect(summary).not.toMatch(wrong);
    expect(summary).toContain('1 finding, 1 note');
    expect(summary).toContain('1 optimizer step: 1 rollout (1 row) / 1; dropped 1 rollout (1 row): 3');
    expect(summary).toContain('step 0: 1 rollout trained');
    expect(renderHtml(r)).not.toMatch(wrong);
  });
});
