import { readFile, stat } from 'node:fs/promises';
import { HarnessError } from '../common/errors.ts';
import { fsReason } from '../common/fs-reason.ts';
import { parseJson } from '../common/python-json/loads.ts';
import { DEFAULT_MILES_PROFILE, type MilesProfile, type MilesSwitches } from '../contracts/miles-profile.ts';
import {
  DEFAULT_EPISODES_DIR,
  loadEpisodeScripts,
  parseEpisodeScript,
} from '../fakes/harbor/episode-catalog.ts';
import type { EpisodeScript } from '../fakes/harbor/episode-schema.ts';
import { generateEpisodes, toEpisodeScripts } from '../fakes/harbor/generator/generate.ts';
import type { GeneratorParamsInput } from '../fakes/harbor/generator/params.ts';
import { createSessionClient, defaultPickerPath } from '../fakes/session/index.ts';
import type { TitoModel } from '../fakes/tokenizer/tito.ts';
import { checkDataFromOutcomes } from './checks/from-step-outcomes.ts';
import { StepwiseChecks } from './checks/stepwise-checks.ts';
import type { CheckData } from './checks/types.ts';
import { flushSessionInstances } from './driver/flush.ts';
import { concurrencyLimit } from './driver/limit.ts';
import { type ProgressSink, stepProgress } from './driver/progress.ts';
import { PromptSource } from './driver/prompt-source.ts';
import { loadPrompts, type PromptRow } from './driver/prompts.ts';
import type { RolloutContext } from './driver/rollout.ts';
import { runRolloutStep } from './driver/rollout-step.ts';
import { recipeSamplingParams } from './driver/run-body.ts';
import { SessionAffinityMonitor } from './driver/session-affinity.ts';
import { sessionRouter } from './driver/session-router.ts';
import { type ReplayStack, type StackOptions, startReplayStack } from './driver/stack.ts';
import type { NormalizationConfig } from './grpo/config.ts';
import type { TrainScheduleConfig } from './grpo/train-schedule.ts';
import type { Rollout } from './model/rollout.ts';
import { type ReportConfig, reportedMilesProfile, reportFrame, reportStep } from './report/build-report.ts';
import { InMemoryReport, type ReplayReportSink } from './report/report-sink.ts';
import type { ReplayReport } from './report/schema.ts';
import { processStep, type StepOutcome } from './step/process-step.ts';

export interface ReplayOptions {
  /** Episode directories or script files; empty means `generated`, else the bundled `fixtures/episodes`. */
  readonly episodes: readonly string[];
  /** Generated episodes (docs/replay.md "Generated episodes") for the prompts' tasks, when no files are named. */
  readonly generated?: { readonly seed: number; readonly params?: GeneratorParamsInput };
  readonly prompts: string;
  readonly rolloutBatchSize: number;
  readonly nSamplesPerPrompt: number;
  readonly steps: number;
  readonly concurrency: number;
  readonly seed: number;
  /** The recipe's `--max-seq-len` (sent in `/run` and to the samples op). */
  readonly maxSeqLen: number;
  /** The recipe's `--rollout-max-response-len`. */
  readonly maxResponseLen: number;
  /** `AGENT_MODEL_NAME`. */
  readonly modelName: string;
  /** `AGENT_TRIAL_TIMEOUT` in seconds. */
  readonly trialTimeoutS: number;
  /** Harbor's `--agent-timeout` in seconds. */
  readonly agentTimeoutS: number;
  readonly titoModel: TitoModel;
  /** Which Miles the fakes answer as (contracts/miles-profile.ts); default `DEFAULT_MILES_PROFILE`. */
  readonly milesProfile?: MilesProfile;
  /**
   * The recipe's `--global-batch-size` (rollouts per optimizer step) and the trainer's data-parallel
   * size; without them one optimizer step takes the whole batch on one rank.
   */
  readonly train?: TrainScheduleConfig;
  /**
   * The recipe's `--rollout-num-gpus` (colocated: `--actor-num-nodes` × `--actor-num-gpus-per-node`) for
   * `perf/*tokens_per_gpu_per_sec`; without it those two are not logged, as in Miles.
   */
  readonly rolloutNumGpus?: number;
  /** The Miles profile's switches the replay follows (default: the default profile's). */
  readonly miles?: MilesSwitches;
  /**
   * `--session-server-workers`: fake session servers on their own ports, one chosen per session (needs
   * a profile with `sessionServerWorkers`; default 32 under one, else 1).
   */
  readonly sessionServerWorkers?: number;
  /** `--strict`: findings fail the run (recorded in the report). */
  readonly strict?: boolean;
  /** Session sample hooks instead of Miles' defaults (planted defects in `harness fuzz` tests). */
  readonly sessionHooks?: StackOptions['sessionHooks'];
  /** Keep each request's messages in the rollouts' `requests` (off: the log keeps digests only). */
  readonly keepRequestMessages?: boolean;
  /** Test-only (no CLI flag reaches it): rewrites each finished rollout, to plant a divergence. */
  readonly plant?: (rollout: Rollout) => Rollout;
  /** Starts the session server in front of the policy instead of the fake (the differential's Miles one). */
  readonly sessionServer?: StackOptions['sessionServer'];
}

