import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { HarnessError, isHarnessError } from '../common/errors.ts';
import { EXIT } from '../common/exit-codes.ts';
import type { HarborServer } from '../fakes/harbor/server.ts';
import { TENSOR_PARALLEL_SIZE } from '../recipe/validate.ts';
import type { SmokeCheck } from '../replay/run-check/check-result.ts';
import { checkTrainStepLogged } from '../replay/run-check/checks/train-step-logged.ts';
import { type MetricScan, scanMetricLog } from '../replay/run-check/log/scan-log-metrics.ts';
import { checkRunDumps } from '../replay/run-check/run-check.ts';
import { startSmokeHarbor, summarizeTrials } from './harbor/start-smoke-harbor.ts';
import { smokePromptLines } from './plan/prompt-data.ts';
import { redactPlan } from './plan/render-plan.ts';
import type { PlannedCommand, SmokePlan } from './plan/smoke-plan.ts';
import { checkPreconditions } from './preconditions/check-preconditions.ts';
import { childEnv, type Precondition } from './preconditions/precondition.ts';
import { createLogSink, type LogSink } from './process/log-sink.ts';
import { runProcessTree, type TreeOutcome } from './process/run-process-tree.ts';
import { renderReportText } from './report/render-report.ts';
import type { SmokeReport, SmokeStatus } from './report/smoke-report.ts';
import { applyThresholds } from './thresholds/apply-thresholds.ts';
import type { Threshold } from './thresholds/thresholds-file.ts';

/** What a smoke run touches of the outside world; the CLI's `CliIo` is one. */
interface SmokeIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly stdout: { write(chunk: string): unknown };
  readonly stderr: { write(chunk: string): unknown };
  /** Aborted on SIGINT/SIGTERM: the run stops its servers and children. */
  readonly signal: AbortSignal;
}

export interface SmokeRunDeps {
  readonly io: SmokeIo;
  /** Starts the Harbor mock (tests may swap it). */
  readonly startHarbor?: typeof startSmokeHarbor;
  readonly now?: () => Date;
}

const CLEANUP_TIMEOUT_MS = 120_000;

function run(
  command: PlannedCommand,
  io: SmokeIo,
  sink: LogSink,
  tag: string,
  timeoutMs: number,
  graceMs: number,
) {
  return runProcessTree(
    {
      command: command.command,
      args: command.args,
      cwd: command.cwd,
      env: { ...childEnv(io.env), ...command.env },
    },
    { timeoutMs, graceMs, signal: io.signal, onLine: (line) => sink.line(`${tag}${line}`) },
  );
}

function launcherSection(outcome: TreeOutcome): NonNullable<SmokeReport['launcher']> {
  return {
    outcome: outcome.kind,
    exit_code: outcome.exitCode,
    signal: outcome.signal,
    duration_s: Math.round(outcome.durationMs / 100) / 10,
    forced_kill: outcome.forced,
  };
}

/**
 * Runs the smoke: preconditions, the Harbor mock, the launcher in its own process group (logs to the
 * terminal and a file), cleanup, dump conversion, the checks and the thresholds; writes `report.json`
 * next to the logs on every path that got as far as creating the run folder. Returns the report; its
 * `exit_code` is the command's.
 */
