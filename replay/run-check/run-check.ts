import { join } from 'node:path';
import { HarnessError } from '../../common/errors.ts';
import { fsReason } from '../../common/fs-reason.ts';
import { StepwiseChecks } from '../checks/stepwise-checks.ts';
import { TrainScheduleConfigSchema } from '../grpo/train-schedule.ts';
import type { Group } from '../model/rollout.ts';
import { reportStep } from '../report/build-report.ts';
import { runVerdict } from '../report/exit-code.ts';
import type { ReplayReportSink } from '../report/report-sink.ts';
import { CheckMerger } from './check-merger.ts';
import type { SmokeCheck } from './check-result.ts';
import { checkStep, groupsOfStep, type RunShape } from './check-step.ts';
import { type ConverterOptions, DumpConverter } from './dump-converter.ts';
import { type DumpFolder, scanDumpFolder } from './dump-folder.ts';
import { type DumpFormat, dumpFormatOf } from './dump-schema.ts';
import { type MetricScan, scanMetricLog } from './log/scan-log-metrics.ts';
import { readStep } from './read-step.ts';
import type { CheckRunReport, RunProblem, RunStep } from './report-schema.ts';
import { replayChecksAsSmoke } from './validate-dumps.ts';

export interface ShapeFlags {
  readonly n_samples_per_prompt?: number;
  readonly rollout_batch_size?: number;
  readonly global_batch_size?: number;
  readonly dp_size?: number;
  readonly reward_key?: string;
}

export interface RunCheckOptions {
  readonly dir: string;
  /** The launcher's log (Miles' `step N:`, `rollout N:`, `perf N:` lines). */
  readonly log?: string;
  readonly converter: ConverterOptions;
  readonly shape?: ShapeFlags;
  readonly strict?: boolean;
  /** The smoke run tunes every episode to compact: a step without a second segment fails there. */
  readonly expectCompaction?: boolean;
  readonly signal?: AbortSignal;
  /** Told each step as it is checked (progress). */
  readonly onStep?: (entry: RunStep) => void;
}

