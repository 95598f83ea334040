import { buildRecipe, type RecipeConfig, resolveRecipeConfig } from '../../recipe/builder.ts';

/**
 * Miles' side of the differential is configured by the typed recipe, never by a second list: the recipe's
 * own argv and env (recipe/), with the values the differential sets for this run written over the
 * recipe's (the prompt file, the batch shape, the seed). The Python driver parses that argv with the CLI
 * surface's argparse records; every flag the recipe does not pass keeps Miles' argparse default.
 */

/** The overlay whose flags the recipe passes (`--session-server-workers`; README "drift guard"). */
export const RECIPE_SURFACE_OVERLAYS = ['e4178aa9'] as const;

export interface DifferentialShape {
  readonly prompts: string;
  readonly rolloutBatchSize: number;
  readonly nSamplesPerPrompt: number;
  /** `--rollout-seed`: Miles' Dataset shuffle seed, the harness's `--seed`. */
  readonly seed: number;
  /** `qwen3`: Qwen3's tokenizer directory, whose model family the recipe's argv is switched to. */
  readonly qwen3TokenizerDir?: string;
}

/**
 * The recipe is GLM-4.7's; it has no Qwen3 spelling. On Qwen3's ids the flags that name the model family
 * are written over: the checkpoint Miles loads its tokenizer from, `--tito-model qwen3`, and the sglang
 * parsers Miles binds to that family (radixark/miles@31f1ca96 miles/utils/chat_template_utils/
 * tito_tokenizer.py `Qwen3TITOTokenizer`: reasoning_parser "qwen3", tool_call_parser "qwen25";
 * `resolve_reasoning_and_tool_call_parser` refuses other values beside the family).
 */
function qwen3Family(tokenizerDir: string): readonly (readonly [string, string])[] {
  return [
    ['--hf-checkpoint', tokenizerDir],
    ['--tito-model', 'qwen3'],
    ['--sglang-reasoning-parser', 'qwen3'],
    ['--sglang-tool-call-parser', 'qwen25'],
  ];
}

export interface MilesRolloutArgs {
  readonly config: RecipeConfig;
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** `--flag value` pairs this run wrote over (or added to) the recipe's argv, for the report. */
  readonly set: readonly string[];
}

/** A fixed run id: the argv must not change from one run to the next (it names output paths only). */
const RUN_ID = '000000-000000-000';

function withValue(argv: string[], flag: string, value: string, set: string[]): void {
  const at = argv.indexOf(flag);
  if (at >= 0) argv[at + 1] = value;
  else argv.push(flag, value);
  set.push(`${flag} ${value}`);
}

export function milesRolloutArgs(shape: DifferentialShape, harborUrl: string): MilesRolloutArgs {
  const config = resolveRecipeConfig(
    {
      run_id: RUN_ID,
      prompt_data: shape.prompts,
      rollout_batch_size: shape.rolloutBatchSize,
      n_samples_per_prompt: shape.nSamplesPerPrompt,
      // The recipe's relation: one optimizer step per rollout step.
      global_batch_size: shape.rolloutBatchSize * shape.nSamplesPerPrompt,
    },
    {},
  );
  const built = buildRecipe(config, {});
  const argv = [...built.argv];
  const set: string[] = [];
  withValue(argv, '--rollout-seed', String(shape.seed), set);
  if (shape.qwen3TokenizerDir !== undefined)
    for (const [flag, value] of qwen3Family(shape.qwen3TokenizerDir)) withValue(argv, flag, value, set);
  // The recipe's PYTHONPATH names the example directory inside its image; the driver uses the checkout's.
  const { PYTHONPATH: _imagePath, ...env } = built.env;
  return { config, argv, env: { ...env, AGENT_SERVER_URL: harborUrl }, set };
}
