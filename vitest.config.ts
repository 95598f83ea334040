import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// One project per suite so each can run alone (`npm run test:<suite>`). Unit tests live next to the
// code they test; suites that start servers or processes live under test/<suite>/.
const UNIT_ROOTS = [
  'contracts',
  'recipe',
  'fakes',
  'replay',
  'gpu',
  'common',
  'cli',
  'miles-bridge',
  'scripts',
];
/**
 * Unit files that leave state behind in the whole process, so they run in a process of their own
 * (project `unit-isolated`, part of `npm run test:unit`): native-json-keys poisons V8's JSON.parse on
 * purpose (an escaped key misread through the hidden classes its parses leave), which would then misread
 * keys in the oracles of later files sharing the worker.
 */
export const PROCESS_STATE = ['common/native-json-keys.test.ts'];

/** Each suite's test files, by project name: `npm test` runs them all, `npm run test:deep` too (shuffled). */
export const SUITES = {
  unit: [...UNIT_ROOTS.map((r) => `${r}/**/*.test.ts`), 'test/unit/**/*.test.ts'],
  drift: ['test/drift/**/*.test.ts'],
  servers: ['test/servers/**/*.test.ts'],
  replay: ['test/replay/**/*.test.ts'],
  miles: ['test/miles/**/*.test.ts'],
  gpu: ['test/gpu/**/*.test.ts'],
};

export default defineConfig({
  test: {
    // One worker per core (vitest's default leaves one core idle: a single worker on two cores), each
    // running file after file in the same process: a fresh process per file cost more CPU than the tests
    // of most files (docs/performance.md, "Test suite budget"). No test changes process.env, the working
    // directory or a global, and each file starts and closes its own servers.
    maxWorkers: Math.max(2, availableParallelism()),
    isolate: false,
    // A safety net for every project's hooks, as the projects' testTimeout is for tests: loading HF's Qwen3
    // tokenizer (hf-bpe-tokenizer.python.test.ts) and the refresh-surface fixture run
    // (test/drift/refresh-surface.test.ts) took over vitest's 10 s in shuffled full runs at load 13,
    // without a wrong answer.
    hookTimeout: 30_000,
    globalSetup: ['test/setup/python-path.ts', 'test/setup/compile-cache.ts'],
    setupFiles: ['test/setup/fast-check.ts', 'test/setup/fresh-state.ts'],
    reporters: ['default', './test/setup/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: SUITES.unit,
          exclude: PROCESS_STATE,
          // A safety net, not a speed bound: a few properties take 2–3 s alone and over 5 s (vitest's
          // default) on 2 busy cores, which failed them without a wrong answer.
          testTimeout: 30_000,
        },
      },
      {
        extends: true,
        test: { name: 'unit-isolated', include: PROCESS_STATE, isolate: true, testTimeout: 30_000 },
      },
      {
        // A safety net as in unit: the python: sides start an interpreter, which took over vitest's 5 s
        // default on 2 busy cores without a wrong answer.
        extends: true,
        test: { name: 'drift', include: SUITES.drift, testTimeout: 30_000 },
      },
      {
        extends: true,
        test: { name: 'servers', include: SUITES.servers, testTimeout: 30_000 },
      },
      {
        extends: true,
        test: { name: 'replay', include: SUITES.replay, testTimeout: 120_000 },
      },
      {
        // Miles' own Python on CPU; skipped with reasons without MILES_ROOT (test/miles/gate.ts).
        extends: true,
        test: {
          name: 'miles',
          include: SUITES.miles,
          testTimeout: 600_000,
          hookTimeout: 600_000,
        },
      },
      {
        extends: true,
        test: {
          name: 'gpu',
          include: SUITES.gpu,
          testTimeout: 3_600_000,
          hookTimeout: 600_000,
        },
      },
    ],
  },
});
