import { type EpisodeScript, type EpisodeScriptInput, EpisodeScriptSchema } from '../episode-schema.ts';
import { type GeneratorParams, type GeneratorParamsInput, GeneratorParamsSchema } from './params.ts';
import { RandomSource } from './random-source.ts';
import { generateRolloutVariant, type PlannedRollout, type TaskProfile } from './rollout-variant.ts';

/**
 * The seeded episode generator: one script per task, `samples_per_task` variants (trial k of a task
 * plays variant k mod n, so a GRPO group of n trials plays the n rollouts drawn here). The same seed,
 * tasks and parameters give the same scripts, byte for byte.
 */

export interface GeneratedTask {
  readonly profile: TaskProfile;
  readonly rollouts: readonly PlannedRollout[];
  /** The script in input form (defaults not expanded): what `episodes generate` writes. */
  readonly script: EpisodeScriptInput;
}

/** A task's difficulty and length, drawn from the seed and its name only. */
function taskProfile(seed: number, name: string, params: GeneratorParams): TaskProfile {
  const rng = RandomSource.keyed(seed, 'task', name);
  const { unsolvable, trivial, a, b } = params.difficulty;
  const kind = rng.weighted([unsolvable, trivial, Math.max(0, 1 - unsolvable - trivial)]);
  const success = kind === 0 ? 0 : kind === 1 ? 1 : rng.kumaraswamy(a, b);
  const medianTurns = rng.logNormal(params.turns.median, params.turns.task_sigma);
  return { name, success, medianTurns };
}

function describe(profile: TaskProfile, rollouts: readonly PlannedRollout[]): string {
  const solved = rollouts.filter((r) => r.variant.reward === 1).length;
  const lines = rollouts.map((r, k) => {
    const parts = [`${r.turns} turns`, r.end, r.solved ? 'solves' : 'fails'];
    if (r.reasoning) parts.push('reasoning');
    if (r.compactions.length > 0) parts.push(`compactions ${r.compactions.join('+')}`);
    if (r.unwinds.length > 0) parts.push(`unwinds ${r.unwinds.join('+')}`);
    return `v${k}: ${parts.join(', ')}`;
  });
  return `Generated episode (success probability ${profile.success.toFixed(2)}, median ${profile.medianTurns.toFixed(0)} turns; ${solved}/${rollouts.length} planned rewards 1). ${lines.join('; ')}.`;
}

/** One task's script. */
export function generateTask(seed: number, name: string, params: GeneratorParams): GeneratedTask {
  const profile = taskProfile(seed, name, params);
  // `faults.uneven_group`, drawn from its own key so the rollouts' streams stay as they were.
  const { uneven_group: unevenRate } = params.faults;
  const uneven = unevenRate > 0 && RandomSource.keyed(seed, 'uneven', name).chance(unevenRate);
  const rollouts = Array.from({ length: params.samples_per_task }, (_, k) =>
    generateRolloutVariant(
      profile,
      params,
      RandomSource.keyed(seed, 'rollout', name, k),
      uneven ? (k === 0 ? 'compacts' : 'short') : null,
    ),
  );
  const first = rollouts[0]!;
  const script: EpisodeScriptInput = {
    instance_id: name,
    description: describe(profile, rollouts),
    instruction: `Terminal-Bench 2 task {instance_id}: solve it in /app; the verifier runs the task's tests when you mark it complete.`,
    context: {
      limit: params.context_limit,
      threshold: params.proactive_threshold,
      unwind_target: params.unwind_target,
    },
    reasoning: first.reasoning,
    turns: first.variant.turns ?? [],
    reward: first.variant.reward ?? 0,
    timeout_reward: 0,
    variants: rollouts.map((r) => r.variant),
  };
  return { profile, rollouts, script };
}

export interface GenerateOptions {
  readonly seed: number;
  /** Task names, in the order scripts are produced. */
  readonly tasks: readonly string[];
  readonly params?: GeneratorParamsInput;
}

/** Scripts for every task; each is validated against the episode schema. */
export function generateEpisodes(options: GenerateOptions): GeneratedTask[] {
  const params = GeneratorParamsSchema.parse(options.params ?? {});
  return options.tasks.map((name) => generateTask(options.seed, name, params));
}

/** The parsed form the Harbor mock plays. */
export function toEpisodeScripts(tasks: readonly GeneratedTask[]): EpisodeScript[] {
  return tasks.map((t) => EpisodeScriptSchema.parse(t.script));
}
