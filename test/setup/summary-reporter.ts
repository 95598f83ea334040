import type { SerializedError } from 'vitest';
import type { Reporter, TestModule } from 'vitest/node';

/** The first line of an error's message: what a closing line can carry. */
function firstLine(error: SerializedError): string {
  return (error.message ?? String(error)).split('\n')[0] ?? '';
}

/**
 * A failed test's closing text: the message's first line and, for a fast-check property, the seed and
 * path fast-check printed further down (`{ seed: S, path: "P", endOnFailure: true }`), so the line a CI
 * log ends with is enough to replay it (`FC_SEED=S`).
 */
export function failureText(error: SerializedError): string {
  const replay = /\{ seed: (-?\d+), path: "([^"]*)"/.exec(error.message ?? '');
  return replay === null
    ? firstLine(error)
    : `${firstLine(error)} (fast-check seed ${replay[1]}, path "${replay[2]}"; FC_SEED=${replay[1]} replays it)`;
}

/**
 * Prints one plain closing line, `vitest: N passed, N failed, N skipped`, after vitest's own summary,
 * so CI logs state the counts in a form any log reader understands. A file that failed before any test
 * ran (an error while collecting it), an error outside any test, and the first failed tests are named
 * after the counts, so the line says what failed and a run that ran nothing never closes with zeros.
 */
export function summaryLine(
  testModules: ReadonlyArray<TestModule>,
  unhandledErrors: ReadonlyArray<SerializedError>,
): string {
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  const broken: string[] = [];
  const failures: string[] = [];
  for (const module of testModules) {
    for (const test of module.children.allTests()) {
      const state = test.result().state;
      if (state === 'passed') passed += 1;
      else if (state === 'failed') {
        failed += 1;
        const error = test.result().errors?.[0];
        failures.push(`${test.fullName}${error ? `: ${failureText(error)}` : ''}`);
      } else skipped += 1;
    }
    const errors = module.errors();
    if (errors.length > 0) broken.push(`${module.relativeModuleId}: ${errors.map(firstLine).join('; ')}`);
  }
  const counts = `vitest: ${passed} passed, ${failed} failed, ${skipped} skipped`;
  const notes = [
    ...(failures.length > 0
      ? [
          `failed: ${failures.slice(0, 5).join(' | ')}${failures.length > 5 ? ` | and ${failures.length - 5} more` : ''}`,
        ]
      : []),
    ...(broken.length > 0
      ? [`${broken.length} file${broken.length === 1 ? '' : 's'} failed: ${broken.join(' | ')}`]
      : []),
    ...(unhandledErrors.length > 0
      ? [
          `${unhandledErrors.length} error${unhandledErrors.length === 1 ? '' : 's'} outside tests: ${unhandledErrors.map(firstLine).join(' | ')}`,
        ]
      : []),
  ];
  return notes.length > 0 ? `${counts}; ${notes.join('; ')}` : counts;
}

export default class SummaryReporter implements Reporter {
  onTestRunEnd(
    testModules: ReadonlyArray<TestModule>,
    unhandledErrors: ReadonlyArray<SerializedError>,
  ): void {
    process.stdout.write(`\n${summaryLine(testModules, unhandledErrors)}\n`);
  }
}
