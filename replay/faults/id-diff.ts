/**
 * Where two id sequences part: the catalogue page's one general diff (docs/field-failures.md "The HTML
 * page"). `start` is the first index where they differ (the shorter one's length when one is a prefix of
 * the other); `expectedEnd` and `actualEnd` end each side's differing span, before the longest suffix
 * they still share (which never reaches back over `start`). Equal sequences give null.
 */
export interface IdDiff {
  readonly start: number;
  readonly expectedEnd: number;
  readonly actualEnd: number;
}

export function firstDifference(expected: readonly number[], actual: readonly number[]): number {
  const shorter = Math.min(expected.length, actual.length);
  for (let i = 0; i < shorter; i += 1) if (expected[i] !== actual[i]) return i;
  return shorter;
}

export function idDiff(expected: readonly number[], actual: readonly number[]): IdDiff | null {
  const start = firstDifference(expected, actual);
  if (start === expected.length && start === actual.length) return null;
  // The shared tail, counted from the ends, stopping where either side would reach back over `start`.
  let tail = 0;
  while (
    expected.length - tail > start &&
    actual.length - tail > start &&
    expected[expected.length - 1 - tail] === actual[actual.length - 1 - tail]
  )
    tail += 1;
  return { start, expectedEnd: expected.length - tail, actualEnd: actual.length - tail };
}
