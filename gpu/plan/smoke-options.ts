import { resolve } from 'node:path';
import { z } from 'zod';
import { HarnessError } from '../../common/errors.ts';
import { wholeNumber } from '../../common/whole-number.ts';
import {
  RECIPE_PARSE_OPTIONS,
  type RecipeEnv,
  type RecipeInput,
  recipeInputFromValues,
} from '../../recipe/builder.ts';
import { parseOptions } from '../../recipe/options.ts';
import { DEFAULT_MILES_ROOT } from '../../recipe/schema.ts';

/** The smoke command's own options; every recipe option (`--model-dir`, ...) is accepted too. */
const SmokeOptionsSchema = z.object({
  miles_root: z.string().min(1),
  gpus: z.int().positive(),
  nodes: z.int().positive(),
  output: z.string().min(1),
  timeout_s: z.int().positive(),
  grace_s: z.int().positive(),
  dry_run: z.boolean(),
  /** With --dry-run: print the plan as JSON. */
  json: z.boolean(),
  skip_prepare: z.boolean(),
  harbor_port: z.int().min(1).max(65_535),
  thresholds: z.string().min(1),
  keep_checkpoints: z.boolean(),
  min_free_disk_gib: z.number().nonnegative(),
  help: z.boolean(),
  /** Recipe fields given on the command line or as `MILES_SCRIPT_<FIELD>`, overriding the short-run defaults. */
  recipe: z.custom<RecipeInput>(),
});
export type SmokeOptions = z.infer<typeof SmokeOptionsSchema>;

const SMOKE_PARSE_OPTIONS = {
  ...RECIPE_PARSE_OPTIONS,
  gpus: { type: 'string' },
  nodes: { type: 'string' },
  output: { type: 'string' },
  timeout: { type: 'string' },
  grace: { type: 'string' },
  'dry-run': { type: 'boolean' },
  json: { type: 'boolean' },
  'harbor-port': { type: 'string' },
  thresholds: { type: 'string' },
  'keep-checkpoints': { type: 'boolean' },
  'min-free-disk-gib': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The recipe options the smoke command owns under its own names (`--gpus` is `num_gpus_per_node`). */
const OWNED_RECIPE_FIELDS = [
  'num_gpus_per_node',
  'num_nodes',
  'output_dir',
  'agent_server_url',
  'prompt_data',
];

function integer(raw: string | undefined, flag: string, fallback: number): number {
  if (raw === undefined) return fallback;
  const parsed = wholeNumber(flag, 1, Number.MAX_SAFE_INTEGER).safeParse(raw);
  if (!parsed.success)
    throw new HarnessError('usage.invalid_option_value', parsed.error.issues[0]!.message, {
      details: { option: flag, value: raw },
    });
  return parsed.data;
}

/** Smoke-run defaults: a long timeout (the prepare step converts a checkpoint) and Ray/SGLang's grace. */
export const SMOKE_DEFAULTS = {
  gpus: 8,
  nodes: 1,
  timeout_s: 3_600,
  grace_s: 30,
  harbor_port: 11_000,
  /** One checkpoint: Miles saves at the last step whatever the interval (should_run_periodic_action). */
  min_free_disk_gib: 200,
} as const;

/** Parses `harness smoke` argv; usage errors are `usage.*` (exit 2). */
export function parseSmokeOptions(
  argv: readonly string[],
  env: RecipeEnv,
  cwd: string,
  defaultThresholds: string,
): SmokeOptions {
  const { values } = parseOptions(argv, SMOKE_PARSE_OPTIONS);
  const v = values as Record<string, string | boolean | undefined>;
  for (const field of OWNED_RECIPE_FIELDS) {
    const flag = field.replaceAll('_', '-');
    if (v[flag] !== undefined)
      throw new HarnessError(
        'usage.option_owned_by_smoke',
        `--${flag} is set by the smoke run itself${field === 'num_gpus_per_node' ? ' (use --gpus)' : field === 'num_nodes' ? ' (use --nodes)' : field === 'output_dir' ? ' (use --output)' : ''}`,
        { details: { option: `--${flag}` } },
      );
  }
  const recipe = recipeInputFromValues(values, env) as Record<string, unknown>;
  for (const field of OWNED_RECIPE_FIELDS) delete recipe[field];
  const str = (k: string): string | undefined => (typeof v[k] === 'string' ? (v[k] as string) : undefined);
  const parsed = SmokeOptionsSchema.safeParse({
    miles_root: resolve(
      cwd,
      (recipe.miles_root as string | undefined) ?? env.MILES_ROOT ?? DEFAULT_MILES_ROOT,
    ),
    gpus: integer(str('gpus'), '--gpus', SMOKE_DEFAULTS.gpus),
    nodes: integer(str('nodes'), '--nodes', SMOKE_DEFAULTS.nodes),
    output: resolve(cwd, str('output') ?? '.smoke'),
    timeout_s: integer(str('timeout'), '--timeout', SMOKE_DEFAULTS.timeout_s),
    grace_s: integer(str('grace'), '--grace', SMOKE_DEFAULTS.grace_s),
    dry_run: v['dry-run'] === true,
    json: v.json === true,
    skip_prepare: (recipe.skip_prepare as boolean | undefined) ?? false,
    harbor_port: integer(str('harbor-port'), '--harbor-port', SMOKE_DEFAULTS.harbor_port),
    thresholds: resolve(cwd, str('thresholds') ?? defaultThresholds),
    keep_checkpoints: v['keep-checkpoints'] === true,
    min_free_disk_gib:
      str('min-free-disk-gib') === undefined
        ? SMOKE_DEFAULTS.min_free_disk_gib
        : Number(str('min-free-disk-gib')),
    help: v.help === true,
    recipe,
  });
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const option = `--${String(issue.path[0] ?? '')
      .replaceAll('_', '-')
      .replace(/-s$/, '')}`;
    throw new HarnessError('usage.invalid_option_value', `${option}: ${issue.message}`, {
      details: { option, issues: parsed.error.issues.map((i) => i.message) },
    });
  }
  return parsed.data;
}
