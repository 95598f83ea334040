import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RowIndex } from './row-index.ts';

// The oracle is the string key RowIndex replaces: `${head}|${column.join(',')}|...` in a Map.
const stringKey = (head: string, columns: readonly (readonly number[])[]): string =>
  [head, ...columns.map((c) => c.join(','))].join('|');

// Few heads and a small alphabet, so rows repeat, share hashes' inputs and differ by one element.
const column = fc.array(fc.oneof(fc.integer({ min: -2, max: 3 }), fc.constantFrom(-0, 0.5, 2 ** 40 + 1)), {
  maxLength: 6,
});
const row = fc.record({
  head: fc.constantFrom('1|', '1|0', '2|0'),
  columns: fc.array(column, { minLength: 1, maxLength: 2 }),
  value: fc.integer(),
});

describe('RowIndex', () => {
  it('finds, misses and replaces as a Map keyed by the joined columns', () => {
    fc.assert(
      fc.property(fc.array(row, { maxLength: 30 }), fc.array(row, { maxLength: 30 }), (stored, asked) => {
        const index = new RowIndex<number>();
        const map = new Map<string, number>();
        for (const r of stored) {
          index.set(r.head, r.columns, r.value);
          map.set(stringKey(r.head, r.columns), r.value);
        }
        for (const r of [...stored, ...asked]) {
          const key = stringKey(r.head, r.columns);
          expect(index.has(r.head, r.columns)).toBe(map.has(key));
          expect(index.get(r.head, r.columns)).toBe(map.get(key));
        }
      }),
      { numRuns: 500 },
    );
  });
});
