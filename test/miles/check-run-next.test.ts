import { randomUUID } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureIo } from '../../cli/io.ts';
import { main } from '../../cli/main.ts';
import { parseJson } from '../../common/python-json/loads.ts';
import { milesProfileNamed } from '../../contracts/miles-profile.ts';
import { startMilesServer } from '../../replay/conformance/miles-server.ts';
import type { StackSessionServer } from '../../replay/driver/stack.ts';
import { InMemoryReport } from '../../replay/report/report-sink.ts';
import type { ReplayReport } from '../../replay/report/schema.ts';
import type { CheckRunReport } from '../../replay/run-check/report-schema.ts';
import { checkRunDumps } from '../../replay/run-check/run-check.ts';
import { type ReplayRun, runReplay } from '../../replay/run-replay.ts';
import { messagesOf, milesDumpInput, writeMilesDumps } from '../../replay/testing/miles-dumps.ts';
import { newerMilesGate } from './gate.ts';

// check-run on dumps the NEWER Miles' own writers wrote (issue 36 items 3 and 4): the replay's sessions go
// through the newer tree's session server (MILES_NEXT_ROOT, e.g. the /work/miles-next overlay, run with
// MILES_NEXT_PYTHON, a Python with pydantic 2) under profile 4d412b5a, so every sample is one that server
// returned; the tree's writers (sii-avalanche/miles@4d412b5a miles/ray/rollout/debug_data.py
// `save_debug_rollout_data` and its trajectory sidecar, the tree's DP split, `save_debug_train_data_for_rank`
// and `log_rollout_data`) write the folder; check-run over it must read it as the newer Miles' and report
// what the replay reported.

const ROOT = new URL('../../', import.meta.url).pathname;
const env = process.env;
const gate = await newerMilesGate({ sessionServer: true, torch: true });
const unmet = gate.unmet;
if (unmet.length > 0 && !gate.required)
  console.warn(`[skip] check-run on the newer Miles' dumps, unmet preconditions:\n  ${unmet.join('\n  ')}`);

/**
 * The newer normalised metrics.py the profile's rollout metrics follow (docs/replay.md; kept outside the
 * repository), when given: the log is then its `log_rollout_data`'s, else the tree's (31f1ca96's file).
 */
const METRICS_PY = env.MILES_NEXT_METRICS_PY || undefined;
const TRAIN = { global_batch_size: 6, dp_size: 2, allow_partial_train_step: false };
const SHAPE = { n_samples_per_prompt: 4, rollout_batch_size: 2 };
const PROFILE = milesProfileNamed('4d412b5a')!;
/** Metrics of wall time the replay measures and check-run reads from the log's perf/rollout_time. */
const TIMED = /^perf\//;

/** The newer tree's session server in front of the replay's fake policy, as the differential starts it. */
async function newerSessionServer(backendUrl: string): Promise<StackSessionServer> {
  const instanceId = randomUUID().replaceAll('-', '');
  const server = await startMilesServer({
    milesRoot: gate.milesRoot,
    python: gate.python,
    backendUrl,
    vocabularyTraces: [],
    instanceId,
  });
  const url = new URL(server.url);
  return { url: server.url, host: url.hostname, port: Number(url.port), instanceId, close: server.close };
}

/** The tree nodes below a rollout's last kept node that no kept sample's path holds (`step:rollout:node`). */
function lostBelowLastKept(reference: ReplayRun): string[] {
  const lost: string[] = [];
  for (const outcome of reference.outcomes)
    for (const group of outcome.groups)
      for (const rollout of group.rollouts) {
        if (!rollout.tree) continue;
        const kept = new Set(
          rollout.samples.flatMap((s) => (s.metadata.leaf as { path_node_ids: number[] }).path_node_ids),
        );
        const last = [...kept].reduce((a, b) => Math.max(a, b), 0);
        for (const node of rollout.tree.nodes)
          if (!kept.has(node.id) && node.id < last)
            lost.push(`${outcome.step}:${rollout.rollout_id ?? rollout.index}:${node.id}`);
      }
  return lost;
}

