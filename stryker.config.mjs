// Mutation testing over the modules that decide what is trained and how it is weighted (issue 13):
// `npm run mutate` (not part of `npm test`). Score and surviving mutants: docs/testing.md.
/** @type {import('@stryker-mutator/api/core').PartialStrykerOptions} */
export default {
  testRunner: 'vitest',
  vitest: { configFile: 'vitest.mutate.config.ts' },
  // TypeScript 7 has no compiler API for Stryker's tsconfig rewriting (`ts.parseConfigFileTextToJson is
  // not a function`); naming a file that does not exist skips that step.
  tsconfigFile: 'stryker.tsconfig.absent.json',
  ignoreStatic: true,
  coverageAnalysis: 'perTest',
  concurrency: 2,
  mutate: [
    'fakes/session/assembly.ts',
    'fakes/session/fast/run-fold.ts',
    'fakes/session/fast/shared-ones.ts',
    'fakes/session/fast/deferred-leaf.ts',
    'fakes/session/fast/run-leaf-fields.ts',
    'fakes/session/turn-sample.ts',
    'fakes/session/values/turn-tokens.ts',
    'fakes/session/hooks/drop-retries.ts',
    'fakes/session/hooks/default-postprocess.ts',
    'fakes/session/wire/codec.ts',
    'replay/grpo/normalize.ts',
    'replay/grpo/reward-groups.ts',
    'replay/grpo/loss-weights.ts',
    'replay/grpo/float32.ts',
    'replay/checks/exactly-once.ts',
    'replay/checks/only-generated-trained.ts',
    'replay/checks/siblings-agree.ts',
    'replay/checks/every-sample-trainable.ts',
    'replay/checks/segmentation-invariance.ts',
    'replay/checks/group-accounting.ts',
    'replay/checks/token-accounting.ts',
    // The drift checker and what decides its verdicts: token classification, scope, Python's int/float
    // and choices rules, the suggestions for unknown flags.
    'recipe/drift/check-argv.ts',
    'recipe/drift/argv-scan.ts',
    'recipe/drift/flag-scope.ts',
    'recipe/drift/python-values.ts',
    'recipe/drift/nearest-names.ts',
  ],
  reporters: ['clear-text', 'progress', 'json'],
  jsonReporter: { fileName: 'reports/mutation/mutation.json' },
  thresholds: { high: 90, low: 80, break: null },
  tempDirName: '.stryker-tmp',
  cleanTempDir: 'always',
};
