import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { HarnessError } from '../../common/errors.ts';
import { fsReason } from '../../common/fs-reason.ts';

/**
 * What `--dump-details DIR` makes Miles write (radixark/miles@31f1ca96 miles/utils/arguments.py, post-parse:
 * `save_debug_rollout_data`, `save_debug_train_data`, `save_debug_trajectory_data`, `save_debug_event_data`):
 * `rollout_data/{id}.pt` (`eval_{id}.pt` for evaluations), `train_data/{id}_{rank}.pt`,
 * `trajectory/{id}.jsonl`, `events/`, and the dashboard's `dashboard_columns/`.
 */
const ROLLOUT_FILE = /^(\d+)\.pt$/;
const EVAL_FILE = /^eval_(\d+)\.pt$/;
const TRAIN_FILE = /^(\d+)_(\d+)\.pt$/;
const TRAJECTORY_FILE = /^(\d+)\.jsonl$/;

/** One training step's files; any may be missing (the checker names what is). */
export interface StepFiles {
  readonly step: number;
  readonly rollout: string | null;
  /** Rank → file. */
  readonly train: ReadonlyMap<number, string>;
  readonly trajectory: string | null;
}

export interface DumpFolder {
  readonly dir: string;
  /** Every step any file names, in order. */
  readonly steps: readonly StepFiles[];
  /** Ranks seen in any step's train files: a step lacking one of them lacks a rank file. */
  readonly ranks: readonly number[];
  readonly evalFiles: number;
  /** Files and folders of the layout the folder has, for the report. */
  readonly found: readonly string[];
}

async function listNames(dir: string): Promise<string[] | null> {
  try {
    return await readdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

const EXPECTED =
  'a Miles --dump-details folder: rollout_data/<step>.pt, train_data/<step>_<rank>.pt, trajectory/<step>.jsonl (radixark/miles@31f1ca96 miles/utils/arguments.py dump_details)';

function folderError(dir: string, reason: string): HarnessError {
  return new HarnessError('config.dump_folder', `${dir}: ${reason}; expected ${EXPECTED}`, {
    details: { dir, reason },
  });
}

/**
 * Reads a dump-details folder's layout (names only; nothing is loaded). A folder that is not one (no
 * such folder, a file, or none of the three dump folders with a step file in them) is a usage error
 * naming what was expected.
 */
export async function scanDumpFolder(dir: string): Promise<DumpFolder> {
  const info = await stat(dir).catch((error: unknown) => {
    throw folderError(dir, fsReason(error));
  });
  if (!info.isDirectory()) throw folderError(dir, 'is not a folder');
  const steps = new Map<
    number,
    { rollout: string | null; train: Map<number, string>; trajectory: string | null }
  >();
  const stepOf = (n: number) => {
    let s = steps.get(n);
    if (!s) {
      s = { rollout: null, train: new Map(), trajectory: null };
      steps.set(n, s);
    }
    return s;
  };
  const found: string[] = [];
  let evalFiles = 0;
  const rolloutNames = await listNames(join(dir, 'rollout_data'));
  for (const name of rolloutNames ?? []) {
    const m = ROLLOUT_FILE.exec(name);
    if (m) stepOf(Number(m[1])).rollout = join(dir, 'rollout_data', name);
    else if (EVAL_FILE.test(name)) evalFiles += 1;
  }
  const ranks = new Set<number>();
  for (const name of (await listNames(join(dir, 'train_data'))) ?? []) {
    const m = TRAIN_FILE.exec(name);
    if (!m) continue;
    ranks.add(Number(m[2]));
    stepOf(Number(m[1])).train.set(Number(m[2]), join(dir, 'train_data', name));
  }
  for (const name of (await listNames(join(dir, 'trajectory'))) ?? []) {
    const m = TRAJECTORY_FILE.exec(name);
    if (m) stepOf(Number(m[1])).trajectory = join(dir, 'trajectory', name);
  }
  for (const sub of ['rollout_data', 'train_data', 'trajectory', 'events', 'dashboard_columns'])
    if ((await listNames(join(dir, sub))) !== null) found.push(`${sub}/`);
  if (steps.size === 0)
    throw folderError(
      dir,
      found.length === 0
        ? 'has none of rollout_data/, train_data/, trajectory/'
        : `has ${found.join(', ')} but no step file in them`,
    );
  const ordered = [...steps.entries()].sort(([a], [b]) => a - b).map(([step, files]) => ({ step, ...files }));
  return { dir, steps: ordered, ranks: [...ranks].sort((a, b) => a - b), evalFiles, found };
}
