import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { HarnessError } from '../../common/errors.ts';
import { fsReason } from '../../common/fs-reason.ts';
import { parseJson } from '../../common/python-json/loads.ts';
import { TrajectoryRowSchema } from '../run-check/dump-schema.ts';
import { traceFromTrajectoryRow } from './import-trajectory.ts';

export interface ImportResult {
  readonly written: string[];
  /** Rows that were not JSON or not a trajectory row, or had no assistant message: file, line, why. */
  readonly skipped: { file: string; line: number; reason: string }[];
}

/** The `.jsonl` files to read: a dump-details folder's `trajectory/`, a folder of them, or one file. */
async function trajectoryFiles(source: string): Promise<string[]> {
  const info = await stat(source).catch((error: unknown) => {
    throw new HarnessError('config.input_unreadable', `trace import: ${source}: ${fsReason(error)}`, {
      details: { path: source, reason: fsReason(error) },
    });
  });
  if (info.isFile()) return [source];
  const sub = join(source, 'trajectory');
  const dir = (await stat(sub).catch(() => null))?.isDirectory() ? sub : source;
  const files = (await readdir(dir)).filter((n) => n.endsWith('.jsonl')).sort();
  if (files.length === 0)
    throw new HarnessError(
      'config.input_unreadable',
      `trace import: ${source}: no trajectory/<step>.jsonl files; expected a Miles --dump-details folder or its trajectory rows`,
      { details: { path: source, reason: 'no .jsonl files' } },
    );
  return files.map((n) => join(dir, n));
}

/**
 * Writes one `session-trace/1` file per trajectory row under `out`, named
 * `<step>-g<group_index>-s<sample_index>-<k>.json` (k: the row's place among the rollout's samples), for `harness trace replay` and `harness conformance`.
 */
export async function importTrajectories(source: string, out: string): Promise<ImportResult> {
  const result: ImportResult = { written: [], skipped: [] };
  await mkdir(out, { recursive: true });
  for (const file of await trajectoryFiles(source)) {
    const step = basename(file, '.jsonl');
    // Siblings share their sample index: the k-th row of an index is its k-th sample (lost-branches.ts).
    const ordinals = new Map<string, number>();
    const lines = (await readFile(file, 'utf8')).split('\n');
    for (const [i, line] of lines.entries()) {
      if (line.trim() === '') continue;
      let row: unknown;
      try {
        row = parseJson(line);
      } catch (error) {
        result.skipped.push({ file, line: i + 1, reason: `not JSON: ${(error as Error).message}` });
        continue;
      }
      const parsed = TrajectoryRowSchema.safeParse(row);
      if (!parsed.success) {
        result.skipped.push({ file, line: i + 1, reason: parsed.error.issues[0]?.message ?? 'invalid' });
        continue;
      }
      const trace = traceFromTrajectoryRow(parsed.data);
      if (trace === null) {
        result.skipped.push({ file, line: i + 1, reason: 'no assistant message' });
        continue;
      }
      const key = `g${parsed.data.group_index}-s${parsed.data.sample_index}`;
      // The newer writer names the row's place (`sample_occurrence`); 31f1ca96's rows count up.
      const k = parsed.data.sample_occurrence ?? ordinals.get(key) ?? 0;
      ordinals.set(key, k + 1);
      const target = join(out, `${step}-${key}-${k}.json`);
      await writeFile(target, `${JSON.stringify(trace, null, 1)}\n`);
      result.written.push(target);
    }
  }
  return result;
}
