import { join } from 'node:path';
import { HarnessError } from '../../common/errors.ts';
import { fsReason } from '../../common/fs-reason.ts';
import { defaultPickerPath } from '../../fakes/session/hooks/picker-paths.ts';
import { reportedMilesProfile, reportStep } from '../report/build-report.ts';
import { runVerdict } from '../report/exit-code.ts';
import type { ReplayReportSink } from '../report/report-sink.ts';
import type { RunShape } from './check-step.ts';
import { type ConverterOptions, DumpConverter } from './dump-converter.ts';
import { type DumpFolder, scanDumpFolder } from './dump-folder.ts';
import { profileOfDumps } from './dump-profile.ts';
import type { DumpFormat } from './dump-schema.ts';
import { type MetricScan, scanMetricLog } from './log/scan-log-metrics.ts';
import { type ReadStep, readStep } from './read-step.ts';
import type { CheckRunReport, RunProblem, RunStep } from './report-schema.ts';
import { RunChecker, type ShapeFlags } from './run-checker.ts';

export type { ShapeFlags } from './run-checker.ts';

export interface RunCheckOptions {
  readonly dir: string;
  /** The launcher's log (Miles' `step N:`, `rollout N:`, `perf N:` lines). */
  readonly log?: string;
  /** The log already scanned (the smoke run scans it for its thresholds); wins over `log`. */
  readonly logScan?: MetricScan;
  readonly converter: ConverterOptions;
  readonly shape?: ShapeFlags;
  readonly strict?: boolean;
  /** The smoke run tunes every episode to compact: a step without a second segment fails there. */
  readonly expectCompaction?: boolean;
  readonly signal?: AbortSignal;
  /** Told each step as it is checked (progress). */
  readonly onStep?: (entry: RunStep) => void;
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
 * being checked is held) by `RunChecker`, with every check of the replay. The replay's own report (JSON,
 * HTML) goes to `sink` as it would for `harness replay`; the returned report adds what only a real run
 * has: bad input, GRPO against the train rows, the metrics against the log, lost branches.
 */
export async function checkRunDumps<R>(
  options: RunCheckOptions,
  sink: ReplayReportSink<R> | null,
): Promise<{ report: CheckRunReport; replay: R | null }> {
  const folder = await scanDumpFolder(options.dir);
  const log = options.logScan ?? (await readLog(options.log));
  const converter = await DumpConverter.start(options.converter);
  const checker = new RunChecker({
    shape: options.shape ?? {},
    ranks: folder.ranks.length,
    logged: log?.metrics ?? null,
    expectCompaction: options.expectCompaction === true,
    strict: options.strict ?? false,
  });
  for (const p of missingSteps(folder, log)) checker.problems.push(p);
  let begun = false;
  let next: Promise<ReadStep> | null = null;
  try {
    const read = (k: number) => {
      const files = folder.steps[k]!;
      const expected = join(folder.dir, 'rollout_data', `${files.step}.pt`);
      return readStep(converter, files, folder.ranks, expected);
    };
    // One step ahead: the converter reads step k+1 while step k is checked (two cores, two processes).
    next = folder.steps.length > 0 ? read(0) : null;
    for (let k = 0; k < folder.steps.length; k++) {
      if (options.signal?.aborted) throw new HarnessError('replay.interrupted', 'check-run interrupted');
      const current = await next!;
      next = k + 1 < folder.steps.length ? read(k + 1) : null;
      const checked = checker.add(current);
      if (checked === null) continue;
      if (!begun && sink) await sink.begin(replayConfig(options, checker.shape!, folder, checker.dumpFormat));
      begun = true;
      await sink?.addStep(reportStep(checked.outcome));
      options.onStep?.(checked.entry);
    }
  } finally {
    // A step read ahead of an interruption is dropped with the converter.
    next?.catch(() => undefined);
    await converter.close();
  }
  const { report, run } = checker.finish({
    dir: options.dir,
    log: options.log ?? null,
    layout: [...folder.found],
  });
  const replay =
    sink && begun && run && checker.shape
      ? await sink.finish({
          format: 'harness-replay/2',
          config: replayConfig(options, checker.shape, folder, checker.dumpFormat),
          verdict: runVerdict(run.verdict, options.strict ?? false),
          checks_verdict: run.verdict,
          checks: run.results.map((r) => ({ ...r, miles_profile: profileOfDumps(checker.dumpFormat).name })),
          skipped_checks: run.skipped,
        })
      : null;
  return { report, replay };
}

function replayConfig(options: RunCheckOptions, shape: RunShape, folder: DumpFolder, format: DumpFormat) {
  const profile = profileOfDumps(format);
  return {
    miles_profile: reportedMilesProfile(profile, defaultPickerPath(profile.switches)),
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
