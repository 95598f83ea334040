import { deflateSync } from 'node:zlib';
import type { LoggedSample } from './logged-sample.ts';
import { numpyMean } from './numpy-sum.ts';

/**
 * `has_repetition` (radixark/miles@31f1ca96 miles/utils/metric_utils.py): more than 10000 characters
 * (Python counts code points) and the last 10000 compress more than 10× with `zlib.compress(level=9)`.
 * Node's bundled zlib may differ from CPython's by a few bytes on the same input, which only matters for
 * a text whose ratio is within a hair of 10.
 */
export function hasRepetition(text: string): boolean {
  if (text.length <= 10000) return false;
  const start = lastCodePointsStart(text, 10000);
  // Python's len(text) > 10000: some code point before the last 10000.
  if (start <= 0) return false;
  const raw = Buffer.from(text.slice(start), 'utf8');
  const compressed = deflateSync(raw, { level: 9 });
  return raw.length / compressed.length > 10;
}

const isHigh = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLow = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * Where the last `n` code points of `text` start (a surrogate pair is one, a lone surrogate one, as
 * `Array.from` splits), or -1 when it has fewer. Walked from the end: a response can be megabytes, and
 * splitting all of it into code points only to keep its tail costs more than the compression.
 */
function lastCodePointsStart(text: string, n: number): number {
  let i = text.length;
  for (let count = 0; count < n; count++) {
    if (i === 0) return -1;
    i -= i >= 2 && isLow(text.charCodeAt(i - 1)) && isHigh(text.charCodeAt(i - 2)) ? 2 : 1;
  }
  return i;
}

/** `rollout/repetition_frac`: the mean of `has_repetition(response)` over the rows. */
export function repetitionFrac(samples: readonly Pick<LoggedSample, 'response'>[]): number {
  return numpyMean(samples.map((s) => (hasRepetition(s.response) ? 1 : 0)));
}
