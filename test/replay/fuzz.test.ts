import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureIo } from '../../cli/io.ts';
import { main } from '../../cli/main.ts';
import { readTb2Tasks } from '../../fakes/harbor/episode-catalog.ts';
import { defaultPostprocess } from '../../fakes/session/hooks/default-postprocess.ts';
import type { SamplePostprocessor } from '../../fakes/session/hooks/types.ts';
import { identityHolds } from '../../replay/accounting/schema.ts';
import { MAX_GROUPS_PER_BATCH_FACTOR } from '../../replay/driver/rollout-step.ts';
import { injectedFaults } from '../../replay/fuzz/faults.ts';
import { runFuzz, shardRuns } from '../../replay/fuzz/run-fuzz.ts';
import { runReplay } from '../../replay/run-replay.ts';

/**
 * `harness fuzz` end to end: a small campaign through the real stack, and a planted masking defect
 * (a postprocessor that forgets to mask shared prefixes, so a shared completion is trained twice) that
 * the fuzzer must find, shrink, write as scripts and reproduce.
 */

/** default_postprocess minus the masking: every sample keeps its full loss mask. */
const trainsSharedTwice: SamplePostprocessor = (samples, metadata) => {
  const masks = samples.map((s) => (s.loss_mask === null ? null : [...s.loss_mask]));
  const out = defaultPostprocess(samples, metadata);
  out.forEach((s, i) => {
    s.loss_mask = masks[i] ?? null;
  });
  return out;
};

/** Episodes where every context fill overflows and unwinds two pairs: shared prefixes every time. */
const SHARED_PREFIX_PARAMS = {
  reactive_rate: 1,
  unwind_pairs: [0, 0, 1] as [number, number, number],
  crash_rate: 0,
  policy_failure_rate: 0,
  first_turn_failure_rate: 0,
  timeout_rate: 0,
  truncation_rate: 0,
};

let dir: string;
let tasks: string[];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fuzz-test-'));
  tasks = await readTb2Tasks();
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const signal = new AbortController().signal;

describe('harness fuzz', () => {
  it('runs a small campaign clean, with the accounting identity holding over it', async () => {
    const result = await runFuzz({
      runs: 4,
      seed: 7,
      shard: { index: 0, count: 1 },
      outDir: join(dir, 'clean'),
      tasks,
      signal,
    });
    expect(result.failures).toEqual([]);
    expect(result.cases).toBe(4);
    expect(result.accounting.completion_tokens).toBeGreaterThan(0);
    expect(identityHolds(result.accounting)).toBe(true);
  }, 120_000);

  it('finds a shared completion trained twice, shrinks it, and the written scripts reproduce it', async () => {
    const result = await runFuzz({
      runs: 10,
      seed: 3,
      shard: { index: 0, count: 1 },
      outDir: join(dir, 'planted'),
      tasks,
      signal,
      params: SHARED_PREFIX_PARAMS,
      // Injected kinds the defect does not need: shrinking drops them from the written failure.
      injected: injectedFaults('concurrent_requests,upstream_abort:0.2', 'toy'),
      replay: { sessionHooks: { postprocessor: trainsSharedTwice } },
    });
    expect(result.failures).toHaveLength(1);
    const failure = result.failures[0]!;
    expect(failure.check).toBe('exactly_once');
    // Shrinking dropped the kinds it could (a dropped kind changes the episodes, so one may stay), and
    // the written episodes carry none of the dropped ones.
    expect(failure.injected.length).toBeLessThan(2);
    for (const dropped of ['concurrent_requests', 'upstream_abort'] as const)
      if (!failure.injected.includes(dropped)) expect(failure.faults[dropped] ?? 0, dropped).toBe(0);
    // Shrunk to one group (the rollouts up to the first one with a shared prefix stay).
    expect(failure.batch.groupSeeds).toHaveLength(1);
    expect(failure.shrinks).toBeGreaterThan(0);
    expect(failure.episodes).toHaveLength(1);
    const script = JSON.parse(await readFile(failure.episodes[0]!, 'utf8'));
    // One variant per trial, refills included (the refill bound × the group size).
    expect(script.variants).toHaveLength(failure.batch.samples * MAX_GROUPS_PER_BATCH_FACTOR);

    // The printed command: env assignments, then `npx harness replay` and its arguments.
    const words = failure.command.split(' ');
    const env = Object.fromEntries(
      words.filter((w) => /^[A-Z_]+=/.test(w)).map((w) => w.split('=') as [string, string]),
    );
    const argv = words.slice(words.indexOf('replay'));
    expect(argv.slice(0, 3)).toEqual(['replay', '--episodes', failure.episodes[0]]);

    // With the defect planted, the scripts reproduce the failure through the real stack...
    const { report } = await runReplay(
      {
        episodes: failure.episodes,
        prompts: failure.prompts,
        rolloutBatchSize: 1,
        nSamplesPerPrompt: failure.batch.samples,
        steps: 1,
        concurrency: 32,
        seed: 1,
        maxSeqLen: Number(env.MILES_SCRIPT_MAX_SEQ_LEN),
        maxResponseLen: Number(env.MILES_SCRIPT_ROLLOUT_MAX_RESPONSE_LEN),
        modelName: 'model',
        trialTimeoutS: 7200,
        agentTimeoutS: 3600,
        titoModel: 'glm47',
        sessionHooks: { postprocessor: trainsSharedTwice },
      },
      { signal, progress: { write: () => true } },
    );
    const exactlyOnce = report.checks.find((c) => c.name === 'exactly_once')!;
    expect(exactlyOnce.verdict).toBe('fail');
    expect(exactlyOnce.evidence.some((e) => e.kind === 'double_trained')).toBe(true);

    // ...and the printed command plays the same scripts through `harness replay`, where Miles' own
    // postprocessor masks the shared prefix: no check fails.
    const io = captureIo(env);
    const json = join(dir, 'reproduced.json');
    expect(await main([...argv, '--json-file', json], io), io.err()).toBe(0);
    const replayed = JSON.parse(await readFile(json, 'utf8'));
    expect(replayed.config.episodes).toEqual(failure.episodes);
    expect(replayed.steps[0].accounting.masked_shared_tokens).toBeGreaterThan(0);
  }, 300_000);

  it('splits a campaign into shards that add up to it', () => {
    for (const runs of [1, 7, 200])
      for (const count of [1, 2, 3, 4]) {
        const shares = Array.from({ length: count }, (_, index) => shardRuns(runs, { index, count }));
        expect(shares.reduce((a, b) => a + b, 0)).toBe(runs);
        // bounded-spread: at most four shards
        expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
      }
  });

  it('exits 2 on bad options', async () => {
    for (const [argv, message] of [
      [['fuzz', '--runs', '0'], /--runs 0: expected a whole number from 1 to 1000000/],
      [['fuzz', '--json', 'f.json'], /--json takes no value \('f\.json'\).*expected --json-file f\.json/],
      [['fuzz', '--json-file', tmpdir()], /--json-file .*: is a directory; expected a writable file path/],
      [['fuzz', '--shard', '3/2'], /--shard I\/K needs 1 ≤ I ≤ K/],
      [['fuzz', '--shard', 'x'], /--shard must be I\/K/],
      [['fuzz', '--bogus'], /bogus/],
    ] as const) {
      const io = captureIo();
      expect(await main([...argv], io), argv.join(' ')).toBe(2);
      expect(io.err()).toMatch(message);
    }
  });
});
