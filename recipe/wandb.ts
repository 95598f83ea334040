import { posix } from 'node:path';
import type { RecipeEnv } from './schema.ts';

/** The recipe's file in Miles; `get_default_wandb_args` names the W&B project after it. */
const RECIPE_FILE = 'examples/experimental/terminus-compaction/run.py';
const RECIPE_WANDB_PREFIX = 'terminus-compaction';

/**
 * `get_default_wandb_args(test_file, run_name_prefix, run_id)` (radixark/miles@31f1ca96
 * miles/utils/external_utils/command_utils.py) as argv entries: nothing unless WANDB_API_KEY is set and
 * non-empty; the project is `miles-<stem>`, or `miles-<parent>_<stem>` for a stem under 6 characters; the
 * group is the run id, `_<GITHUB_COMMIT_NAME>` appended when that variable is set (even empty), then the
 * prefix and `_` put in front. Miles single-quotes the key inside a bash string, so train.py receives
 * the bare key; here it is that bare key.
 */
export function defaultWandbArgs(
  testFile: string,
  runNamePrefix: string | undefined,
  runId: string,
  env: RecipeEnv,
): string[] {
  const key = env.WANDB_API_KEY;
  if (!key) return [];
  const { name: stem, dir } = posix.parse(testFile);
  const testName = stem.length < 6 ? `${posix.basename(dir)}_${stem}` : stem;
  let group = runId;
  if (env.GITHUB_COMMIT_NAME !== undefined) group += `_${env.GITHUB_COMMIT_NAME}`;
  if (runNamePrefix !== undefined) group = `${runNamePrefix}_${group}`;
  return [
    '--use-wandb',
    ...['--wandb-project', `miles-${testName}`],
    ...['--wandb-group', group],
    ...['--wandb-key', key],
    '--disable-wandb-random-suffix',
  ];
}

/** The recipe's own call: `get_default_wandb_args(__file__, run_name_prefix='terminus-compaction', run_id=...)`. */
export function terminusWandbArgs(runId: string, env: RecipeEnv): string[] {
  return defaultWandbArgs(RECIPE_FILE, RECIPE_WANDB_PREFIX, runId, env);
}
