// Stryker over the modules issue 35 moved, before (c776157) and after, in one configuration
// (docs/testing.md "Issue 35: before and after"). The files to mutate differ per tree and are named on
// the command line (`--mutate`); see benchmarks/mutation/issue35.sh.
import base from './stryker.config.mjs';

/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  ...base,
  vitest: { configFile: 'vitest.mutate-house.config.ts' },
  concurrency: 1,
  mutate: [],
  reporters: ['clear-text', 'progress', 'json'],
  tempDirName: '.stryker-tmp-house',
};
