import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readTb2Tasks } from '../../fakes/harbor/episode-catalog.ts';
import { identityHolds } from '../../replay/accounting/schema.ts';
import { runFuzz } from '../../replay/fuzz/run-fuzz.ts';
import { deepCampaignSeed } from './deep-seed.ts';

/**
 * Deep tier (`npm run test:deep`): a fuzz campaign ten times the size of `npm test`'s four-case one
 * (test/replay/fuzz.test.ts), from the deep tier's seed (vitest.deep.config.ts draws a fresh one each run
 * unless HARNESS_DEEP_SEED names one, and passes it here as HARNESS_DEEP_SEED). Every case
 * must pass all seven checks with the accounting identity holding over the campaign. Its value grows with
 * the count (more generated episodes, more seeds over time), so it runs here, after `npm test`, not in it.
 */

const factor = Number(process.env.HARNESS_DEEP_FACTOR ?? '10');
const runs = 4 * factor;
const seed = deepCampaignSeed();

let dir: string;
let tasks: string[];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fuzz-deep-'));
  tasks = await readTb2Tasks();
  // Printed so a failure replays: HARNESS_DEEP_SEED=<seed> npm run test:deep
  console.log(`[deep] fuzz campaign: ${runs} runs, seed ${seed} (HARNESS_DEEP_SEED=${seed} repeats it)`);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('deep: harness fuzz campaign', () => {
  it(`runs ${runs} generated cases clean, with the accounting identity holding over them`, async () => {
    const result = await runFuzz({
      runs,
      seed,
      shard: { index: 0, count: 1 },
      outDir: join(dir, 'campaign'),
      tasks,
      signal: new AbortController().signal,
    });
    expect(result.failures.map((f) => `${f.check}: ${f.command}`)).toEqual([]);
    expect(result.cases).toBe(runs);
    expect(result.accounting.completion_tokens).toBeGreaterThan(0);
    expect(identityHolds(result.accounting)).toBe(true);
  }, 900_000);
});
