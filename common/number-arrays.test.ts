import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { bitArray, finiteArray, intArray, nullableNumberArray } from './number-arrays.ts';

// The oracle is zod itself: each fast schema must answer as the `z.array(...)` it stands for does,
// value, success and issues (paths, codes, messages), inside an object as the dump schemas use them.
const PAIRS = [
  ['intArray', intArray(), z.array(z.number().int())],
  ['bitArray', bitArray(), z.array(z.number().int().min(0).max(1))],
  ['finiteArray', finiteArray(), z.array(z.number())],
  ['nullableNumberArray', nullableNumberArray(), z.array(z.number().nullable())],
] as const;

const element = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(0, 1) },
  { weight: 4, arbitrary: fc.integer() },
  fc.constantFrom(-0, 2, -1, 0.5, 2 ** 53, -(2 ** 53), 2 ** 60, Number.NaN, Infinity, -Infinity, null),
  fc.double(),
  fc.constantFrom('1', true, undefined, {}, [1]),
);
const value = fc.oneof(
  { weight: 8, arbitrary: fc.array(element, { maxLength: 40 }) },
  fc.array(fc.constantFrom(0, 1), { maxLength: 40 }),
  fc.constantFrom(null, undefined, 'x', 3, { 0: 1, length: 1 }),
);

describe('fast number-array schemas', () => {
  for (const [name, fast, strict] of PAIRS)
    it(`${name} answers as z.array does`, () => {
      const fastObject = z.object({ a: z.object({ m: fast }) });
      const strictObject = z.object({ a: z.object({ m: strict }) });
      fc.assert(
        fc.property(value, (v) => {
          const got = fastObject.safeParse({ a: { m: v } });
          const want = strictObject.safeParse({ a: { m: v } });
          expect(got.success).toBe(want.success);
          expect(got.data).toEqual(want.data);
          expect(got.error?.issues).toEqual(want.error?.issues);
        }),
        { numRuns: 800 },
      );
    });

  it('takes an accepted array as it is (no copy)', () => {
    const tokens = [5, 6, 7];
    expect(intArray().parse(tokens)).toBe(tokens);
  });
});
