import { randomUUID } from 'node:crypto';
import { dirname } from 'node:path';
import { HarnessError } from '../../common/errors.ts';
import {
  DEFAULT_MILES_PROFILE,
  MILES_PROFILE_NAMES,
  type MilesProfile,
  milesProfileNamed,
} from '../../contracts/miles-profile.ts';
import type { GeneratorParamsInput } from '../../fakes/harbor/generator/params.ts';
import { DEFAULT_AGENT_TIMEOUT_S } from '../../fakes/harbor/harbor-options.ts';
import { qwen3TokenizerPath } from '../../fakes/tokenizer/qwen3-tokenizer.ts';
import type { TitoModel, TokenizerName } from '../../fakes/tokenizer/tito.ts';
import { profileForCheckout, readMilesCapabilities } from '../conformance/miles-capabilities.ts';
import { checkMilesRoot, startMilesServer } from '../conformance/miles-server.ts';
import type { ProgressSink } from '../driver/progress.ts';
import { loadPrompts } from '../driver/prompts.ts';
import { MAX_GROUPS_PER_BATCH_FACTOR } from '../driver/rollout-step.ts';
import { recipeSamplingParams } from '../driver/run-body.ts';
import { type StackSessionServer, startReplayStack } from '../driver/stack.ts';
import type { Rollout } from '../model/rollout.ts';
import { episodesFor, episodesLabel, runReplay } from '../run-replay.ts';
import { type Comparison, compareSides } from './compare.ts';
import { harnessSide } from './harness-side.ts';
import { milesRolloutArgs, RECIPE_SURFACE_OVERLAYS } from './miles-args.ts';
import { preflightMilesRollout, runMilesRollout } from './miles-rollout.ts';
import type { SideStep } from './side.ts';

/**
 * `harness differential`: the same steps, on identical inputs, once through Miles' own rollout path
 * (miles-bridge/rollout_driver.py) and once through the harness's driver, each against a fresh
 * stack of the same fakes playing the same episodes; then the comparison (compare.ts). docs/differential.md.
 */

export type SessionServerKind = 'fake' | 'miles';

export interface DifferentialOptions {
  readonly milesRoot: string;
  readonly python: string;
  readonly prompts: string;
  readonly episodes: readonly string[];
  readonly generated?: { readonly seed: number; readonly params?: GeneratorParamsInput };
  readonly rolloutBatchSize: number;
  readonly nSamplesPerPrompt: number;
  readonly steps: number;
  readonly seed: number;
  readonly concurrency: number;
  readonly sessionServer: SessionServerKind;
  /**
   * `qwen3`: both sides on Qwen3's real ids (the fakes' qwen3 family; Miles' rollout side loads the HF-equal
   * tokenizer with `--tito-model qwen3`, Miles' session server runs its qwen3 family). Default `toy`.
   */
  readonly tokenizer?: TokenizerName;
  /**
   * With `sessionServer: 'miles'`: the checkout (and its Python) whose session server runs, when it is not
   * `milesRoot`: a newer session server whose rollout side cannot be assembled in one tree
   * (docs/differential.md "A newer Miles"). Default: `milesRoot` and `python`.
   */
  readonly sessionServerRoot?: string;
  readonly sessionServerPython?: string;
  /** `--miles-profile`: refused when it contradicts the session server's checkout. */
  readonly milesProfile?: string;
  readonly signal: AbortSignal;
  readonly progress: ProgressSink;
  /** Test-only: rewrites each rollout of the harness's side (a planted divergence); no CLI flag sets it. */
  readonly plant?: (rollout: Rollout) => Rollout;
}

/** Facts a reader needs to read the differences, printed with every report. */
export const KNOWN_DIFFERENCES = [
  "refill: Miles' loop (inference_rollout_train.generate_rollout_async) answers a dropped group by drawing " +
    'over_sampling_batch_size (= rollout_batch_size) new groups at once, without bound, and aborts the ones ' +
    'still running once enough groups pass; the harness draws one group per dropped group, at most ' +
    `${MAX_GROUPS_PER_BATCH_FACTOR}x rollout_batch_size in a step. A step that drops a group can therefore ` +
    "train different groups on the two sides; the Miles side stops a step that would draw more than the harness's cap.",
] as const;

