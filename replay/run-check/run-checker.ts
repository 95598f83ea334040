import type { CheckRun } from '../checks/run-checks.ts';
import { StepwiseChecks } from '../checks/stepwise-checks.ts';
import { TrainScheduleConfigSchema } from '../grpo/train-schedule.ts';
import type { Group } from '../model/rollout.ts';
import { runVerdict } from '../report/exit-code.ts';
import type { StepOutcome } from '../step/process-step.ts';
import { CheckMerger } from './check-merger.ts';
import type { SmokeCheck } from './check-result.ts';
import { checkStep, groupsOfStep, type RunShape } from './check-step.ts';
import { profileOfDumps } from './dump-profile.ts';
import { type DumpFormat, dumpFormatOf } from './dump-schema.ts';
import type { MetricTable } from './log/metric-table.ts';
import type { ReadStep } from './read-step.ts';
import { replayChecksAsSmoke } from './replay-checks-view.ts';
import type { CheckRunReport, RunProblem, RunStep } from './report-schema.ts';

export interface ShapeFlags {
  readonly n_samples_per_prompt?: number;
  readonly rollout_batch_size?: number;
  readonly global_batch_size?: number;
  readonly dp_size?: number;
  readonly reward_key?: string;
}

export type InferredShape = RunShape & { readonly inferred: readonly string[] };

/** The shape the checks run with: what the flags say, the rest read off the first checkable step. */
function shapeFor(flags: ShapeFlags, groups: readonly Group[], ranks: number): InferredShape {
  const inferred: string[] = [];
  const pick = (name: Exclude<keyof ShapeFlags, 'reward_key'>, value: number) => {
    const given = flags[name];
    if (given !== undefined) return given;
    inferred.push(name);
    return value;
  };
  const n = pick(
    'n_samples_per_prompt',
    groups.reduce((most, g) => Math.max(most, g.rollouts.length), 1),
  );
  const batch = pick('rollout_batch_size', Math.max(1, groups.length));
  // The recipe's relation (one optimizer step a rollout step), and one train file per data-parallel rank.
  const gbs = pick('global_batch_size', n * batch);
  const dp = pick('dp_size', Math.max(1, ranks));
  return {
    normalization: {
      advantage_estimator: 'grpo',
      rewards_normalization: true,
      grpo_std_normalization: n > 1,
      n_samples_per_prompt: n,
      rollout_batch_size: batch,
    },
    train: TrainScheduleConfigSchema.parse({ global_batch_size: gbs, dp_size: dp }),
    ...(flags.reward_key === undefined ? {} : { rewardKey: flags.reward_key }),
    inferred,
  };
}

export interface RunCheckerOptions {
  readonly shape: ShapeFlags;
  /** Train rank files the run has (the default data-parallel size). */
  readonly ranks: number;
  readonly logged: MetricTable | null;
  readonly expectCompaction: boolean;
  readonly strict: boolean;
}

/**
 * The per-step engine of `harness check-run` and of the GPU smoke's dump validation (one code path):
 * fed one read step at a time, it keeps only per-step figures, the checks' evidence and the merged dump
 * checks, and gives the run's report at the end.
 */
export class RunChecker {
  private readonly options: RunCheckerOptions;
  readonly problems: RunProblem[] = [];
  private readonly steps: RunStep[] = [];
  private readonly merger = new CheckMerger();
  private checks: StepwiseChecks | null = null;
  shape: InferredShape | null = null;
  private format: DumpFormat = 'undetermined';

  /** Which Miles wrote the dumps, as far as the steps read so far tell. */
  get dumpFormat(): DumpFormat {
    return this.format;
  }

  constructor(options: RunCheckerOptions) {
    this.options = options;
  }

  /** Checks one step; its outcome is for the replay report (null when the step had nothing checkable). */
  add(read: ReadStep): { entry: RunStep; outcome: StepOutcome } | null {
    for (const p of read.problems) this.problems.push(p);
    let groups: Group[] | null;
    try {
      groups = groupsOfStep(read, this.options.shape.reward_key);
    } catch (error) {
      this.problems.push({
        kind: 'step_not_checkable',
        step: read.step,
        file: read.rollout?.source ?? null,
        detail: (error as Error).message,
      });
      return null;
    }
    if (groups === null || read.rollout === null) return null;
    if (this.format === 'undetermined') this.format = dumpFormatOf(read.rollout.samples);
    if (this.shape === null) {
      this.shape = shapeFor(this.options.shape, groups, this.options.ranks);
      this.checks = new StepwiseChecks({
        n_samples_per_prompt: this.shape.normalization.n_samples_per_prompt,
        rollout_batch_size: this.shape.normalization.rollout_batch_size,
        normalization: this.shape.normalization,
      });
    }
    const checked = checkStep(read, groups, this.shape, this.options.logged, {
      expectCompaction: this.options.expectCompaction,
      rolloutMetrics: profileOfDumps(this.format).switches.rolloutMetrics,
    });
    this.checks!.add(checked.checkStep);
    for (const c of checked.dumpChecks) this.merger.add(read.step, c);
    this.steps.push(checked.entry);
    return { entry: checked.entry, outcome: checked.outcome };
  }