/**
 * The report, and the data it was built from (for tools and tests that re-run the checks). It holds
 * every step; `harness replay` streams instead (`streamReplay`).
 */
export interface ReplayRun {
  readonly report: ReplayReport;
  readonly outcomes: readonly StepOutcome[];
  readonly checkData: CheckData;
}

export interface ReplayHooks {
  readonly signal: AbortSignal;
  readonly progress: ProgressSink;
  /** Told where the servers listen once all three are up. */
  readonly onStarted?: (urls: { policy: string; session: string; harbor: string }) => void;
  /** Told each step's outcome once it is processed (the replay keeps nothing of it afterwards). */
  readonly onStep?: (outcome: StepOutcome) => void;
  /** Test-only (no CLI flag reaches it): the running servers, to stop one mid-step. */
  readonly onStack?: (stack: ReplayStack) => void;
}

/** Loads every script named (directories recursively); the bundled set when none is named. */
export async function loadEpisodes(paths: readonly string[]): Promise<EpisodeScript[]> {
  if (paths.length === 0) return loadEpisodeScripts(DEFAULT_EPISODES_DIR);
  const scripts: EpisodeScript[] = [];
  for (const path of paths) {
    const info = await stat(path).catch((error: unknown) => {
      throw new HarnessError(
        'config.episodes_missing',
        `--episodes ${path}: ${fsReason(error)}; expected an episode script (.json) or a folder of them`,
        { details: { path }, cause: error },
      );
    });
    if (info.isDirectory()) for (const s of await loadEpisodeScripts(path)) scripts.push(s);
    else {
      let value: unknown;
      try {
        value = parseJson(await readFile(path, 'utf8'));
      } catch (error) {
        throw new HarnessError('config.episode_invalid', `episode script ${path} is not valid JSON`, {
          cause: error,
        });
      }
      scripts.push(parseEpisodeScript(value, path));
    }
  }
  return scripts;
}

/** The scripts a run plays: the named files, else generated ones for the prompts' tasks, else the bundled set. */
export async function episodesFor(
  options: Pick<ReplayOptions, 'episodes' | 'generated' | 'nSamplesPerPrompt'>,
  prompts: readonly PromptRow[],
): Promise<EpisodeScript[]> {
  if (options.episodes.length > 0 || options.generated === undefined) return loadEpisodes(options.episodes);
  const tasks = [...new Set(prompts.map((p) => p.metadata.instance_id))];
  return toEpisodeScripts(
    generateEpisodes({
      seed: options.generated.seed,
      tasks,
      // One variant per rollout of a group: trial k of a task plays variant k.
      params: { samples_per_task: options.nSamplesPerPrompt, ...options.generated.params },
    }),
  );
}

/** How the report names the episodes a run played. */
export function episodesLabel(options: Pick<ReplayOptions, 'episodes' | 'generated'>): string[] {
  if (options.episodes.length > 0) return [...options.episodes];
  if (options.generated !== undefined) return [`(generated) seed ${options.generated.seed}`];
  return ['(bundled) fixtures/episodes'];
}