export interface DifferentialReport {
  readonly miles_root: string;
  readonly session_server: SessionServerKind;
  readonly tokenizer: TokenizerName;
  /** With `--session-server miles`: the checkout it ran from, and the profile its capabilities make it. */
  readonly session_server_root: string | null;
  /** The Miles profile the run held under (the fakes' switches; with Miles' server, its checkout's). */
  readonly miles_profile: { readonly name: string; readonly commits: readonly string[] };
  readonly seed: number;
  readonly steps: number;
  readonly rollout_batch_size: number;
  readonly n_samples_per_prompt: number;
  readonly episodes: readonly string[];
  /** What the differential wrote over the recipe's argv for Miles' side. */
  readonly miles_args_set: readonly string[];
  readonly replacements: readonly string[];
  readonly derived: readonly string[];
  readonly matched_samples: number;
  readonly differences: Comparison['differences'];
  readonly metrics: Comparison['metrics'];
  readonly known_differences: readonly string[];
  /** Wall time of each side's whole run (servers included) and per step, in seconds. */
  readonly wall_s: {
    readonly miles: number;
    readonly harness: number;
    readonly miles_steps: readonly number[];
    readonly harness_steps: readonly number[];
  };
}

/**
 * The TITO family both sides' servers use: on toy ids the recipe's glm47 with the fake, the toy's default
 * with Miles'; on Qwen3's ids the qwen3 family with either.
 */
function titoModelFor(kind: SessionServerKind, tokenizer: TokenizerName): TitoModel {
  if (tokenizer === 'qwen3') return 'qwen3';
  return kind === 'miles' ? 'default' : 'glm47';
}

/**
 * The Miles profile the run holds under: with Miles' session server its checkout's (a name given must
 * agree, miles-capabilities.ts), with the fake the name given, else the default. The fakes run under it.
 */
async function runProfile(options: DifferentialOptions, root: string, python: string): Promise<MilesProfile> {
  if (options.sessionServer === 'miles') {
    checkMilesRoot(root);
    return profileForCheckout(await readMilesCapabilities(root, python), options.milesProfile);
  }
  if (options.milesProfile === undefined) return DEFAULT_MILES_PROFILE;
  const named = milesProfileNamed(options.milesProfile);
  if (named === undefined)
    throw new HarnessError(
      'usage.invalid_option_value',
      `--miles-profile: unknown profile '${options.milesProfile}'; known: ${MILES_PROFILE_NAMES.join(', ')}`,
      { details: { option: '--miles-profile' } },
    );
  return named;
}