export async function runSmoke(
  plan: SmokePlan,
  thresholds: readonly Threshold[],
  deps: SmokeRunDeps,
): Promise<SmokeReport> {
  const { io } = deps;
  const now = deps.now ?? (() => new Date());
  const startedAt = now().toISOString();
  const problems: string[] = [];
  const base = {
    run_id: plan.run_id,
    started_at: startedAt,
    paths: {
      run_dir: plan.paths.run_dir,
      log_file: plan.paths.log_file,
      harbor_log: plan.paths.harbor_log,
      report_file: plan.paths.report_file,
    },
  };
  const finish = (
    status: SmokeStatus,
    exitCode: number,
    rest: Partial<
      Omit<SmokeReport, 'run_id' | 'status' | 'exit_code' | 'started_at' | 'finished_at' | 'paths'>
    >,
  ): SmokeReport => ({
    ...base,
    status,
    exit_code: exitCode,
    finished_at: now().toISOString(),
    preconditions: [],
    launcher: null,
    harbor: null,
    conversion: null,
    train_steps: [],
    metrics_found: 0,
    checks: [],
    thresholds: [],
    problems,
    ...rest,
  });

  const preconditions: Precondition[] = await checkPreconditions(plan, { env: io.env, cwd: io.cwd });
  const unmet = preconditions.filter((p) => !p.met);
  if (unmet.length > 0) {
    for (const p of unmet) problems.push(`${p.code}: ${p.reason}`);
    const report = finish('preconditions_unmet', EXIT.precondition, { preconditions });
    io.stderr.write(renderReportText(report).replace(/\nReport:[\s\S]*$/, '\nNothing was started.\n'));
    return report;
  }

  if (existsSync(plan.paths.run_dir))
    throw new HarnessError(
      'config.run_dir_exists',
      `${plan.paths.run_dir} already exists: a smoke run needs a fresh folder`,
      {
        details: { run_dir: plan.paths.run_dir },
      },
    );
  await mkdir(plan.paths.smoke_dir, { recursive: true });
  await writeFile(plan.paths.plan_file, `${JSON.stringify(redactPlan(plan, io.env), null, 2)}\n`);
  await writeFile(plan.paths.prompt_data, smokePromptLines(plan.harbor.instance_ids));

  const sink = createLogSink({ path: plan.paths.log_file, prefix: '[miles]', terminal: io.stdout });
  const harborSink = createLogSink({
    path: plan.paths.harbor_log,
    prefix: '[harbor]',
    terminal: { write: () => true },
  });
  let harbor: HarborServer | undefined;
  let report: SmokeReport;
  try {
    harbor = await (deps.startHarbor ?? startSmokeHarbor)(plan, harborSink, io.env.HARBOR_ADMIN_SECRET);
    io.stderr.write(`[smoke] Harbor mock on ${harbor.url}; launcher log ${plan.paths.log_file}\n`);
    const outcome = io.signal.aborted
      ? null
      : await run(plan.launcher, io, sink, '', plan.timeout_s * 1000, plan.grace_s * 1000);
    // Ray keeps the submitted job and its daemons outside the launcher's process group.
    for (const cleanup of plan.cleanup) {
      const done = await runProcessTree(
        {
          command: cleanup.command,
          args: cleanup.args,
          cwd: cleanup.cwd,
          env: { ...childEnv(io.env), ...cleanup.env },
        },
        { timeoutMs: CLEANUP_TIMEOUT_MS, graceMs: 5_000, onLine: (line) => sink.line(`cleanup: ${line}`) },
      );
      if (done.kind !== 'exited' || done.exitCode !== 0)
        sink.line(
          `cleanup: ${cleanup.command} ${cleanup.args.join(' ')} ${done.spawnError ?? `ended ${done.kind} ${done.exitCode ?? done.signal}`}`,
        );
    }
    const harborSummary = summarizeTrials(harbor);
    await harbor.close();
    harbor = undefined;
    await sink.close();
    const scan: MetricScan = await scanMetricLog(plan.paths.log_file);
    const logged = {
      launcher: outcome ? launcherSection(outcome) : null,
      harbor: harborSummary,
      train_steps: (scan.metrics.get('train/step') ?? []).map((p) => p.value),
      metrics_found: scan.metrics.size,
      preconditions,
    };
    if (!outcome || outcome.kind === 'aborted') {
      problems.push('interrupted: the launcher tree and the Harbor mock were stopped');
      report = finish('interrupted', EXIT.interrupted, logged);
    } else if (outcome.kind !== 'exited' || outcome.exitCode !== 0) {
      const timedOut = outcome.kind === 'timeout';
      problems.push(
        timedOut
          ? `the launcher did not finish within ${plan.timeout_s} s and was stopped`
          : outcome.kind === 'spawn_failed'
            ? `the launcher could not start: ${outcome.spawnError}`
            : `the launcher exited with ${outcome.exitCode ?? outcome.signal}; see ${plan.paths.log_file}`,
      );
      report = finish(timedOut ? 'timed_out' : 'launch_failed', EXIT.launchFailed, logged);
    } else {
      report = await validate(plan, thresholds, deps, scan, logged, finish, problems);
    }
  } catch (error) {
    // Something broke around the launcher (the mock could not listen, a log could not be written):
    // still leave a report that says what, next to whatever logs exist.
    problems.push(`the run could not proceed: ${error instanceof Error ? error.message : String(error)}`);
    report = finish('launch_failed', EXIT.launchFailed, { preconditions });
  } finally {
    await harbor?.close();
    await sink.close();
    await harborSink.close();
  }
  if (
    !plan.keep_checkpoints &&
    relative(plan.paths.run_dir, plan.paths.checkpoints_dir).startsWith('checkpoints')
  )
    await rm(plan.paths.checkpoints_dir, { recursive: true, force: true });
  await writeFile(plan.paths.report_file, `${JSON.stringify(report, null, 2)}\n`);
  (report.exit_code === EXIT.ok ? io.stdout : io.stderr).write(renderReportText(report));
  return report;
}