/**
 * How many fake session servers to run: the option, else 32 (newer Miles' default, PR #2774) under a
 * profile with `sessionServerWorkers`, else 1. More than one under a profile without it is refused: that
 * Miles runs a single session server.
 */
function sessionServerWorkersFor(options: ReplayOptions, miles: MilesSwitches): number {
  const count = options.sessionServerWorkers ?? (miles.sessionServerWorkers ? 32 : 1);
  if (!Number.isInteger(count) || count < 1)
    throw new HarnessError('config.invalid', '--session-server-workers must be at least 1.', {
      details: { field: 'session_server_workers' },
    });
  if (count > 1 && !miles.sessionServerWorkers)
    throw new HarnessError(
      'config.invalid',
      `--session-server-workers ${count}: the chosen Miles profile runs one session server (its switch sessionServerWorkers is off); choose a profile with it`,
      { details: { field: 'session_server_workers' } },
    );
  return count;
}

export function normalizationFor(
  options: Pick<ReplayOptions, 'nSamplesPerPrompt' | 'rolloutBatchSize'>,
): NormalizationConfig {
  // The recipe: `--advantage-estimator grpo`, reward and std normalisation left at their defaults (on).
  return {
    advantage_estimator: 'grpo',
    rewards_normalization: true,
    grpo_std_normalization: true,
    n_samples_per_prompt: options.nSamplesPerPrompt,
    rollout_batch_size: options.rolloutBatchSize,
  };
}

/** The samples op's picker: a planted one by its function name, else the profile's default by import path. */
function pickerName(options: Pick<ReplayOptions, 'sessionHooks'>, profile: MilesProfile): string {
  const planted = options.sessionHooks?.picker;
  if (planted !== undefined) return planted.name.length > 0 ? planted.name : '<picker>';
  return defaultPickerPath(profile.switches);
}

function interrupted(signal: AbortSignal): HarnessError {
  return new HarnessError('replay.interrupted', 'replay interrupted', { cause: signal.reason });
}

/**
 * Runs the replay end to end and returns the whole report with the steps' outcomes and check data (it
 * keeps every step: for tests and tools; `harness replay` uses `streamReplay`).
 */
export async function runReplay(options: ReplayOptions, hooks: ReplayHooks): Promise<ReplayRun> {
  const outcomes: StepOutcome[] = [];
  const report = await streamReplay(
    options,
    {
      ...hooks,
      onStep: (outcome) => {
        outcomes.push(outcome);
        hooks.onStep?.(outcome);
      },
    },
    new InMemoryReport(),
  );
  return { report, outcomes, checkData: checkDataFromOutcomes(outcomes, normalizationFor(options)) };
}

/**
 * Runs the replay end to end: starts the fake policy, session server and Harbor mock on free loopback
 * ports, plays `steps` rollout steps of `rollout_batch_size × n_samples_per_prompt` rollouts, turns each
 * into GRPO data and metrics, runs the invariant checks on it and hands its report section to `sink`,
 * then lets the step go: what stays across steps is the checks' evidence and a few facts per step
 * (`StepwiseChecks`). The frame (checks, verdict) goes to the sink at the end. The servers stop on
 * every exit path, including an abort of `hooks.signal`.
 */
