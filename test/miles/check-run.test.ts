import { appendFile, cp, mkdtemp, readdir, readFile, rm, truncate, unlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureIo } from '../../cli/io.ts';
import { main } from '../../cli/main.ts';
import { milesProfileNamed } from '../../contracts/miles-profile.ts';
import { InMemoryReport } from '../../replay/report/report-sink.ts';
import type { ReplayReport } from '../../replay/report/schema.ts';
import type { CheckRunReport } from '../../replay/run-check/report-schema.ts';
import { checkRunDumps } from '../../replay/run-check/run-check.ts';
import { type ReplayRun, runReplay } from '../../replay/run-replay.ts';
import { milesDumpInput, writeMilesDumps } from '../../replay/testing/miles-dumps.ts';
import { milesGate } from './gate.ts';

// The oracle of `harness check-run` (issue 36 item 4): a replay's steps written as a --dump-details folder
// by Miles' own writers on CPU (save_debug_rollout_data with its trajectory sidecar, the DP split,
// save_debug_train_data_for_rank) and Miles' own log_rollout_data line; check-run over that folder must
// report what `harness replay` reported for the same seed and episodes.

const ROOT = new URL('../../', import.meta.url).pathname;
const gate = await milesGate({ torch: true });
const ready = gate.unmet.length === 0;
if (!ready && !gate.required)
  console.warn(
    `[skip] check-run on Miles-written dumps: ${gate.unmet.join('; ')} (HARNESS_MILES_REQUIRED=1 fails instead)`,
  );

const TRAIN = { global_batch_size: 6, dp_size: 2, allow_partial_train_step: false };
const SHAPE = { n_samples_per_prompt: 4, rollout_batch_size: 2 };
/** Metrics of wall time the replay measures and check-run reads from the log's perf/rollout_time. */
const TIMED = /^perf\//;
const PROFILE = milesProfileNamed('31f1ca96')!;

