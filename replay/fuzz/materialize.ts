import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_MILES_PROFILE, type MilesProfile } from '../../contracts/miles-profile.ts';
import { generateTask } from '../../fakes/harbor/generator/generate.ts';
import {
  type GeneratorParamsInput,
  GeneratorParamsSchema,
  QWEN3_TOOL_CALL_RATE,
} from '../../fakes/harbor/generator/params.ts';
import { writeEpisodeScripts } from '../../fakes/harbor/generator/write-scripts.ts';
import { recipeFamily, type TokenizerName } from '../../fakes/tokenizer/tito.ts';
import type { ReplayOptions } from '../run-replay.ts';
import { type FuzzBatch, fuzzGeneratorParams } from './batch.ts';
import { type FaultCensus, faultCensus } from './fault-census.ts';

/** The replay seed of every fuzz case: each group has its own prompt, so the order does not matter. */
const FUZZ_REPLAY_SEED = 1;

export interface MaterializedBatch {
  /** The script files, one per group. */
  readonly episodes: string[];
  readonly prompts: string;
  readonly options: ReplayOptions;
  /** The shell command that replays the batch with `harness replay`. */
  readonly command: string;
  /** The catalogue fault kinds the batch's episodes carry (fault-census.ts). */
  readonly faults: FaultCensus;
}

/**
 * A group's task follows from its own seed, not its position, so removing a group while shrinking
 * leaves the others' episodes as they were. Repeated names get a `-<k>` suffix.
 */
function taskNames(seeds: readonly number[], tasks: readonly string[]): string[] {
  const seen = new Map<string, number>();
  return seeds.map((seed) => {
    const base = tasks[seed % tasks.length]!;
    const k = seen.get(base) ?? 0;
    seen.set(base, k + 1);
    return k === 0 ? base : `${base}-${k}`;
  });
}

function shellQuote(text: string): string {
  return /^[A-Za-z0-9_./=:-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`;
}

/**
 * Writes a batch as ordinary episode scripts plus a prompt file into `dir`, and returns the replay
 * options and the equivalent `harness replay` command (the recipe's max_seq_len and response limit
 * set through `MILES_SCRIPT_*`, as `harness replay` reads them).
 */
export async function materializeBatch(
  batch: FuzzBatch,
  dir: string,
  tasks: readonly string[],
  overrides: GeneratorParamsInput = {},
  tokenizer: TokenizerName = 'toy',
  milesProfile: MilesProfile = DEFAULT_MILES_PROFILE,
): Promise<MaterializedBatch> {
  const params = GeneratorParamsSchema.parse(
    fuzzGeneratorParams(
      batch,
      tokenizer === 'qwen3' ? { tool_call_rate: QWEN3_TOOL_CALL_RATE, ...overrides } : overrides,
    ),
  );
  const generated = taskNames(batch.groupSeeds, tasks).map((name, g) =>
    generateTask(batch.groupSeeds[g]!, name, params),
  );
  const episodes = await writeEpisodeScripts(
    dir,
    generated.map((t) => t.script),
  );
  const prompts = join(dir, 'prompts.jsonl');
  await writeFile(
    prompts,
    generated
      .map((t) =>
        JSON.stringify({
          prompt: t.profile.name,
          metadata: { instance_id: t.profile.name, agent_name: 'terminus-2' },
        }),
      )
      .join('\n')
      .concat('\n'),
  );
  const groups = batch.groupSeeds.length;
  const options: ReplayOptions = {
    episodes,
    prompts,
    rolloutBatchSize: groups,
    nSamplesPerPrompt: batch.samples,
    steps: 1,
    concurrency: 32,
    seed: FUZZ_REPLAY_SEED,
    maxSeqLen: params.context_limit,
    maxResponseLen: params.response_limit,
    modelName: 'model',
    trialTimeoutS: 7200,
    agentTimeoutS: 3600,
    titoModel: recipeFamily(tokenizer),
    milesProfile,
  };
  const command = [
    `MILES_SCRIPT_MAX_SEQ_LEN=${params.context_limit}`,
    `MILES_SCRIPT_ROLLOUT_MAX_RESPONSE_LEN=${params.response_limit}`,
    'npx harness replay',
    '--episodes',
    ...episodes.map(shellQuote),
    '--prompts',
    shellQuote(prompts),
    '--rollout-batch-size',
    String(groups),
    '--n-samples-per-prompt',
    String(batch.samples),
    '--seed',
    String(FUZZ_REPLAY_SEED),
    ...(tokenizer === 'qwen3' ? ['--tokenizer', 'qwen3'] : []),
    ...(milesProfile === DEFAULT_MILES_PROFILE ? [] : ['--miles-profile', milesProfile.name]),
  ].join(' ');
  return { episodes, prompts, options, command, faults: faultCensus(generated, batch.samples) };
}