async function validate(
  plan: SmokePlan,
  thresholds: readonly Threshold[],
  deps: SmokeRunDeps,
  scan: MetricScan,
  logged: Partial<SmokeReport>,
  finish: (status: SmokeStatus, exitCode: number, rest: Partial<SmokeReport>) => SmokeReport,
  problems: string[],
): Promise<SmokeReport> {
  const { io } = deps;
  // The dumps are read and checked by `harness check-run`'s own engine (replay/run-check), one step at a
  // time through one converter process: the smoke run has no validator of its own.
  const stepSink = createLogSink({ path: plan.paths.log_file, prefix: '[check-run]', terminal: io.stdout });
  let conversion: NonNullable<SmokeReport['conversion']>;
  let checks: SmokeCheck[];
  try {
    const { report } = await checkRunDumps(
      {
        dir: plan.paths.details_dir,
        logScan: scan,
        converter: {
          python: plan.converter.command,
          milesRoot: plan.miles_root,
          env: { ...childEnv(io.env), ...plan.converter.env },
        },
        shape: {
          n_samples_per_prompt: plan.variables.n_samples_per_prompt!,
          rollout_batch_size: plan.variables.rollout_batch_size!,
          global_batch_size: plan.variables.global_batch_size!,
          dp_size: Math.max(
            1,
            Math.floor((plan.variables.gpus_per_node! * plan.variables.nodes!) / TENSOR_PARALLEL_SIZE),
          ),
        },
        expectCompaction: true,
        signal: io.signal,
        onStep: (s) =>
          stepSink.line(
            `step ${s.step}: ${s.samples} samples, train ranks ${s.train_ranks.join(',') || '-'}`,
          ),
      },
      null,
    );
    conversion = {
      exit_code: 0,
      message: `read ${report.steps.length} steps (dump format ${report.dump_format})`,
    };
    for (const p of report.problems)
      problems.push(
        `dump problem ${p.kind}${p.step === null ? '' : ` at step ${p.step}`} (${p.file ?? '-'}): ${p.detail}`,
      );
    checks = [checkTrainStepLogged(scan.metrics, scan.unreadableLines), ...report.checks];
  } catch (error) {
    if (!isHarnessError(error)) throw error;
    if (error.code === 'replay.interrupted') {
      problems.push('interrupted while checking the dumps');
      return finish('interrupted', EXIT.interrupted, logged);
    }
    conversion = {
      exit_code: error.code.startsWith('precondition.') ? EXIT.precondition : EXIT.failed,
      message: error.reason,
    };
    problems.push(`the dumps could not be read (${error.code}): ${error.reason}; see ${plan.paths.log_file}`);
    return finish('dumps_unusable', EXIT.failed, { ...logged, conversion });
  } finally {
    await stepSink.close();
  }
  const results = applyThresholds(thresholds, { variables: plan.variables, metrics: scan.metrics });
  for (const c of checks.filter((x) => x.verdict === 'fail'))
    problems.push(`check ${c.name} failed: ${c.summary}`);
  for (const t of results.filter((x) => x.verdict !== 'pass'))
    problems.push(
      `threshold '${t.expression}' ${t.verdict === 'fail' ? 'failed' : `could not be evaluated: ${t.error?.message}`}`,
    );
  const failed = problems.length > 0;
  return finish(failed ? 'failed' : 'passed', failed ? EXIT.failed : EXIT.ok, {
    ...logged,
    conversion,
    checks,
    thresholds: results,
  });
}