describe.skipIf(unmet.length > 0 && !gate.required)(
  "check-run against harness replay, on dumps the newer Miles' writers wrote",
  () => {
    let dir = '';
    let run: ReplayRun;
    let fakeRun: ReplayRun;
    /** What check-run must agree with: the replay whose samples were dumped, and the fakes' replay. */
    let references: [string, ReplayRun][] = [];
    let checked: { report: CheckRunReport; replay: ReplayReport | null };

    beforeAll(async () => {
      expect(unmet).toEqual([]);
      dir = await mkdtemp(join(tmpdir(), 'check-run-next-'));
      const options = {
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
        titoModel: 'default',
        milesProfile: PROFILE,
        train: TRAIN,
        keepRequestMessages: true,
      } as const;
      const hooks = { signal: new AbortController().signal, progress: { write: () => true } };
      run = await runReplay({ ...options, sessionServer: newerSessionServer }, hooks);
      // `harness replay --miles-profile 4d412b5a`: the same seed and episodes through the fakes alone.
      fakeRun = await runReplay(options, hooks);
      references = [
        ['the replay through the newer session server', run],
        ['harness replay --miles-profile 4d412b5a (the fakes)', fakeRun],
      ];
      await writeMilesDumps({
        python: gate.python,
        milesRoot: gate.milesRoot,
        input: milesDumpInput(run.outcomes, { ...TRAIN, ...SHAPE }),
        workDir: dir,
        details: join(dir, 'details'),
        log: join(dir, 'launcher.log'),
        ...(METRICS_PY === undefined ? {} : { metricsPy: METRICS_PY }),
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
    }, 300_000);

    afterAll(async () => {
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('reads every step as the newer Miles wrote it and names profile 4d412b5a', async () => {
      const { report } = checked;
      expect(report.problems).toEqual([]);
      expect(report.dump_format).toBe('miles-next-spans');
      expect(report.miles_profile).toEqual({ name: PROFILE.name, commits: PROFILE.commits });
      expect(checked.replay!.config.miles_profile).toMatchObject({
        name: PROFILE.name,
        commits: PROFILE.commits,
      });
      for (const [label, reference] of references) {
        expect(
          report.steps.map((s) => s.step),
          label,
        ).toEqual(reference.outcomes.map((o) => o.step));
        expect(
          report.steps.map((s) => s.samples),
          label,
        ).toEqual(reference.outcomes.map((o) => o.rows.length));
      }
      expect(report.shape).toMatchObject({ ...SHAPE, dp_size: TRAIN.dp_size });
      // The newer trajectory rows name their sample; every one the writer wrote was read.
      const first = parseJson(
        (await readFile(join(dir, 'details/trajectory/0.jsonl'), 'utf8')).split('\n')[0]!,
      );
      expect(first).toHaveProperty('sample_occurrence', 0);
      expect(report.steps.every((s) => s.trajectory_rows === s.samples)).toBe(true);
      console.info(
        `[check-run next oracle] ${report.steps.length} steps, ${report.steps.reduce((n, s) => n + s.samples, 0)} samples`,
      );
    });

    it("gives the replay's verdict for every check both can run", () => {
      const mine = new Map(checked.replay!.checks.map((c) => [c.name, c]));
      for (const [label, reference] of references) {
        let compared = 0;
        for (const theirs of reference.report.checks) {
          const ours = mine.get(theirs.name);
          if (!ours) continue; // only_generated_tokens_trained and token_accounting need trees
          compared += 1;
          const what = `${label}: ${theirs.name}`;
          // exactly_once runs exact with trees and as a proxy without: its failures must agree.
          if (theirs.name === 'exactly_once') expect(ours.counts.fail, what).toBe(theirs.counts.fail);
          else {
            expect(ours.verdict, what).toBe(theirs.verdict);
            expect(ours.counts, what).toEqual(theirs.counts);
          }
        }
        console.info(
          `[check-run next oracle] ${label}: checks compared ${compared} of ${reference.report.checks.length}`,
        );
      }
      expect(checked.replay!.skipped_checks.map((s) => s.name).sort()).toEqual([
        'only_generated_tokens_trained',
        'token_accounting',
      ]);
    });

    it("recomputes the replay's GRPO values, the trainer rows hold them, and the accounting agrees", () => {
      const adv = (s: ReplayReport['steps'][number]) =>
        s.groups.flatMap((g) => g.rollouts.flatMap((r) => r.samples.map((x) => x.advantage)));
      for (const [label, reference] of references) {
        let values = 0;
        reference.report.steps.forEach((theirs, k) => {
          const ours = checked.replay!.steps[k]!;
          expect(adv(ours), label).toHaveLength(adv(theirs).length);
          adv(theirs).forEach((a, i) => {
            values += 1;
            if (a === null) expect(adv(ours)[i], label).toBeNull();
            else expect(adv(ours)[i], label).toBeCloseTo(a, 12);
          });
          expect(ours.accounting.trained_tokens, label).toBe(theirs.accounting.trained_tokens);
          expect(ours.train_schedule, label).toEqual(theirs.train_schedule);
        });
        console.info(`[check-run next oracle] ${label}: ${values} advantages equal`);
      }
      const grpo = checked.report.checks.find((c) => c.name === 'grpo_matches_train_rows')!;
      expect(grpo.verdict, grpo.summary).toBe('pass');
      expect(checked.report.totals.grpo_values_compared).toBeGreaterThan(0);
      console.info(
        `[check-run next oracle] ${checked.report.totals.grpo_values_compared} train-row values equal the recomputation`,
      );
    });

    it("recomputes the replay's metrics, and they equal what log_rollout_data logged", () => {
      for (const [label, reference] of references) {
        let values = 0;
        reference.report.steps.forEach((theirs, k) => {
          const ours = checked.replay!.steps[k]!.metrics as Record<string, number | undefined>;
          // The same keys: the metrics as the profile's metrics.py logs them.
          const keys = (m: Record<string, number | undefined>) =>
            Object.keys(m)
              .filter((n) => m[n] !== undefined)
              .sort();
          expect(keys(ours), label).toEqual(keys(theirs.metrics as Record<string, number | undefined>));
          for (const [name, value] of Object.entries(theirs.metrics)) {
            if (value === undefined || TIMED.test(name)) continue;
            values += 1;
            expect(ours[name], `${label}: step ${theirs.step} ${name}`).toBeCloseTo(value, 9);
          }
        });
        console.info(`[check-run next oracle] ${label}: ${values} metric values equal`);
      }
      const logged = checked.report.checks.find((c) => c.name === 'logged_metrics_match_dump')!;
      expect(logged.verdict, logged.summary).toBe('pass');
      // Only the normalised metrics.py logs the share of zero-std groups; 31f1ca96's file does not.
      const notLogged = checked.report.steps.flatMap((s) => s.metrics?.not_logged ?? []);
      if (METRICS_PY === undefined) expect(notLogged).toContain('rollout/zero_std/percentage');
      else expect(notLogged).not.toContain('rollout/zero_std/percentage');
      expect(checked.report.totals.metrics_compared).toBeGreaterThan(20);
      console.info(
        `[check-run next oracle] ${checked.report.totals.metrics_compared} values equal what ${METRICS_PY ?? "the tree's metrics.py"} logged`,
      );
    });

    it("finds the replay's lost branches below the last kept node, each with its conversation", () => {
      const found = checked.report.steps.flatMap((s) =>
        s.lost_branches.flatMap((b) => b.node_ids.map((id) => `${b.step}:${b.rollout}:${id}`)),
      );
      for (const [label, reference] of references)
        expect(found.sort(), label).toEqual(lostBelowLastKept(reference).sort());
      const branches = checked.report.steps.flatMap((s) => s.lost_branches);
      expect(branches.filter((b) => b.conversation).length).toBe(checked.report.totals.lost_branches);
      console.info(
        `[check-run next oracle] lost branches: ${found.length} nodes, as the replay's trees show them`,
      );
    });

    it("attaches to each lost branch the conversation of the sample after it, from the writer's rows", () => {
      // The replay's policy log is the independent source of each sample's conversation (merge.py's messages).
      let attached = 0;
      for (const step of checked.report.steps)
        for (const branch of step.lost_branches) {
          const outcome = run.outcomes.find((o) => o.step === branch.step)!;
          const rollout = outcome.groups
            .flatMap((g) => g.rollouts)
            .find((r) => (r.rollout_id ?? r.index) === branch.rollout)!;
          const sample = rollout.samples[branch.next_sample!]!;
          expect(branch.conversation?.messages).toBe(messagesOf(rollout, sample)?.length);
          attached += 1;
        }
      expect(attached).toBe(checked.report.totals.lost_branches);
    });

    it('joins rows by sample_occurrence where a sample has no messages (the newer writer leaves a gap)', async () => {
      // The first sample of a compacted rollout of step 0 loses its conversation before the writer runs.
      const input = milesDumpInput(run.outcomes, { ...TRAIN, ...SHAPE }) as {
        steps: { groups: { metadata: Record<string, unknown>; index: number }[][][] }[];
      };
      const rollout = input.steps[0]!.groups.flat().find((r) => r.length > 1)!;
      delete rollout[0]!.metadata.messages;
      const gap = join(dir, 'gap');
      await writeMilesDumps({
        python: gate.python,
        milesRoot: gate.milesRoot,
        input,
        workDir: dir,
        details: gap,
      });
      const { report } = await checkRunDumps(
        {
          dir: gap,
          converter: { python: gate.python, milesRoot: gate.milesRoot },
          shape: { global_batch_size: TRAIN.global_batch_size },
        },
        new InMemoryReport(),
      );
      expect(report.problems).toEqual([]);
      expect(report.steps[0]!.trajectory_rows).toBe(report.steps[0]!.samples - 1);
      // The imported traces carry the occurrence Miles wrote: the gap stays a gap.
      const traces = join(dir, 'gap-traces');
      const io = captureIo({}, { cwd: dir });
      expect(await main(['trace', 'import', gap, '--out', traces], io), io.err()).toBe(0);
      const index = rollout[0]!.index;
      const names = (await readdir(traces))
        .filter((f) => f.startsWith('0-') && f.includes(`-s${index}-`))
        .sort();
      expect(names.map((f) => Number(f.replace(/^.*-(\d+)\.json$/, '$1')))).toEqual(
        rollout.slice(1).map((_, k) => k + 1),
      );
    }, 120_000);

    it('imports every trajectory row the newer writer wrote as a session trace', async () => {
      const traces = join(dir, 'traces');
      const io = captureIo({}, { cwd: dir });
      expect(await main(['trace', 'import', join(dir, 'details'), '--out', traces], io), io.err()).toBe(0);
      const files = await readdir(traces);
      expect(files).toHaveLength(checked.report.steps.reduce((n, s) => n + s.trajectory_rows, 0));
    });
  },
);
