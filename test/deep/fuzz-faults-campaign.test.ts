import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FaultKindSchema } from '../../contracts/fault-scenario.ts';
import { readTb2Tasks } from '../../fakes/harbor/episode-catalog.ts';
import type { TokenizerName } from '../../fakes/tokenizer/tito.ts';
import { injectedFaults, mixableKinds } from '../../replay/fuzz/faults.ts';
import { runFuzz } from '../../replay/fuzz/run-fuzz.ts';
import { deepCampaignSeed } from './deep-seed.ts';

/**
 * Deep tier (`npm run test:deep`): a mixed fault campaign (docs/field-failures.md "In fuzzing"): every
 * catalogue kind each tokenizer can express mixed into the generated episodes at once, on the toy ids and
 * on Qwen3's, from the deep tier's seed (printed; HARNESS_DEEP_SEED repeats it). Several kinds make checks
 * fail by design (the harness catching the fault): the campaign must then stop at a shrunk batch that names
 * the failed checks and the fault kinds its episodes carried, never at a replay that crashed. The figures
 * (cases, episodes, faults mixed per kind, failures) are printed for the report. About a minute of CPU
 * per tokenizer.
 */

const RUNS = 10;
const RATE = 0.15;
const seed = deepCampaignSeed();

let dir: string;
let tasks: string[];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fuzz-faults-deep-'));
  tasks = await readTb2Tasks();
  console.log(
    `[deep] mixed fault campaign: ${RUNS} runs per tokenizer, rate ${RATE}, seed ${seed} (HARNESS_DEEP_SEED=${seed} repeats it)`,
  );
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe.each(['toy', 'qwen3'] as const)(
  'deep: mixed fault campaign on %s ids',
  (tokenizer: TokenizerName) => {
    it('mixes every kind the tokenizer can express and reports any failure with its checks and faults', async () => {
      const kinds = mixableKinds(tokenizer);
      const result = await runFuzz({
        runs: RUNS,
        seed,
        shard: { index: 0, count: 1 },
        outDir: join(dir, tokenizer),
        tasks,
        tokenizer,
        injected: injectedFaults(`${kinds.join(',')}:${RATE}`, tokenizer),
        signal: new AbortController().signal,
      });
      const mixed = FaultKindSchema.options.flatMap((k) =>
        result.faults[k] ? [`${k} ×${result.faults[k]}`] : [],
      );
      console.log(
        `[deep] ${tokenizer}: ${result.cases} cases, ${result.episodes} episodes; faults mixed: ${mixed.join(', ')}; findings (cases): ${JSON.stringify(result.findings)}`,
      );
      for (const f of result.failures)
        console.log(
          `[deep] ${tokenizer} FAIL ${f.checks.join(', ')} after ${f.shrinks} shrinks (${f.batch.groupSeeds.length} groups × ${f.batch.samples}); kinds still injected: ${f.injected.join(', ') || 'none'}; faults carried: ${JSON.stringify(f.faults)}; ${f.command}`,
        );
      expect(result.cases).toBeGreaterThan(0);
      // Only the kinds asked for, and at least one of them, reached the episodes.
      for (const kind of Object.keys(result.faults))
        expect([...kinds, 'retry_after_rollback']).toContain(kind);
      expect(mixed.length).toBeGreaterThan(0);
      for (const f of result.failures) {
        expect(f.checks).not.toContain('replay_error');
        expect(f.checks.length).toBeGreaterThan(0);
      }
    }, 900_000);
  },
);
