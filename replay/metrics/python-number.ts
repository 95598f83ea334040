import { pythonFloatRepr } from '../../common/python-json/values.ts';

/**
 * A number with the Python type Miles sees. JSON keeps the difference (`1` is an int, `1.0` a float) and
 * some of Miles' metric keys print it (`zero_std/count_1` vs `count_1.0`), so a value that reaches a key
 * carries its type.
 */
export type PythonNumberType = 'int' | 'float';

/**
 * `str(round(value, 1))` (radixark/miles@31f1ca96 miles/ray/rollout/metrics.py
 * `_compute_zero_std_metrics`): an int stays an int; a float is rounded to one decimal the way CPython
 * rounds (the exact binary value, ties to even) and printed by `repr`.
 */
export function pythonRoundOneText(value: number, type: PythonNumberType): string {
  if (type === 'int') return String(value);
  return pythonFloatRepr(pythonRoundOne(value));
}

/** CPython's `round(x, 1)` for a float: correctly rounded from the exact binary value, ties to even. */
export function pythonRoundOne(x: number): number {
  // From 1e16 on every double is an integer, and non-finite values come back as they are.
  if (!Number.isFinite(x) || Math.abs(x) >= 1e16) return x;
  const negative = x < 0 || Object.is(x, -0);
  // toFixed(100) is the exact decimal expansion for the doubles that can be a tie at one decimal.
  const [whole, fraction] = Math.abs(x).toFixed(100).split('.') as [string, string];
  const rest = fraction.slice(1);
  let tenths = BigInt(whole) * 10n + BigInt(fraction[0]!);
  const half = `5${'0'.repeat(rest.length - 1)}`;
  if (rest > half || (rest === half && tenths % 2n === 1n)) tenths += 1n;
  const magnitude = Number(`${tenths / 10n}.${tenths % 10n}`);
  return negative ? -magnitude : magnitude;
}

/**
 * `str(round(float(value), 1) + 0.0)`, the newer zero-std bucket (miles/ray/rollout/metrics.py as stored
 * in the public-code index, 16275 characters; scripts/oracles/metrics_next_oracle.py): ints and floats
 * share a bucket and `-0.0` prints as `0.0`.
 */
export function pythonNormalisedRoundOneText(value: number): string {
  return pythonFloatRepr(pythonRoundOne(value) + 0);
}
