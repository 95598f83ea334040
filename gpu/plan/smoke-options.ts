import { resolve } from 'node:path';
import { z } from 'zod';
import { parseArgsOptions, readFlags, switchFlag, valueFlag } from '../../common/cli-flags.ts';
import { HarnessError } from '../../common/errors.ts';
import { wholeNumber } from '../../common/whole-number.ts';
import type { MilesProfile } from '../../contracts/miles-profile.ts';
import { milesProfileFlag } from '../../contracts/miles-profile-flag.ts';
import {
  RECIPE_PARSE_OPTIONS,
  type RecipeEnv,
  type RecipeInput,
  recipeInputFromValues,
} from '../../recipe/builder.ts';
import { parseOptions } from '../../recipe/options.ts';
import { DEFAULT_MILES_ROOT } from '../../recipe/schema.ts';

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

const count = (flag: string) => wholeNumber(flag, 1, Number.MAX_SAFE_INTEGER);

/** The smoke command's own flags; every recipe option (`--model-dir`, ...) is accepted too. */
export const SMOKE_FLAGS = {
  gpus: valueFlag(
    'N',
    count('--gpus').default(SMOKE_DEFAULTS.gpus),
    `GPUs per node (default ${SMOKE_DEFAULTS.gpus})`,
  ),
  nodes: valueFlag(
    'N',
    count('--nodes').default(SMOKE_DEFAULTS.nodes),
    `nodes, through Miles' own Ray setup (default ${SMOKE_DEFAULTS.nodes}; >1 needs MASTER_ADDR)`,
  ),
  output: valueFlag(
    'DIR',
    z.string().min(1).default('.smoke'),
    'where run folders go (default ./.smoke); each run gets <DIR>/<run_id>',
  ),
  timeout: valueFlag(
    'S',
    count('--timeout').default(SMOKE_DEFAULTS.timeout_s),
    `overall limit for the launcher in seconds (default ${SMOKE_DEFAULTS.timeout_s})`,
  ),
  grace: valueFlag(
    'S',
    count('--grace').default(SMOKE_DEFAULTS.grace_s),
    `SIGTERM to SIGKILL grace when stopping the process tree (default ${SMOKE_DEFAULTS.grace_s})`,
  ),
  'dry-run': switchFlag(
    'print the plan (commands, env with secrets redacted, ports, paths, thresholds); exit 0',
  ),
  json: switchFlag(
    "stdout carries only JSON: the plan (with --dry-run) or the run's report;\nthe launcher log and the text report go to stderr",
  ),
  thresholds: valueFlag(
    'FILE',
    z.string().min(1).optional(),
    'metric thresholds (default fixtures/smoke/thresholds.txt)',
  ),
  'harbor-port': valueFlag(
    'P',
    wholeNumber('--harbor-port', 1, 65_535).default(SMOKE_DEFAULTS.harbor_port),
    `port of the Harbor mock (default ${SMOKE_DEFAULTS.harbor_port})`,
  ),
  'keep-checkpoints': switchFlag('keep the checkpoint Miles saves at the last step (removed by default)'),
  'miles-profile': milesProfileFlag,
  'min-free-disk-gib': valueFlag(
    'N',
    z.coerce.number().nonnegative().default(SMOKE_DEFAULTS.min_free_disk_gib),
    `free disk needed under --output (default ${SMOKE_DEFAULTS.min_free_disk_gib})`,
  ),
};

/** What a smoke run is given: its flags, paths resolved, and the recipe fields that override the short run. */
export interface SmokeOptions {
  readonly miles_root: string;
  readonly gpus: number;
  readonly nodes: number;
  readonly output: string;
  readonly timeout_s: number;
  readonly grace_s: number;
  readonly dry_run: boolean;
  /** With --dry-run: print the plan as JSON. */
  readonly json: boolean;
  readonly skip_prepare: boolean;
  readonly harbor_port: number;
  readonly thresholds: string;
  readonly keep_checkpoints: boolean;
  readonly min_free_disk_gib: number;
  /** Which Miles the checkout is taken to be (`--miles-profile`): the plan names it, the dump checks hold under it. */
  readonly miles_profile: MilesProfile;
  readonly help: boolean;
  /** Recipe fields given on the command line or as `MILES_SCRIPT_<FIELD>`, overriding the short-run defaults. */
  readonly recipe: RecipeInput;
}

/** The recipe options the smoke command owns under its own names (`--gpus` is `num_gpus_per_node`). */
const OWNED_RECIPE_FIELDS = [
  'num_gpus_per_node',
  'num_nodes',
  'output_dir',
  'agent_server_url',
  'prompt_data',
];

/** Parses `harness smoke` argv; usage errors are `usage.*` (exit 2). */
export function parseSmokeOptions(
  argv: readonly string[],
  env: RecipeEnv,
  cwd: string,
  defaultThresholds: string,
): SmokeOptions {
  const { values } = parseOptions(argv, { ...RECIPE_PARSE_OPTIONS, ...parseArgsOptions(SMOKE_FLAGS) });
  const v = values as Record<string, unknown>;
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
  const flags = readFlags(SMOKE_FLAGS, v, 'smoke');
  return {
    miles_root: resolve(
      cwd,
      (recipe.miles_root as string | undefined) ?? env.MILES_ROOT ?? DEFAULT_MILES_ROOT,
    ),
    gpus: flags.gpus,
    nodes: flags.nodes,
    output: resolve(cwd, flags.output),
    timeout_s: flags.timeout,
    grace_s: flags.grace,
    dry_run: flags.dry_run,
    miles_profile: flags.miles_profile,
    json: flags.json,
    skip_prepare: (recipe.skip_prepare as boolean | undefined) ?? false,
    harbor_port: flags.harbor_port,
    thresholds: resolve(cwd, flags.thresholds ?? defaultThresholds),
    keep_checkpoints: flags.keep_checkpoints,
    min_free_disk_gib: flags.min_free_disk_gib,
    help: v.help === true,
    recipe: recipe as RecipeInput,
  };
}
