import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { PROCESS_STATE, SUITES } from './vitest.config.ts';

// `npm run test:deep`, run by .ci/run after `npm test` (docs/testing.md, "Deep tier"): the whole suite in
// an order shuffled from a fresh seed, with every property test's run count multiplied by
// HARNESS_DEEP_FACTOR (default 10; test/deep/fast-check-deep.ts), plus the long fuzz campaign of
// test/deep/. `npm test` keeps its fixed order and every test at its own count.
const DEEP_FAST_CHECK = fileURLToPath(new URL('test/deep/fast-check-deep.ts', import.meta.url));
// Property files that do not scale: the policy's record of unhandled requests is bounded (1000 entries,
// fakes/policy/server.ts), and this file counts its 404s against it.
const NOT_SCALED = ['test/servers/bad-input.test.ts'];

function deepSeed(): number {
  const given = process.env.HARNESS_DEEP_SEED;
  if (given === undefined) return Math.floor(Math.random() * 2 ** 31);
  const seed = Number(given);
  if (!Number.isInteger(seed) || seed < 0)
    throw new Error(`HARNESS_DEEP_SEED must be a whole number ≥ 0, got ${given}`);
  return seed;
}
// One seed orders the files and the tests in each file and seeds the fuzz campaign (passed to the workers
// as HARNESS_DEEP_SEED). vitest prints it at the start (`Running tests with seed "N"`), so a failure that
// depends on the order replays with HARNESS_DEEP_SEED=N npm run test:deep.
const seed = deepSeed();

const timeouts = { testTimeout: 600_000, hookTimeout: 600_000 };

export default defineConfig({
  plugins: [
    {
      // Only the test files' own import: the harness's code (the fuzzer drives fast-check) and the test
      // helpers keep the real package and their own counts.
      name: 'deep-fast-check',
      enforce: 'pre',
      resolveId: (source: string, importer: string | undefined) =>
        source === 'fast-check' &&
        importer?.endsWith('.test.ts') &&
        !NOT_SCALED.some((file) => importer.endsWith(file))
          ? DEEP_FAST_CHECK
          : null,
    },
  ],
  test: {
    // As in vitest.config.ts: a worker per core running file after file in one process, so state one file
    // leaves behind for the next shows up here too, in an order `npm test` never tries.
    maxWorkers: Math.max(2, availableParallelism()),
    isolate: false,
    sequence: { shuffle: true, seed },
    env: { HARNESS_DEEP_SEED: String(seed) },
    globalSetup: ['test/setup/python-path.ts', 'test/setup/compile-cache.ts'],
    setupFiles: ['test/setup/fast-check.ts', 'test/setup/fresh-state.ts'],
    reporters: ['default', './test/setup/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'deep',
          include: [...Object.values(SUITES).flat(), 'test/deep/**/*.test.ts'],
          exclude: PROCESS_STATE,
          ...timeouts,
        },
      },
      { extends: true, test: { name: 'deep-isolated', include: PROCESS_STATE, isolate: true, ...timeouts } },
    ],
  },
});
