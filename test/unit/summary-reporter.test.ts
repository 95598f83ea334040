import fc from 'fast-check';
import { expect, it } from 'vitest';
import { failureText } from '../setup/summary-reporter.ts';

// The closing line carries what replays a failed property: the seed and path from fast-check's own
// failure message (the oracle is the text fast-check writes, not a string made up here).
it("names a failed property's seed and path, taken from fast-check's message", () => {
  let message = '';
  try {
    fc.assert(
      fc.property(fc.integer(), (n) => n < 100),
      { seed: 4711, verbose: fc.VerbosityLevel.None },
    );
  } catch (error) {
    message = (error as Error).message;
  }
  const path = /path: "([^"]*)"/.exec(message)?.[1];
  expect(path).toBeDefined();
  expect(failureText({ message } as never)).toBe(
    `${message.split('\n')[0]} (fast-check seed 4711, path "${path}"; FC_SEED=4711 replays it)`,
  );
});

it('keeps the first line alone for any other failure', () => {
  expect(failureText({ message: 'expected 1 to be 2\n\nmore' } as never)).toBe('expected 1 to be 2');
});
