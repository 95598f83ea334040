import { readFile } from 'node:fs/promises';
import type { z } from 'zod';
import { parseJson } from '../../common/python-json/loads.ts';
import type { Converted, DumpConverter } from './dump-converter.ts';
import type { StepFiles } from './dump-folder.ts';
import {
  type RolloutDump,
  RolloutDumpSchema,
  type TrainDump,
  TrainDumpSchema,
  type TrajectoryRow,
  TrajectoryRowSchema,
} from './dump-schema.ts';
import type { RunProblem } from './report-schema.ts';

/** One step's dumps as read, with every problem met on the way (none of them stops the run). */
export interface ReadStep {
  readonly step: number;
  readonly rollout: RolloutDump | null;
  readonly train: readonly TrainDump[];
  readonly trajectory: readonly TrajectoryRow[];
  readonly nonFinite: number;
  readonly problems: readonly RunProblem[];
}

function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0];
  return issue ? `at '${issue.path.join('.')}': ${issue.message}` : 'invalid';
}

/**
 * What the checks never read, left out by the converter (float columns are the slowest part of a dump to
 * write and parse): the policy's log probabilities and routing, in samples and train rows.
 */
const OMIT = [
  'rollout_log_probs',
  'rollout_routed_experts',
  'rollout_indexer_topk',
  // The newer Sample's per-token fields (sii-avalanche/miles@4d412b5a miles/utils/types.py; None in the recipe).
  'rollout_topk_token_ids',
  'rollout_topk_log_probs',
  'rollout_sampling_mask',
  'opd_reverse_kl',
  'teacher_log_probs',
  'log_probs',
  'ref_log_probs',
  'values',
  'returns',
];

async function convertAs<S extends z.ZodType>(
  pending: Promise<Converted>,
  kind: 'rollout_data' | 'train_data',
  file: string,
  schema: S,
  step: number,
  problems: RunProblem[],
): Promise<{ doc: z.infer<S>; nonFinite: number } | null> {
  const converted = await pending;
  if (!converted.ok) {
    problems.push({ kind: 'unreadable_file', step, file, detail: `torch.load failed: ${converted.error}` });
    return null;
  }
  const parsed = schema.safeParse(converted.document);
  if (!parsed.success) {
    problems.push({
      kind: 'invalid_file',
      step,
      file,
      detail: `not Miles' ${kind} layout ${firstIssue(parsed.error)}`,
    });
    return null;
  }
  return { doc: parsed.data, nonFinite: converted.nonFinite };
}

async function readTrajectory(file: string, step: number, problems: RunProblem[]): Promise<TrajectoryRow[]> {
  const rows: TrajectoryRow[] = [];
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    problems.push({ kind: 'unreadable_file', step, file, detail: String(error) });
    return rows;
  }
  text.split('\n').forEach((line, i) => {
    if (line.trim() === '') return;
    let value: unknown;
    try {
      value = parseJson(line);
    } catch (error) {
      problems.push({
        kind: 'invalid_trajectory_row',
        step,
        file,
        detail: `line ${i + 1} is not JSON: ${(error as Error).message}`,
      });
      return;
    }
    const parsed = TrajectoryRowSchema.safeParse(value);
    if (parsed.success) rows.push(parsed.data);
    else
      problems.push({
        kind: 'invalid_trajectory_row',
        step,
        file,
        detail: `line ${i + 1} ${firstIssue(parsed.error)}`,
      });
  });
  return rows;
}

/**
 * Reads one step: its rollout dump, each rank's train dump (a rank the run has elsewhere but this step
 * lacks is a `missing_rank_file`) and its trajectory rows (a row naming no dumped sample is a
 * `trajectory_row_without_sample`).
 */
export async function readStep(
  converter: DumpConverter,
  files: StepFiles,
  ranks: readonly number[],
  expectedRollout: string,
): Promise<ReadStep> {
  const { step } = files;
  // Every request of the step goes out at once; the converter answers them in order.
  const rolloutPending =
    files.rollout === null ? null : converter.convert('rollout_data', files.rollout, OMIT);
  const trainPending = ranks.map((rank) => {
    const file = files.train.get(rank);
    return { rank, file, pending: file === undefined ? null : converter.convert('train_data', file, OMIT) };
  });
  const problems: RunProblem[] = [];
  let nonFinite = 0;
  let rollout: RolloutDump | null = null;
  if (files.rollout === null || rolloutPending === null)
    problems.push({
      kind: 'missing_rollout_file',
      step,
      file: expectedRollout,
      detail: 'the step has train or trajectory files but no rollout dump',
    });
  else {
    const got = await convertAs(
      rolloutPending,
      'rollout_data',
      files.rollout,
      RolloutDumpSchema,
      step,
      problems,
    );
    if (got && got.doc.rollout_id !== step)
      problems.push({
        kind: 'invalid_file',
        step,
        file: files.rollout,
        detail: `its rollout_id is ${JSON.stringify(got.doc.rollout_id)}, not the step ${step} its name says`,
      });
    else if (got) {
      rollout = got.doc;
      nonFinite += got.nonFinite;
    }
  }
  const train: TrainDump[] = [];
  for (const { rank, file, pending } of trainPending) {
    if (file === undefined || pending === null) {
      problems.push({
        kind: 'missing_rank_file',
        step,
        file: `train_data/${step}_${rank}.pt`,
        detail: `rank ${rank} has train dumps in other steps but none for step ${step}`,
      });
      continue;
    }
    const got = await convertAs(pending, 'train_data', file, TrainDumpSchema, step, problems);
    if (got) {
      train.push(got.doc);
      nonFinite += got.nonFinite;
    }
  }
  const trajectory = files.trajectory === null ? [] : await readTrajectory(files.trajectory, step, problems);
  if (rollout !== null && files.trajectory !== null) {
    // Siblings share their index: a key has as many rows as samples at most (lost-branches.ts).
    const samplesPerKey = new Map<string, number>();
    for (const s of rollout.samples) {
      const key = `${s.group_index}:${s.index}`;
      samplesPerKey.set(key, (samplesPerKey.get(key) ?? 0) + 1);
    }
    const rowsPerKey = new Map<string, number>();
    for (const row of trajectory) {
      const key = `${row.group_index}:${row.sample_index}`;
      // The newer writer names the row's sample (`sample_occurrence`, 0-based); 31f1ca96's rows count up.
      const seen =
        row.sample_occurrence === undefined ? (rowsPerKey.get(key) ?? 0) + 1 : row.sample_occurrence + 1;
      rowsPerKey.set(key, seen);
      if (seen > (samplesPerKey.get(key) ?? 0))
        problems.push({
          kind: 'trajectory_row_without_sample',
          step,
          file: files.trajectory,
          detail: `row ${seen} of sample index ${row.sample_index} (group ${row.group_index}): the step's rollout dump has ${samplesPerKey.get(key) ?? 0} samples with that index`,
        });
    }
  }
  return { step, rollout, train, trajectory, nonFinite, problems };
}
