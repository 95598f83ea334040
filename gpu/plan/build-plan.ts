import { join } from 'node:path';
import { HarnessError } from '../../common/errors.ts';
import { DUMP_CONVERTER } from '../../miles-bridge/entry-points.ts';
import { buildRecipe, type RecipeEnv, resolveRecipeConfig } from '../../recipe/builder.ts';
import { derivePaths } from '../../recipe/derive.ts';
import { createRunId } from '../../recipe/run-id.ts';
import { MILES_LAYOUT } from '../preconditions/probe-miles-checkout.ts';
import type { Threshold } from '../thresholds/thresholds-file.ts';
import { launcherArgs } from './launcher-args.ts';
import { portsFromTrainArgv, RAY_PORTS } from './ports.ts';
import type { SmokeOptions } from './smoke-options.ts';
import type { SmokePlan } from './smoke-plan.ts';

/**
 * The short run: 2 rollout steps of 2 prompts × 4 samples, one optimizer step per rollout step (global
 * batch = 8 rollouts), no periodic checkpoint, short responses. Recipe options given on the command line
 * override these.
 */
export const SHORT_RUN = {
  num_rollout: 2,
  rollout_batch_size: 2,
  n_samples_per_prompt: 4,
  global_batch_size: 8,
  save_interval: 1_000,
  rollout_max_response_len: 2_048,
  agent_trial_timeout: 1_800,
  use_prometheus: false,
} as const;

/**
 * Terminus' summarization knobs for the mock's episodes (gpu/harbor/smoke-episode.ts): a context limit
 * well below the recipe's 32768 and a threshold that leaves 9000 estimated tokens of history before a
 * proactive summarization. The episode's large observations pass that, so every episode compacts; the
 * handed-off history (U0, questions prompt with the summary, questions, answers) stays under it even
 * with 2048-token replies, so it compacts about once rather than on every following turn.
 */
export const COMPACTION_TUNING = { context_limit: 16_000, summarize_threshold: 7_000 } as const;

/**
 * Harbor's trial timeout stays below the client's AGENT_TRIAL_TIMEOUT
 * (radixark/miles@31f1ca96 examples/swe-agent-harbor-docker/swe_agent_function.py).
 */
const AGENT_TIMEOUT_MARGIN_S = 300;

export interface PlanContext {
  readonly env: RecipeEnv;
  readonly now: Date;
  /** The harness checkout (for miles-bridge/convert_dumps.py). */
  readonly harnessRoot: string;
  readonly thresholds: readonly Threshold[];
  /** The task names the prompts use; each is played by the mock's tuned episode. */
  readonly taskNames: readonly string[];
}

const truthy = (v: string | undefined): boolean => v === '1' || v?.toLowerCase() === 'true';

/** Decides everything a smoke run will do. Recipe rule violations are `config.invalid` (exit 2). */
export function buildSmokePlan(options: SmokeOptions, ctx: PlanContext): SmokePlan {
  const runId = (options.recipe.run_id as string | undefined) ?? createRunId(ctx.now);
  const runDir = join(options.output, runId);
  const smokeDir = join(runDir, 'smoke');
  // Multi-node: Miles' rollout workers may run on any node, so the mock must listen where they reach it.
  const multiNode = options.nodes > 1;
  const host = multiNode ? ctx.env.MASTER_ADDR : '127.0.0.1';
  if (!host)
    throw new HarnessError(
      'config.master_addr_required',
      '--nodes > 1 needs MASTER_ADDR (the head node address Ray uses) so the Harbor mock can listen there',
    );
  const harborUrl = `http://${host}:${options.harbor_port}`;
  const config = resolveRecipeConfig(
    {
      ...SHORT_RUN,
      ...options.recipe,
      run_id: runId,
      output_dir: options.output,
      miles_root: options.miles_root,
      num_gpus_per_node: options.gpus,
      num_nodes: options.nodes,
      skip_prepare: options.skip_prepare,
      agent_server_url: harborUrl,
      prompt_data: join(smokeDir, 'prompts.jsonl'),
    },
    ctx.env,
    () => ctx.now,
  );
  const built = buildRecipe(config, ctx.env);
  const derived = derivePaths(config);
  const rolloutCount = config.rollout_batch_size * config.n_samples_per_prompt;
  const promptCount = config.rollout_batch_size * config.num_rollout;
  if (ctx.taskNames.length === 0)
    throw new HarnessError('config.no_tasks', 'no task names for the prompt data');
  const instanceIds = Array.from({ length: promptCount }, (_, i) => ctx.taskNames[i % ctx.taskNames.length]!);
  const externalRay = truthy(ctx.env.MILES_SCRIPT_EXTERNAL_RAY);
  return {
    run_id: runId,
    miles_root: options.miles_root,
    miles_profile: { name: options.miles_profile.name, commits: [...options.miles_profile.commits] },
    gpus_per_node: options.gpus,
    nodes: options.nodes,
    timeout_s: options.timeout_s,
    grace_s: options.grace_s,
    skip_prepare: options.skip_prepare,
    keep_checkpoints: options.keep_checkpoints,
    min_free_disk_gib: options.min_free_disk_gib,
    paths: {
      output_dir: options.output,
      run_dir: runDir,
      smoke_dir: smokeDir,
      log_file: join(smokeDir, 'launcher.log'),
      harbor_log: join(smokeDir, 'harbor.log'),
      plan_file: join(smokeDir, 'plan.json'),
      report_file: join(smokeDir, 'report.json'),
      prompt_data: config.prompt_data,
      details_dir: derived.save_traces_dir,
      checkpoints_dir: derived.save_dir,
      hf_checkpoint: derived.hf_checkpoint,
      ref_load: derived.ref_load,
    },
    harbor: {
      host,
      port: options.harbor_port,
      url: harborUrl,
      max_concurrent: rolloutCount,
      agent_timeout_s: Math.max(60, config.agent_trial_timeout - AGENT_TIMEOUT_MARGIN_S),
      ...COMPACTION_TUNING,
      instance_ids: instanceIds,
    },
    launcher: {
      command: 'python3',
      args: [join(options.miles_root, MILES_LAYOUT.launcher), ...launcherArgs(config)],
      cwd: options.miles_root,
      env: { PYTHONUNBUFFERED: '1', AGENT_SERVER_URL: harborUrl },
    },
    train: { groups: built.groups.map((g) => ({ name: g.name, argv: g.argv })), env: built.env },
    cleanup: externalRay
      ? []
      : [{ command: 'ray', args: ['stop', '--force'], cwd: options.miles_root, env: {} }],
    converter: {
      command: 'python3',
      // `harness check-run`'s converter: one process reading the .pt files step by step (replay/run-check).
      args: [DUMP_CONVERTER, '--serve', '--miles-root', options.miles_root],
      cwd: ctx.harnessRoot,
      env: {},
    },
    ports: [
      { port: options.harbor_port, purpose: 'Harbor mock' },
      ...portsFromTrainArgv(built.argv),
      ...(externalRay ? [] : RAY_PORTS),
    ],
    thresholds: {
      file: options.thresholds,
      expressions: ctx.thresholds.map((t) => t.expression),
    },
    variables: {
      num_rollout: config.num_rollout,
      rollout_batch_size: config.rollout_batch_size,
      n_samples_per_prompt: config.n_samples_per_prompt,
      rollout_count: rolloutCount,
      global_batch_size: config.global_batch_size,
      gpus_per_node: options.gpus,
      nodes: options.nodes,
    },
  };
}
