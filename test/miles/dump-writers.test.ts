import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trainRolloutId } from '../../replay/grpo/loss-weights.ts';
import { buildTrainSchedule, type TrainScheduleConfig } from '../../replay/grpo/train-schedule.ts';
import type { ReplaySample } from '../../replay/model/sample.ts';
import { loadConvertedDumps } from '../../replay/run-check/load-converted.ts';
import type { MetricPoint } from '../../replay/run-check/log/metric-table.ts';
import { overallVerdict, validateDumps } from '../../replay/run-check/validate-dumps.ts';
import { type ReplayRun, runReplay } from '../../replay/run-replay.ts';
import { messagesOf, milesSample } from '../../replay/testing/miles-dumps.ts';
import { workedExampleRows } from '../../replay/testing/worked-example.ts';
import { milesGate } from './gate.ts';

// Miles' own dump writers on CPU (miles-bridge/dumps/write_dumps.py imports them from MILES_ROOT):
// replay rollouts -> save_debug_rollout_data / convert_samples_to_train_data / the DP split /
// process_rollout_data_shard / save_debug_train_data_for_rank -> miles-bridge/convert_dumps.py -> the smoke
// validator. Miles' schedule decisions are the oracle for the replay's train schedule.

const ROOT = new URL('../../', import.meta.url).pathname;
const WRITER = join(ROOT, 'miles-bridge/dumps/write_dumps.py');
const CONVERTER = join(ROOT, 'miles-bridge/convert_dumps.py');

const gate = await milesGate({ torch: true });
const ready = gate.unmet.length === 0;
if (!ready && !gate.required)
  console.warn(
    `[skip] miles dump writers: ${gate.unmet.join('; ')} (HARNESS_MILES_REQUIRED=1 fails instead)`,
  );

interface MilesStep {
  readonly rollout_id: number;
  readonly mode: 'rollout_side' | 'legacy' | null;
  readonly num_rollouts: number[] | null;
  readonly partitions: number[][] | null;
  readonly error: string | null;
}

async function writeWithMiles(
  input: unknown,
  dir: string,
): Promise<{ steps: MilesStep[]; replaced: [string, string][] }> {
  if (!ready) throw new Error(`HARNESS_MILES_REQUIRED=1 but: ${gate.unmet.join('; ')}`);
  const inputFile = join(dir, 'input.json');
  await writeFile(inputFile, JSON.stringify(input));
  const result = await execa(
    gate.python,
    [WRITER, '--miles-root', gate.milesRoot, '--input', inputFile, '--details', join(dir, 'details')],
    { reject: false },
  );
  expect(result.exitCode, result.stderr).toBe(0);
  return JSON.parse(result.stdout);
}

const TRAIN: TrainScheduleConfig = { global_batch_size: 3, dp_size: 2, allow_partial_train_step: false };

