import { defineConfig } from 'vitest/config';

// The tests Stryker runs against the modules issue 35 moved (docs/testing.md "Issue 35: before and after"):
// the unit tests next to them, the same globs on the tree before the moves (c776157) and after, so both
// runs use one configuration. Servers suites stay out: too slow per mutant.
export default defineConfig({
  test: {
    setupFiles: ['test/setup/fast-check.ts'],
    include: [
      'fakes/session/**/*.test.ts',
      'fakes/harbor/engine/**/*.test.ts',
      'common/**/*.test.ts',
      'replay/grpo/**/*.test.ts',
      'replay/metrics/**/*.test.ts',
      'replay/model/**/*.test.ts',
      'replay/checks/**/*.test.ts',
      'replay/differential/**/*.test.ts',
    ],
    testTimeout: 60_000,
  },
});
