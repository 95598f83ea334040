import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { equalPrefix, type NumberRun, NumberRuns } from './number-runs.ts';

/**
 * The oracle is the joined plain array (what the samples op built before it kept runs): reading the
 * runs back, testing every value and comparing prefixes with `===` element by element.
 */

// A few shared stores, so runs of two lists often read the same array (where the identity shortcut applies).
const value = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: -5, max: 5 }) },
  { weight: 1, arbitrary: fc.constantFrom(Number.NaN, -0, 0.5, 2 ** 40) },
);
const stores = fc.tuple(
  fc.array(fc.integer({ min: -3, max: 3 }), { minLength: 1, maxLength: 12 }),
  fc.array(value, { minLength: 1, maxLength: 12 }),
);

type Store = Int32Array | number[];

function runArb(shared: readonly Store[]): fc.Arbitrary<NumberRun> {
  const stored = fc
    .tuple(fc.nat({ max: shared.length - 1 }), fc.nat({ max: 12 }), fc.nat({ max: 12 }))
    .map(([i, a, b]) => {
      const data = shared[i] as Store;
      const from = Math.min(a, b, data.length);
      return { data, from, to: Math.min(Math.max(a, b), data.length) };
    });
  const fill = fc.record({ fill: value, count: fc.nat({ max: 5 }) });
  return fc.oneof({ weight: 3, arbitrary: stored }, { weight: 1, arbitrary: fill });
}

const join = (runs: readonly NumberRun[]): number[] =>
  runs.flatMap((r) =>
    'fill' in r ? new Array<number>(r.count).fill(r.fill) : Array.from(r.data.slice(r.from, r.to)),
  );

const sameValues = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && a.every((v, i) => Object.is(v, b[i]));

const lists = stores.chain(([ints, plain]) => {
  const shared: Store[] = [Int32Array.from(ints), plain, Int32Array.from(ints)];
  const list = fc.array(runArb(shared), { maxLength: 6 });
  return fc.tuple(list, list);
});

describe('NumberRuns', () => {
  it('reads back as the joined array and tests every value as the array would', () => {
    fc.assert(
      fc.property(lists, ([runs]) => {
        const joined = join(runs);
        const r = new NumberRuns(runs);
        expect(r.length).toBe(joined.length);
        expect(sameValues(r.toArray(), joined)).toBe(true);
        expect(r.every(Number.isInteger)).toBe(joined.every(Number.isInteger));
        expect(r.every((v) => v >= 0)).toBe(joined.every((v) => v >= 0));
      }),
    );
  });

  it('counts Int32Array runs as passing when asked, and only those', () => {
    const r = new NumberRuns([
      { data: Int32Array.of(-1, 2), from: 0, to: 2 },
      { data: [-1.5], from: 0, to: 1 },
    ]);
    expect(r.every((v) => v > 0, true)).toBe(false);
    expect(new NumberRuns([{ data: Int32Array.of(-1), from: 0, to: 1 }]).every((v) => v > 0, true)).toBe(
      true,
    );
  });
});

describe('equalPrefix', () => {
  it('is the element-by-element === comparison of the joined arrays', () => {
    fc.assert(
      fc.property(lists, fc.nat({ max: 40 }), ([a, b], cut) => {
        const x = join(a);
        const y = join(b);
        const n = Math.min(cut, x.length, y.length);
        let expected = true;
        for (let k = 0; k < n; k += 1) if (x[k] !== y[k]) expected = false;
        expect(equalPrefix(new NumberRuns(a).runs, new NumberRuns(b).runs, n)).toBe(expected);
      }),
    );
  });

  it('does not take the same plain array for equal to itself (NaN !== NaN)', () => {
    const data = [1, Number.NaN];
    const run = { data, from: 0, to: 2 };
    expect(equalPrefix([run], [run], 2)).toBe(false);
  });

  it('compares the same Int32Array at different offsets', () => {
    const data = Int32Array.of(1, 2, 3, 4);
    expect(equalPrefix([{ data, from: 0, to: 2 }], [{ data, from: 2, to: 4 }], 2)).toBe(false);
    expect(equalPrefix([{ data, from: 1, to: 3 }], [{ data, from: 1, to: 4 }], 2)).toBe(true);
  });
});