export async function streamReplay<Result>(
  options: ReplayOptions,
  hooks: ReplayHooks,
  sink: ReplayReportSink<Result>,
): Promise<Result> {
  const prompts = await loadPrompts(options.prompts);
  const episodes = await episodesFor(options, prompts);
  if (hooks.signal.aborted) throw interrupted(hooks.signal);
  const normalization = normalizationFor(options);
  const profile = options.milesProfile ?? DEFAULT_MILES_PROFILE;
  const miles = options.miles ?? profile.switches;
  const workers = sessionServerWorkersFor(options, miles);
  const config: ReportConfig = {
    rollout_batch_size: options.rolloutBatchSize,
    n_samples_per_prompt: options.nSamplesPerPrompt,
    steps: options.steps,
    seed: options.seed,
    max_seq_len: options.maxSeqLen,
    prompts: options.prompts,
    episodes: episodesLabel(options),
    normalization,
    strict: options.strict ?? false,
    miles_profile: reportedMilesProfile(profile, pickerName(options, profile)),
  };
  const checks = new StepwiseChecks({
    n_samples_per_prompt: normalization.n_samples_per_prompt,
    rollout_batch_size: normalization.rollout_batch_size,
    normalization,
  });
  await sink.begin(config);
  const stack = await startReplayStack({
    episodes,
    maxConcurrent: Math.max(options.concurrency, 1),
    agentTimeoutS: options.agentTimeoutS,
    titoModel: options.titoModel,
    milesProfile: profile,
    ...(options.sessionHooks ? { sessionHooks: options.sessionHooks } : {}),
    ...(options.keepRequestMessages ? { keepRequestMessages: true } : {}),
    ...(options.sessionServer === undefined ? {} : { sessionServer: options.sessionServer }),
    sessionServerWorkers: workers,
  });
  hooks.onStarted?.({ policy: stack.policy.url, session: stack.session.url, harbor: stack.harbor.url });
  hooks.onStack?.(stack);
  const stopOnAbort = () => void stack.close();
  hooks.signal.addEventListener('abort', stopOnAbort, { once: true });
  // Only the fakes report their requests; with Miles' own server there is no routing to check.
  const affinity =
    stack.fakeSessionWorkers.length === 0
      ? null
      : new SessionAffinityMonitor(
          stack.fakeSessionWorkers.map((w) => ({ id: `${w.host}:${w.port}`, events: w.events })),
        );
  const instanceIds = stack.sessionServers.map((s) => s.instanceId);
  try {
    const ctx: RolloutContext = {
      sessions: sessionRouter(
        stack.sessionServers.map((s) => ({ client: createSessionClient(s.url), instanceId: s.instanceId })),
        options.seed,
      ),
      harborUrl: stack.harbor.url,
      modelName: options.modelName,
      samplingParams: recipeSamplingParams(options.maxResponseLen),
      maxSeqLen: options.maxSeqLen,
      trialTimeoutMs: options.trialTimeoutS * 1000,
      signal: hooks.signal,
      requestsFor: (sessionId) => stack.policy.log.byRoutingKey(sessionId),
      ...(options.plant === undefined ? {} : { plant: options.plant }),
    };
    const source = new PromptSource(prompts, options.seed);
    const limit = concurrencyLimit(options.concurrency);
    for (let step = 0; step < options.steps; step++) {
      const started = performance.now();
      const progress = stepProgress(
        hooks.progress,
        // Numbered as the summary and the JSON report number steps (from 0, like Miles' rollout ids).
        `step ${step} of ${options.steps}`,
        options.rolloutBatchSize * options.nSamplesPerPrompt,
      );
      const groups = await runRolloutStep(ctx, source, {
        rolloutBatchSize: options.rolloutBatchSize,
        nSamplesPerPrompt: options.nSamplesPerPrompt,
        limit,
        progress,
      });
      progress.done();
      if (hooks.signal.aborted) throw interrupted(hooks.signal);
      // The agent function's closing abort: every instance's trials flushed at the agent server.
      await flushSessionInstances(stack.harbor.url, instanceIds);
      stack.policy.log.clear();
      const processed = processStep(
        step,
        groups,
        normalization,
        Math.round(performance.now() - started),
        options.train,
        options.rolloutNumGpus ?? null,
        miles.rolloutMetrics,
      );
      const outcome: StepOutcome =
        affinity === null ? processed : { ...processed, sessionRouting: affinity.take() };
      checks.add({
        step: outcome.step,
        groups: outcome.groups,
        advantages: outcome.advantages,
        ...(outcome.sessionRouting === undefined ? {} : { session_routing: outcome.sessionRouting }),
      });
      await sink.addStep(reportStep(outcome));
      hooks.onStep?.(outcome);
    }
  } finally {
    hooks.signal.removeEventListener('abort', stopOnAbort);
    affinity?.dispose();
    await stack.close();
  }
  return sink.finish(reportFrame(checks.finish(), config));
}