describe.skipIf(!ready && !gate.required)('check-run against harness replay, on dumps Miles wrote', () => {
  let dir = '';
  let run: ReplayRun;
  let checked: { report: CheckRunReport; replay: ReplayReport | null };

  beforeAll(async () => {
    expect(gate.unmet).toEqual([]);
    dir = await mkdtemp(join(tmpdir(), 'check-run-'));
    run = await runReplay(
      {
        episodes: [],
        prompts: join(ROOT, 'fixtures/prompts/tb2-89.jsonl'),
        rolloutBatchSize: SHAPE.rollout_batch_size,
        nSamplesPerPrompt: SHAPE.n_samples_per_prompt,
        steps: 3,
        concurrency: 4,
        seed: 5,
        maxSeqLen: 32768,
        maxResponseLen: 8192,
        modelName: 'model',
        trialTimeoutS: 120,
        agentTimeoutS: 120,
        titoModel: 'glm47',
        // The samples 31f1ca96's session server gives (a version string per call), as its writers dump them.
        milesProfile: PROFILE,
        train: TRAIN,
        keepRequestMessages: true,
      },
      { signal: new AbortController().signal, progress: { write: () => true } },
    );
    await writeMilesDumps({
      python: gate.python,
      milesRoot: gate.milesRoot,
      input: milesDumpInput(run.outcomes, { ...TRAIN, ...SHAPE }),
      workDir: dir,
      details: join(dir, 'details'),
      log: join(dir, 'launcher.log'),
    });
    checked = await checkRunDumps(
      {
        dir: join(dir, 'details'),
        log: join(dir, 'launcher.log'),
        converter: { python: gate.python, milesRoot: gate.milesRoot },
        shape: { global_batch_size: TRAIN.global_batch_size },
      },
      new InMemoryReport(),
    );
  }, 180_000);

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('reads every step, names the dump format, and finds no problem in the input', () => {
    const { report } = checked;
    expect(report.problems).toEqual([]);
    expect(report.steps.map((s) => s.step)).toEqual(run.outcomes.map((o) => o.step));
    expect(report.steps.map((s) => s.samples)).toEqual(run.outcomes.map((o) => o.rows.length));
    expect(report.dump_format).toBe('miles-31f1ca96');
    expect(report.miles_profile).toEqual({ name: PROFILE.name, commits: PROFILE.commits });
    expect(report.shape).toMatchObject({ ...SHAPE, dp_size: TRAIN.dp_size });
  });

  it("gives the replay's verdict for every check both can run", () => {
    const replay = checked.replay!;
    const mine = new Map(replay.checks.map((c) => [c.name, c]));
    let compared = 0;
    for (const theirs of run.report.checks) {
      const ours = mine.get(theirs.name);
      if (!ours) continue; // only_generated_tokens_trained and token_accounting need trees
      compared += 1;
      // exactly_once runs exact with trees and as a proxy without: its failures must agree.
      if (theirs.name === 'exactly_once') expect(ours.counts.fail, theirs.name).toBe(theirs.counts.fail);
      else {
        expect(ours.verdict, theirs.name).toBe(theirs.verdict);
        expect(ours.counts, theirs.name).toEqual(theirs.counts);
      }
    }
    expect(replay.skipped_checks.map((s) => s.name).sort()).toEqual([
      'only_generated_tokens_trained',
      'token_accounting',
    ]);
    console.info(`[check-run oracle] checks compared: ${compared} of ${run.report.checks.length}`);
  });

  it("recomputes the replay's GRPO values, the trainer used them, and the trained-token accounting agrees", () => {
    const replay = checked.replay!;
    let values = 0;
    run.report.steps.forEach((theirs, k) => {
      const ours = replay.steps[k]!;
      const adv = (s: ReplayReport['steps'][number]) =>
        s.groups.flatMap((g) => g.rollouts.flatMap((r) => r.samples.map((x) => x.advantage)));
      expect(adv(ours)).toHaveLength(adv(theirs).length);
      adv(theirs).forEach((a, i) => {
        values += 1;
        if (a === null) expect(adv(ours)[i]).toBeNull();
        else expect(adv(ours)[i]).toBeCloseTo(a, 12);
      });
      expect(ours.accounting.trained_tokens).toBe(theirs.accounting.trained_tokens);
      expect(ours.train_schedule).toEqual(theirs.train_schedule);
    });
    const grpo = checked.report.checks.find((c) => c.name === 'grpo_matches_train_rows')!;
    expect(grpo.verdict).toBe('pass');
    expect(checked.report.totals.grpo_values_compared).toBeGreaterThan(0);
    console.info(
      `[check-run oracle] GRPO: ${values} advantages equal the replay's; ${checked.report.totals.grpo_values_compared} train-row values equal the recomputation`,
    );
  });

  it("recomputes the replay's metrics, and they equal what Miles' log_rollout_data logged", () => {
    const replay = checked.replay!;
    let values = 0;
    run.report.steps.forEach((theirs, k) => {
      const ours = replay.steps[k]!.metrics as Record<string, number | undefined>;
      // The same keys: the metrics as 31f1ca96's metrics.py logs them (the profile the dumps name).
      const keys = (m: Record<string, number | undefined>) =>
        Object.keys(m)
          .filter((n) => m[n] !== undefined)
          .sort();
      expect(keys(ours)).toEqual(keys(theirs.metrics as Record<string, number | undefined>));
      for (const [name, value] of Object.entries(theirs.metrics)) {
        if (value === undefined || TIMED.test(name)) continue;
        values += 1;
        expect(ours[name], `step ${theirs.step} ${name}`).toBeCloseTo(value, 9);
      }
    });
    const logged = checked.report.checks.find((c) => c.name === 'logged_metrics_match_dump')!;
    expect(logged.verdict, logged.summary).toBe('pass');
    expect(checked.report.totals.metrics_compared).toBeGreaterThan(20);
    console.info(
      `[check-run oracle] metrics: ${values} equal the replay's; ${checked.report.totals.metrics_compared} equal Miles' logged values`,
    );
  });

  it("finds the replay's lost branches below the last kept node, with the next sample's conversation", () => {
    const expected: string[] = [];
    for (const outcome of run.outcomes)
      for (const group of outcome.groups)
        for (const rollout of group.rollouts) {
          if (!rollout.tree) continue;
          const kept = new Set(
            rollout.samples.flatMap((s) => (s.metadata.leaf as { path_node_ids: number[] }).path_node_ids),
          );
          const last = [...kept].reduce((a, b) => Math.max(a, b), 0);
          for (const node of rollout.tree.nodes)
            if (!kept.has(node.id) && node.id < last)
              expected.push(`${outcome.step}:${rollout.rollout_id ?? rollout.index}:${node.id}`);
        }
    const found = checked.report.steps.flatMap((s) =>
      s.lost_branches.flatMap((b) => b.node_ids.map((id) => `${b.step}:${b.rollout}:${id}`)),
    );
    expect(found.sort()).toEqual(expected.sort());
    const withConversation = checked.report.steps
      .flatMap((s) => s.lost_branches)
      .filter((b) => b.conversation);
    expect(withConversation.length).toBe(checked.report.totals.lost_branches);
    console.info(`[check-run oracle] lost branches: ${found.length} nodes, as the replay's trees show them`);
  });

  it('names each bad input with its file and step, checks the rest, and exits 1', async () => {
    const bad = join(dir, 'bad');
    await cp(join(dir, 'details'), bad, { recursive: true });
    await unlink(join(bad, 'rollout_data', '1.pt'));
    await unlink(join(bad, 'train_data', '1_0.pt'));
    await unlink(join(bad, 'train_data', '1_1.pt'));
    await unlink(join(bad, 'trajectory', '1.jsonl'));
    await truncate(join(bad, 'train_data', '2_1.pt'), 100);
    await unlink(join(bad, 'train_data', '0_0.pt'));
    await appendFile(
      join(bad, 'trajectory', '0.jsonl'),
      `${JSON.stringify({ sample_index: 9999, group_index: 0, status: 'completed', reward: 1, prompt: 'p', messages: [] })}\n`,
    );
    const io = captureIo({ MILES_ROOT: gate.milesRoot }, { cwd: dir });
    const html = join(dir, 'bad.html');
    const code = await main(['check-run', bad, '--python', gate.python, '--json', '--report', html], io);
    expect(code, io.err()).toBe(1);
    const report = JSON.parse(io.out()) as CheckRunReport;
    const problems = report.problems.map((p) => [p.kind, p.step, p.file?.replace(`${bad}/`, '')]);
    expect(problems).toEqual(
      expect.arrayContaining([
        ['missing_step', 1, 'rollout_data/1.pt'],
        ['missing_rank_file', 0, 'train_data/0_0.pt'],
        ['unreadable_file', 2, 'train_data/2_1.pt'],
        ['trajectory_row_without_sample', 0, 'trajectory/0.jsonl'],
      ]),
    );
    // Steps 0 and 2 are still checked, with what they have.
    expect(report.steps.map((s) => s.step)).toEqual([0, 2]);
    expect(report.steps[0]!.train_ranks).toEqual([1]);
    // The replay's HTML report of the checked steps.
    const page = await readFile(html, 'utf8');
    expect(page).toContain('data-step="0"');
    expect(page).toContain('data-step="2"');
    expect(page).not.toContain('data-step="1"');
  }, 60_000);

  it('imports every trajectory row Miles wrote as a session trace that harness trace replay accepts', async () => {
    const traces = join(dir, 'traces');
    const io = captureIo({}, { cwd: dir });
    expect(await main(['trace', 'import', join(dir, 'details'), '--out', traces], io), io.err()).toBe(0);
    const files = (await readdir(traces)).map((f) => join(traces, f));
    expect(files).toHaveLength(checked.report.steps.reduce((n, s) => n + s.trajectory_rows, 0));
    const replay = captureIo({}, { cwd: dir });
    expect(await main(['trace', 'replay', '--json', ...files.slice(0, 6)], replay), replay.err()).toBe(0);
    const results = replay
      .out()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { turns: { status: number }[] });
    expect(results.every((r) => r.turns.length > 0 && r.turns.every((t) => t.status === 200))).toBe(true);
  }, 60_000);
});