describe.skipIf(!ready && !gate.required)('Miles dump writers on CPU', () => {
  let dir: string;
  let run: ReplayRun;
  let miles: { steps: MilesStep[]; replaced: [string, string][] };

  beforeAll(async () => {
    if (!ready) throw new Error(`HARNESS_MILES_REQUIRED=1 but: ${gate.unmet.join('; ')}`);
    dir = await mkdtemp(join(tmpdir(), 'miles-dumps-'));
    // 2 steps x 2 prompts x 2 rollouts of the bundled (compacting) episodes; global batch size 3 of
    // 4 rollouts: one optimizer step and one dropped rollout per step.
    run = await runReplay(
      {
        episodes: [],
        prompts: join(ROOT, 'fixtures/prompts/tb2-89.jsonl'),
        rolloutBatchSize: 2,
        nSamplesPerPrompt: 2,
        steps: 2,
        concurrency: 4,
        seed: 3,
        maxSeqLen: 32768,
        maxResponseLen: 8192,
        modelName: 'model',
        trialTimeoutS: 120,
        agentTimeoutS: 120,
        titoModel: 'glm47',
        train: TRAIN,
        // merge.py's metadata["messages"] comes from the leaf's last request: keep the text.
        keepRequestMessages: true,
      },
      { signal: new AbortController().signal, progress: { write: () => true } },
    );
    const steps = run.outcomes.map((outcome) => ({
      rollout_id: outcome.step,
      groups: outcome.groups
        .filter((g) => g.dropped === null)
        .map((g) => g.rollouts.map((r) => r.samples.map((s) => milesSample(s, messagesOf(r, s))))),
    }));
    const evalSamples = run.outcomes[0]!.rows.slice(0, 2).map((s) => milesSample(s, null));
    miles = await writeWithMiles(
      {
        args: { ...TRAIN, n_samples_per_prompt: 2, rollout_batch_size: 2 },
        steps,
        eval: [{ rollout_id: 0, name: 'tb2', samples: evalSamples }],
      },
      dir,
    );
  }, 120_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('names every module it replaced, and why', () => {
    for (const [name, why] of miles.replaced) {
      expect(name).toMatch(/^(ray|miles\.)/);
      expect(why.length).toBeGreaterThan(20);
    }
  });

  it("writes Miles' dump layout: rollout_data, eval, train shards per rank, trajectory", async () => {
    const details = join(dir, 'details');
    expect((await readdir(join(details, 'rollout_data'))).sort()).toEqual(['0.pt', '1.pt', 'eval_0.pt']);
    expect((await readdir(join(details, 'train_data'))).sort()).toEqual([
      '0_0.pt',
      '0_1.pt',
      '1_0.pt',
      '1_1.pt',
    ]);
    const trajectory = (await readFile(join(details, 'trajectory', '0.jsonl'), 'utf8')).trim().split('\n');
    const withMessages = run.outcomes[0]!.groups.flatMap((g) =>
      g.dropped === null ? g.rollouts.flatMap((r) => r.samples.filter((s) => messagesOf(r, s) !== null)) : [],
    );
    expect(trajectory).toHaveLength(withMessages.length);
    expect(Object.keys(JSON.parse(trajectory[0]!))).toEqual([
      'sample_index',
      'group_index',
      'status',
      'reward',
      'prompt',
      'messages',
    ]);
  });

  it("schedules each step as the replay does: Miles' rollouts per step, trained and dropped rows", () => {
    for (const outcome of run.outcomes) {
      const m = miles.steps.find((s) => s.rollout_id === outcome.step)!;
      expect(m.error).toBeNull();
      expect(m.mode).toBe(outcome.schedule.mode);
      expect(m.num_rollouts).toEqual(outcome.schedule.steps.map((s) => s.loss_divisor));
      const trained = outcome.schedule.steps.flatMap((s) => s.rows ?? []).sort((a, b) => a - b);
      expect(m.partitions!.flat().sort((a, b) => a - b)).toEqual(trained);
      expect(outcome.schedule.dropped_rollouts.length).toBe(1);
    }
  });

  it('converts, loads and validates: the rows are the replay rows and no check fails', async () => {
    const converted = join(dir, 'converted');
    const conversion = await execa(
      gate.python,
      [CONVERTER, '--details', join(dir, 'details'), '--out', converted],
      { reject: false },
    );
    expect(conversion.exitCode, conversion.stderr).toBe(0);
    const dumps = await loadConvertedDumps(converted);
    // The eval dump (integer rollout_id 0) is not a training step.
    expect(dumps.rollout.map((d) => d.rollout_id)).toEqual([0, 1]);
    dumps.rollout.forEach((dump, step) => {
      const rows = run.outcomes[step]!.rows;
      expect(dump.samples.map((s) => [s.index, s.group_index, s.rollout_id, s.reward])).toEqual(
        rows.map((r) => [r.index, r.group_index, r.rollout_id, r.reward]),
      );
      expect(dump.samples.map((s) => s.tokens)).toEqual(rows.map((r) => r.tokens));
      expect(dump.samples.map((s) => s.loss_mask)).toEqual(rows.map((r) => r.loss_mask));
    });
    // The shards hold exactly the scheduled rows, with Miles' normalised rewards.
    for (const outcome of run.outcomes) {
      const shards = dumps.train.filter((t) => t.rollout_id === outcome.step);
      const ids = shards
        .flatMap((t) => t.rollout_data.rollout_ids ?? [])
        .map(String)
        .sort();
      const expected = outcome.schedule.steps
        .flatMap((s) => s.rows ?? [])
        .map((i) => trainRolloutId(outcome.rows[i]!, i))
        .sort();
      expect(ids).toEqual(expected);
    }
    const metrics = new Map<string, MetricPoint[]>();
    for (const outcome of run.outcomes)
      for (const [name, value] of Object.entries(outcome.metrics))
        if (value !== undefined)
          metrics.set(name, [...(metrics.get(name) ?? []), { step: outcome.step, value }]);
    const checks = validateDumps(dumps, { n_samples_per_prompt: 2, rollout_batch_size: 2 }, metrics);
    const byName = Object.fromEntries(checks.map((c) => [c.name, c]));
    expect(overallVerdict(checks), JSON.stringify(checks.filter((c) => c.verdict === 'fail'))).not.toBe(
      'fail',
    );
    expect(byName.train_mask_sums?.verdict).toBe('pass');
    expect(byName.segmentation_invariance?.verdict).toBe('pass');
    expect(byName.logged_metrics_match_dump?.verdict).toBe('pass');
  });
});

describe.skipIf(!ready && !gate.required)("the train schedule against Miles' own functions", () => {
  // The worked example (replay/testing/worked-example.ts): rollouts 20, 21 (3 rows), 22, 23 (2 rows), one
  // group.
  const rows = workedExampleRows();
  const cases: (TrainScheduleConfig & { readonly rows?: readonly ReplaySample[] })[] = [
    { global_batch_size: 4, dp_size: 1, allow_partial_train_step: false },
    { global_batch_size: 3, dp_size: 2, allow_partial_train_step: false },
    { global_batch_size: 2, dp_size: 2, allow_partial_train_step: false },
    { global_batch_size: 3, dp_size: 2, allow_partial_train_step: true },
    { global_batch_size: 3, dp_size: 3, allow_partial_train_step: true },
    { global_batch_size: 1, dp_size: 2, allow_partial_train_step: false },
    { global_batch_size: 8, dp_size: 2, allow_partial_train_step: false },
    { global_batch_size: 8, dp_size: 1, allow_partial_train_step: false },
    {
      global_batch_size: 4,
      dp_size: 1,
      allow_partial_train_step: false,
      rows: rows.filter((r) => r.rollout_id === null),
    },
  ];

  it('agrees on mode, rollouts per step, trained rows and the errors Miles raises', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'miles-schedule-'));
    try {
      const nest = (batch: readonly ReplaySample[]) => {
        const rollouts = new Map<string, Record<string, unknown>[]>();
        batch.forEach((row, i) => {
          const id = trainRolloutId(row, i);
          rollouts.set(id, [...(rollouts.get(id) ?? []), milesSample(row, null)]);
        });
        return [[...rollouts.values()]];
      };
      const { steps } = await writeWithMiles(
        {
          args: { global_batch_size: 4, dp_size: 1, n_samples_per_prompt: 4, rollout_batch_size: 1 },
          steps: cases.map((c, i) => ({
            rollout_id: i,
            groups: nest(c.rows ?? rows),
            ...c,
            rows: undefined,
          })),
        },
        dir,
      );
      cases.forEach((c, i) => {
        const mine = buildTrainSchedule(c.rows ?? rows, c);
        const theirs = steps[i]!;
        const label = JSON.stringify({ ...c, rows: c.rows?.length });
        if (theirs.error !== null) {
          // Miles stopped: the replay names the same assertion.
          expect(mine.error?.message, label).toBe(theirs.error);
          return;
        }
        expect(mine.mode, label).toBe(theirs.mode);
        if (theirs.mode === 'rollout_side') {
          expect(mine.error, label).toBeNull();
          expect(
            mine.steps.map((s) => s.loss_divisor),
            label,
          ).toEqual(theirs.num_rollouts);
          expect(
            mine.steps.flatMap((s) => s.rows ?? []).sort((a, b) => a - b),
            label,
          ).toEqual(theirs.partitions!.flat().sort((a, b) => a - b));
        }
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
