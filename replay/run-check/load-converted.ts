import { readdir, readFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { z } from 'zod';
import { HarnessError } from '../../common/errors.ts';
import { parseJson } from '../../common/python-json/loads.ts';
import {
  type ConvertedDumps,
  type RolloutDump,
  RolloutDumpSchema,
  type TrainDump,
  TrainDumpSchema,
} from './dump-schema.ts';

async function listJson(dir: string): Promise<string[]> {
  try {
    return (await readdir(dir)).filter((n) => n.endsWith('.json')).map((n) => join(dir, n));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

async function readDocument<S extends z.ZodType>(path: string, schema: S): Promise<z.infer<S>> {
  let raw: unknown;
  try {
    raw = parseJson(await readFile(path, 'utf8'));
  } catch (error) {
    throw new HarnessError('dumps.unreadable', `cannot read converted dump ${path}`, {
      details: { file: path },
      cause: error,
    });
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue ? issue.path.join('.') : '';
    throw new HarnessError(
      'dumps.invalid',
      `converted dump ${path} does not have Miles' layout at '${where}': ${issue?.message ?? 'invalid'}`,
      { details: { file: path, path: where } },
    );
  }
  return parsed.data;
}

/**
 * Eval dumps are `rollout_data/eval_<N>.pt` (converted to `eval_<N>.json`) and carry the plain integer
 * step as `rollout_id` (radixark/miles@31f1ca96 miles/ray/rollout/debug_data.py: save_debug_rollout_data
 * prefixes only the file name), so only the file name tells them from training step N.
 */
function isEvalDumpFile(path: string): boolean {
  return basename(path).startsWith('eval_');
}

/**
 * Loads the converter's output folder (`rollout_data/*.json`, `train_data/*.json`), validated against
 * the dump schema and ordered by step (and rank). Eval dumps are left out: the checks are about training.
 */
export async function loadConvertedDumps(dir: string): Promise<ConvertedDumps> {
  const rolloutFiles = await listJson(join(dir, 'rollout_data'));
  const trainFiles = await listJson(join(dir, 'train_data'));
  if (rolloutFiles.length === 0)
    throw new HarnessError('dumps.missing', `no converted rollout dumps under ${join(dir, 'rollout_data')}`, {
      details: { dir },
    });
  const rollout: RolloutDump[] = [];
  for (const file of rolloutFiles) {
    if (isEvalDumpFile(file)) continue;
    const doc = await readDocument(file, RolloutDumpSchema);
    if (typeof doc.rollout_id !== 'number')
      throw new HarnessError(
        'dumps.invalid',
        `converted dump ${file} is a training dump but its rollout_id is ${JSON.stringify(doc.rollout_id)}, not a step number`,
        { details: { file, path: 'rollout_id' } },
      );
    rollout.push(doc);
  }
  const train: TrainDump[] = [];
  for (const file of trainFiles) train.push(await readDocument(file, TrainDumpSchema));
  rollout.sort((a, b) => Number(a.rollout_id) - Number(b.rollout_id));
  train.sort((a, b) => a.rollout_id - b.rollout_id || a.rank - b.rank);
  return { rollout, train };
}
