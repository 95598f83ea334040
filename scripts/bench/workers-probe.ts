import { DEFAULT_MILES_PROFILE } from '../../contracts/miles-profile.ts';
import { resolveRecipeConfig } from '../../recipe/builder.ts';
import { recipeInputFromValues } from '../../recipe/options.ts';
import { DEFAULT_PROMPTS_FILE } from '../../replay/driver/prompts.ts';
import { runReplay } from '../../replay/run-replay.ts';

/**
 * One replay run of the recipe's step (4 prompts x 8 samples = 32 compacting rollouts, generated
 * episodes, the recipe's global batch) over N fake session-server workers, in this process: wall time of
 * the whole run, each step's time, and the process's peak RSS. Prints one JSON object. Started by
 * workers-bench.ts, a fresh process per run so the peak is this run's alone.
 *
 *   node scripts/bench/workers-probe.ts WORKERS [STEPS] [SEED]
 */

const MB = 1024 * 1024;
const [workersArg = '1', stepsArg = '1', seedArg = '42'] = process.argv.slice(2);
const workers = Number(workersArg);
const recipe = resolveRecipeConfig(recipeInputFromValues({}, {}), {});
const started = performance.now();
const run = await runReplay(
  {
    episodes: [],
    generated: { seed: Number(seedArg) },
    prompts: DEFAULT_PROMPTS_FILE,
    rolloutBatchSize: recipe.rollout_batch_size,
    nSamplesPerPrompt: recipe.n_samples_per_prompt,
    steps: Number(stepsArg),
    concurrency: 32,
    seed: Number(seedArg),
    maxSeqLen: recipe.max_seq_len,
    maxResponseLen: recipe.rollout_max_response_len,
    modelName: recipe.agent_model_name,
    trialTimeoutS: recipe.agent_trial_timeout,
    agentTimeoutS: 3600,
    titoModel: 'glm47',
    train: { global_batch_size: recipe.global_batch_size, dp_size: 1, allow_partial_train_step: false },
    rolloutNumGpus: recipe.num_nodes * recipe.num_gpus_per_node,
    // The workers exist only in a newer Miles: its switch on, every other switch the default profile's.
    miles: { ...DEFAULT_MILES_PROFILE.switches, sessionServerWorkers: workers > 1 },
    sessionServerWorkers: workers,
  },
  { signal: new AbortController().signal, progress: { write: () => true } },
);
const wallMs = performance.now() - started;
process.stdout.write(
  `${JSON.stringify({
    workers,
    wall_ms: Math.round(wallMs),
    step_ms: run.outcomes.map((o) => o.durationMs),
    rollouts: run.outcomes.map((o) => o.groups.reduce((n, g) => n + g.rollouts.length, 0)),
    verdict: run.report.verdict,
    // process.resourceUsage().maxRSS is in KiB: the peak resident set of this whole process.
    peak_rss_mb: Math.round(((process.resourceUsage().maxRSS * 1024) / MB) * 10) / 10,
  })}\n`,
);