export async function runDifferential(options: DifferentialOptions): Promise<DifferentialReport> {
  const tokenizer = options.tokenizer ?? 'toy';
  const qwen3TokenizerDir = tokenizer === 'qwen3' ? dirname(qwen3TokenizerPath()) : undefined;
  await preflightMilesRollout(options.milesRoot, options.python, qwen3TokenizerDir);
  const serverRoot = options.sessionServerRoot ?? options.milesRoot;
  const serverPython = options.sessionServerPython ?? options.python;
  const profile = await runProfile(options, serverRoot, serverPython);
  const prompts = await loadPrompts(options.prompts);
  const episodes = await episodesFor(options, prompts);
  const titoModel = titoModelFor(options.sessionServer, tokenizer);
  const shape = {
    prompts: options.prompts,
    rolloutBatchSize: options.rolloutBatchSize,
    nSamplesPerPrompt: options.nSamplesPerPrompt,
    seed: options.seed,
    ...(qwen3TokenizerDir === undefined ? {} : { qwen3TokenizerDir }),
  };
  const sessionServerReplacements: string[] = [];
  const sessionServer =
    options.sessionServer === 'miles'
      ? async (backendUrl: string): Promise<StackSessionServer> => {
          const instanceId = randomUUID().replaceAll('-', '');
          const server = await startMilesServer({
            milesRoot: serverRoot,
            python: serverPython,
            backendUrl,
            vocabularyTraces: [],
            tokenizer,
            instanceId,
          });
          // Both sides start the same launcher: keep the last one's lines.
          sessionServerReplacements.length = 0;
          for (const r of [...server.replacements, ...server.adaptations]) sessionServerReplacements.push(r);
          const url = new URL(server.url);
          return {
            url: server.url,
            host: url.hostname,
            port: Number(url.port),
            instanceId,
            close: server.close,
          };
        }
      : undefined;

  // Miles' side: its rollout function against a fresh stack.
  const milesStarted = performance.now();
  const stack = await startReplayStack({
    episodes,
    maxConcurrent: options.concurrency,
    agentTimeoutS: DEFAULT_AGENT_TIMEOUT_S,
    titoModel,
    milesProfile: profile,
    ...(sessionServer === undefined ? {} : { sessionServer }),
  });
  const milesArgs = milesRolloutArgs(shape, stack.harbor.url);
  let milesSteps: readonly SideStep[];
  let replacements: readonly string[];
  let derived: readonly string[];
  try {
    const result = await runMilesRollout(
      options.milesRoot,
      options.python,
      {
        argv: milesArgs.argv,
        env: milesArgs.env,
        overlays: RECIPE_SURFACE_OVERLAYS,
        policyUrl: stack.policy.url,
        sessionUrl: stack.session.url,
        sessionServerInstanceId: stack.session.instanceId,
        harborUrl: stack.harbor.url,
        rolloutIds: Array.from({ length: options.steps }, (_, i) => i),
        chatRequestFields: Object.keys(recipeSamplingParams(milesArgs.config.rollout_max_response_len)),
        refillGuardGroups: options.rolloutBatchSize * MAX_GROUPS_PER_BATCH_FACTOR,
        ...(qwen3TokenizerDir === undefined ? {} : { qwen3TokenizerDir }),
      },
      options.signal,
    );
    milesSteps = result.steps;
    replacements = [...sessionServerReplacements.map((r) => `session server: ${r}`), ...result.replacements];
    derived = result.derived;
  } finally {
    await stack.close();
  }
  const milesWall = (performance.now() - milesStarted) / 1000;

  // The harness's side: its driver, the same episodes, a fresh stack.
  const harnessStarted = performance.now();
  const config = milesArgs.config;
  const run = await runReplay(
    {
      episodes: options.episodes,
      ...(options.generated === undefined ? {} : { generated: options.generated }),
      prompts: options.prompts,
      rolloutBatchSize: options.rolloutBatchSize,
      nSamplesPerPrompt: options.nSamplesPerPrompt,
      steps: options.steps,
      concurrency: options.concurrency,
      seed: options.seed,
      maxSeqLen: config.max_seq_len,
      maxResponseLen: config.rollout_max_response_len,
      modelName: config.agent_model_name,
      trialTimeoutS: config.agent_trial_timeout,
      agentTimeoutS: DEFAULT_AGENT_TIMEOUT_S,
      titoModel,
      milesProfile: profile,
      // Miles' derived --rollout-num-gpus under the colocated recipe (every GPU), as `harness replay` passes it.
      rolloutNumGpus: config.num_nodes * config.num_gpus_per_node,
      ...(options.plant === undefined ? {} : { plant: options.plant }),
      ...(sessionServer === undefined ? {} : { sessionServer }),
    },
    { signal: options.signal, progress: options.progress },
  );
  const harnessSteps: SideStep[] = [];
  for (const outcome of run.outcomes) harnessSteps.push(await harnessSide(outcome));
  const harnessWall = (performance.now() - harnessStarted) / 1000;

  const comparison = compareSides(harnessSteps, milesSteps, options.nSamplesPerPrompt);
  return {
    miles_root: options.milesRoot,
    session_server: options.sessionServer,
    tokenizer,
    session_server_root: options.sessionServer === 'miles' ? serverRoot : null,
    miles_profile: { name: profile.name, commits: profile.commits },
    seed: options.seed,
    steps: options.steps,
    rollout_batch_size: options.rolloutBatchSize,
    n_samples_per_prompt: options.nSamplesPerPrompt,
    episodes: episodesLabel(options),
    miles_args_set: milesArgs.set,
    replacements,
    derived,
    matched_samples: comparison.matchedSamples,
    differences: comparison.differences,
    metrics: comparison.metrics,
    known_differences: KNOWN_DIFFERENCES,
    wall_s: {
      miles: milesWall,
      harness: harnessWall,
      miles_steps: milesSteps.map((s) => s.wall_s),
      harness_steps: harnessSteps.map((s) => s.wall_s),
    },
  };
}