/** The shape the checks run with: what the flags say, the rest read off the step's groups. */
function shapeFor(
  flags: ShapeFlags,
  groups: readonly Group[],
  folder: DumpFolder,
): RunShape & { inferred: string[] } {
  const inferred: string[] = [];
  const pick = (name: keyof ShapeFlags & string, value: number) => {
    const given = flags[name];
    if (typeof given === 'number') return given;
    inferred.push(name);
    return value;
  };
  const n = pick('n_samples_per_prompt', Math.max(1, ...groups.map((g) => g.rollouts.length)));
  const batch = pick('rollout_batch_size', Math.max(1, groups.length));
  // The recipe's relation (one optimizer step a rollout step), and one train file per data-parallel rank.
  const gbs = pick('global_batch_size', n * batch);
  const dp = pick('dp_size', Math.max(1, folder.ranks.length));
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

/** Steps missing between the first and last dumped one, and steps the log has but the dumps lack. */
function missingSteps(folder: DumpFolder, log: MetricScan | null): RunProblem[] {
  const have = new Set(folder.steps.map((s) => s.step));
  const wanted = new Set<number>();
  const first = folder.steps[0]!.step;
  const last = folder.steps.at(-1)!.step;
  for (let s = first; s <= last; s++) wanted.add(s);
  for (const p of log?.metrics.get('rollout/step') ?? []) wanted.add(p.step);
  return [...wanted]
    .filter((s) => !have.has(s))
    .sort((a, b) => a - b)
    .map((step) => ({
      kind: 'missing_step' as const,
      step,
      file: join(folder.dir, 'rollout_data', `${step}.pt`),
      detail:
        have.has(step - 1) || step < last
          ? 'no dump of this step between its neighbours'
          : 'the log names this step but it has no dump',
    }));
}

async function readLog(path: string | undefined): Promise<MetricScan | null> {
  if (path === undefined) return null;
  try {
    return await scanMetricLog(path);
  } catch (error) {
    throw new HarnessError('config.input_unreadable', `--log ${path}: ${fsReason(error)}`, {
      details: { option: '--log', path, reason: fsReason(error) },
      cause: error,
    });
  }
}

/**
 * `harness check-run`: a recipe run's `--dump-details` folder checked one step at a time (only the step
 * being checked is held), with every check of the replay. The replay's own report (terminal summary,
 * JSON, HTML) goes to `sink` as it would for `harness replay`; the returned report adds what only a
 * real run has: bad input, GRPO against the train rows, the metrics against the log, lost branches.
 */
export async function checkRunDumps<R>(
  options: RunCheckOptions,
  sink: ReplayReportSink<R> | null,
): Promise<{ report: CheckRunReport; replay: R | null }> {
  const folder = await scanDumpFolder(options.dir);
  const log = await readLog(options.log);
  const converter = await DumpConverter.start(options.converter);
  const problems: RunProblem[] = missingSteps(folder, log);
  const steps: RunStep[] = [];
  const merger = new CheckMerger();
  let shape: (RunShape & { inferred: string[] }) | null = null;
  let checks: StepwiseChecks | null = null;
  let format: DumpFormat = 'undetermined';
  try {
    for (const files of folder.steps) {
      if (options.signal?.aborted) throw new HarnessError('replay.interrupted', 'check-run interrupted');
      const read = await readStep(
        converter,
        files,
        folder.ranks,
        join(folder.dir, 'rollout_data', `${files.step}.pt`),
      );
      problems.push(...read.problems);
      let groups: Group[] | null;
      try {
        groups = groupsOfStep(read, options.shape?.reward_key);
      } catch (error) {
        problems.push({
          kind: 'step_not_checkable',
          step: files.step,
          file: files.rollout,
          detail: String((error as Error).message),
        });
        continue;
      }
      if (groups === null) continue;
      if (format === 'undetermined') format = dumpFormatOf(read.rollout!.samples);
      if (shape === null) {
        shape = shapeFor(options.shape ?? {}, groups, folder);
        checks = new StepwiseChecks({
          n_samples_per_prompt: shape.normalization.n_samples_per_prompt,
          rollout_batch_size: shape.normalization.rollout_batch_size,
          normalization: shape.normalization,
        });
        await sink?.begin(replayConfig(options, shape, folder));
      }
      const checked = checkStep(read, groups, shape, log?.metrics ?? null, options.expectCompaction === true);
      checks!.add(checked.checkStep);
      for (const c of checked.dumpChecks) merger.add(files.step, c);
      steps.push(checked.entry);
      await sink?.addStep(reportStep(checked.outcome));
      options.onStep?.(checked.entry);
    }
  } finally {
    await converter.close();
  }
  return finishRun(options, folder, { problems, steps, merger, shape, checks, format, log }, sink);
}

function replayConfig(options: RunCheckOptions, shape: RunShape, folder: DumpFolder) {
  return {
    rollout_batch_size: shape.normalization.rollout_batch_size,
    n_samples_per_prompt: shape.normalization.n_samples_per_prompt,
    steps: folder.steps.length,
    seed: 0,
    max_seq_len: null,
    prompts: `(dumps) ${options.dir}`,
    episodes: [`(dumps) ${options.dir}`],
    normalization: shape.normalization,
    strict: options.strict ?? false,
  };
}

interface RunState {
  readonly problems: RunProblem[];
  readonly steps: RunStep[];
  readonly merger: CheckMerger;
  readonly shape: (RunShape & { inferred: string[] }) | null;
  readonly checks: StepwiseChecks | null;
  readonly format: DumpFormat;
  readonly log: MetricScan | null;
}

/** Numbers every comparison adds up to, and the checks that come from them. */
function comparisonChecks(steps: readonly RunStep[], log: MetricScan | null): SmokeCheck[] {
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
      name: 'logged_metrics_match_dumps',
      source: 'logs',
      verdict: log === null || metricValues === 0 ? 'undecided' : metricBad > 0 ? 'fail' : 'pass',
      summary:
        log === null
          ? 'no --log given'
          : metricValues === 0
            ? 'no metric the dumps determine is in the log for a dumped step'
            : `${metricValues} logged values over ${metricSteps.length} steps; ${metricBad} differ from the recomputation`,
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

async function finishRun<R>(
  options: RunCheckOptions,
  folder: DumpFolder,
  state: RunState,
  sink: ReplayReportSink<R> | null,
): Promise<{ report: CheckRunReport; replay: R | null }> {
  const { problems, steps, merger, shape, checks, format, log } = state;
  const run = checks?.finish() ?? null;
  const replayChecks = run ? replayChecksAsSmoke(run) : [];
  const all: SmokeCheck[] = [...replayChecks, ...merger.finish(), ...comparisonChecks(steps, log)];
  const failed = problems.length > 0 || all.some((c) => c.verdict === 'fail');
  const finding = all.some((c) => c.verdict === 'finding');
  const verdict = failed ? 'fail' : finding ? runVerdict('finding', options.strict ?? false) : 'pass';
  const report: CheckRunReport = {
    format: 'harness-check-run/1',
    dir: options.dir,
    log: options.log ?? null,
    dump_format: format,
    layout: [...folder.found],
    shape: shape && {
      n_samples_per_prompt: shape.normalization.n_samples_per_prompt,
      rollout_batch_size: shape.normalization.rollout_batch_size,
      global_batch_size: shape.train.global_batch_size,
      dp_size: shape.train.dp_size,
      inferred: shape.inferred,
    },
    verdict,
    problems,
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
  const replay =
    sink && run && shape
      ? await sink.finish({
          format: 'harness-replay/2',
          config: replayConfig(options, shape, folder),
          verdict: runVerdict(run.verdict, options.strict ?? false),
          checks_verdict: run.verdict,
          checks: run.results,
          skipped_checks: run.skipped,
        })
      : null;
  return { report, replay };
}