  /** The run's report (`dir`, `log`, `layout` as the caller knows them) and the replay checks' run. */
  finish(where: Pick<CheckRunReport, 'dir' | 'log' | 'layout'>): {
    report: CheckRunReport;
    run: CheckRun | null;
  } {
    const run = this.checks?.finish() ?? null;
    const all: SmokeCheck[] = [
      ...(run ? replayChecksAsSmoke(run) : []),
      ...this.merger.finish(),
      ...comparisonChecks(this.steps, this.options.logged),
    ];
    const failed = this.problems.length > 0 || all.some((c) => c.verdict === 'fail');
    const finding = all.some((c) => c.verdict === 'finding');
    const shape = this.shape;
    const steps = this.steps;
    const profile = profileOfDumps(this.format);
    const report: CheckRunReport = {
      format: 'harness-check-run/1',
      ...where,
      dump_format: this.format,
      miles_profile: { name: profile.name, commits: [...profile.commits] },
      shape: shape && {
        n_samples_per_prompt: shape.normalization.n_samples_per_prompt,
        rollout_batch_size: shape.normalization.rollout_batch_size,
        global_batch_size: shape.train.global_batch_size,
        dp_size: shape.train.dp_size,
        inferred: [...shape.inferred],
      },
      verdict: failed ? 'fail' : finding ? runVerdict('finding', this.options.strict) : 'pass',
      problems: this.problems,
      steps,
      checks: all,
      skipped_checks: run?.skipped ?? [],
      totals: {
        steps: steps.length,
        samples: steps.reduce((n, s) => n + s.samples, 0),
        grpo_values_compared: steps.reduce((n, s) => n + (s.grpo?.values_compared ?? 0), 0),
        grpo_mismatches: steps.reduce((n, s) => n + (s.grpo?.mismatch_count ?? 0), 0),
        metrics_compared: steps.reduce((n, s) => n + (s.metrics?.compared ?? 0), 0),
        metric_mismatches: steps.reduce((n, s) => n + (s.metrics?.mismatches.length ?? 0), 0),
        lost_branches: steps.reduce((n, s) => n + s.lost_branches.length, 0),
      },
    };
    return { report, run };
  }
}

/** The checks only a real run's dumps allow: GRPO against the train rows, metrics against the log, lost branches. */
function comparisonChecks(steps: readonly RunStep[], logged: MetricTable | null): SmokeCheck[] {
  const grpo = steps.flatMap((s) => (s.grpo ? [{ step: s.step, g: s.grpo }] : []));
  const grpoBad = grpo.reduce((n, { g }) => n + g.mismatch_count, 0);
  const grpoValues = grpo.reduce((n, { g }) => n + g.values_compared, 0);
  const metricSteps = steps.flatMap((s) => (s.metrics ? [{ step: s.step, m: s.metrics }] : []));
  const metricBad = metricSteps.reduce((n, { m }) => n + m.mismatches.length, 0);
  const metricValues = metricSteps.reduce((n, { m }) => n + m.compared, 0);
  const lost = steps.flatMap((s) => s.lost_branches);
  return [
    {
      name: 'grpo_matches_train_rows',
      source: 'dumps',
      verdict: grpo.length === 0 ? 'undecided' : grpoBad > 0 ? 'fail' : 'pass',
      summary:
        grpo.length === 0
          ? 'no train_data dumps to compare with'
          : `${grpoValues} trained advantage values over ${grpo.length} steps; ${grpoBad} differ from GRPO recomputed from the raw rewards`,
      evidence: grpo
        .flatMap(({ step, g }) =>
          g.mismatches.map((m) => ({
            step,
            rank: m.rank,
            detail: `rollout ${m.rollout} sample ${m.sample_index}: ${m.column} ${m.trained} trained, ${m.recomputed} recomputed`,
          })),
        )
        .slice(0, 20),
    },
    {
      name: 'logged_metrics_match_dump',
      source: 'logs',
      verdict: logged === null || metricValues === 0 ? 'undecided' : metricBad > 0 ? 'fail' : 'pass',
      summary:
        logged === null
          ? 'no log given'
          : metricValues === 0
            ? 'no metric the dumps determine is in the log for a dumped step'
            : metricBad === 0
              ? `${metricValues} logged metric values over ${metricSteps.length} steps match the dumps`
              : `${metricBad} of ${metricValues} logged metric values disagree with the dumps`,
      evidence: metricSteps
        .flatMap(({ step, m }) =>
          m.mismatches.map((x) => ({
            step,
            detail: `${x.name}: logged ${x.logged}, the dump gives ${x.recomputed}`,
          })),
        )
        .slice(0, 20),
    },
    {
      name: 'lost_branches',
      source: 'dumps',
      verdict: lost.length > 0 ? 'finding' : 'pass',
      summary: `${lost.length} branches below a kept node are trained in no sample`,
      evidence: lost.slice(0, 20).map((b) => ({
        step: b.step,
        group_index: b.group_index,
        rollout: b.rollout,
        detail: `nodes ${b.node_ids.join(',')} trained nowhere; next kept sample ${b.next_sample_index ?? '?'}${b.conversation ? ` (${b.conversation.messages} messages, last: ${b.conversation.tail.at(-1)?.role ?? '-'})` : ''}`,
      })),
    },
  ];
}
