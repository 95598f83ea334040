import { posix } from 'node:path';
import { createRunId } from '../run-id.ts';

/**
 * The run id a recorded recipe was built with, read back from the flags the recipe derives from it:
 * `--prometheus-run-name <run_id>`, else the folder above `--dump-details <output_dir>/<run_id>/details`
 * or `--save <output_dir>/<run_id>/checkpoints` (recipe/argv-groups.ts, recipe/derive.ts).
 */
function recordedRunId(argv: readonly string[]): string | undefined {
  const valueAfter = (flag: string): string | undefined => {
    const i = argv.lastIndexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const prometheus = valueAfter('--prometheus-run-name');
  if (prometheus) return prometheus;
  for (const [flag, leaf] of [
    ['--dump-details', 'details'],
    ['--save', 'checkpoints'],
  ] as const) {
    const path = valueAfter(flag);
    if (path && posix.basename(path) === leaf) return posix.basename(posix.dirname(path));
  }
  return undefined;
}

/** Whether options (or the env's `MILES_SCRIPT_RUN_ID`) already name the run id. */
function namesRunId(options: readonly string[], env: Readonly<Record<string, string | undefined>>): boolean {
  return (
    env.MILES_SCRIPT_RUN_ID !== undefined ||
    options.some((o) => o === '--run-id' || o.startsWith('--run-id='))
  );
}

/**
 * The options every builder and python side of one diff shares: `--run-id <id>` first unless the shared
 * options or the env name one, so both sides derive `--save`, `--dump-details` and the Prometheus and
 * W&B names from the same id instead of each making its own timestamped id. The id is a recorded side's
 * own when there is one (so a builder matches a recorded launch), else one fresh `create_run_id()`. A
 * side's bracketed options come after these, so a side that sets its own `--run-id` still wins.
 */
export function withSharedRunId(
  shared: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  recorded: readonly (readonly string[])[],
  now: () => string = createRunId,
): string[] {
  if (namesRunId(shared, env)) return [...shared];
  const fromRecord = recorded.map(recordedRunId).find((id) => id !== undefined);
  return ['--run-id', fromRecord ?? now(), ...shared];
}
