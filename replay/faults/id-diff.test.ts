import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstDifference, idDiff } from './id-diff.ts';

/**
 * The catalogue page's id diff, against its definition (docs/field-failures.md "The HTML page"): the
 * sequences agree before `start` and part at it; after each side's span they share the rest, and that
 * shared tail is the longest one that does not reach back over `start`. Plus a planted edit found where it
 * was planted. fast-check prints its seed on failure (test/setup/fast-check.ts).
 */

const ids = fc.array(fc.integer({ min: 0, max: 6 }), { maxLength: 20 });

describe('idDiff', () => {
  it('is null for equal sequences and finds the examples the page relies on', () => {
    expect(idDiff([1, 2, 3], [1, 2, 3])).toBeNull();
    expect(idDiff([], [])).toBeNull();
    // One id swapped at the end (a turn ended by <|endoftext|>).
    expect(idDiff([5, 6, 151645], [5, 6, 151643])).toEqual({ start: 2, expectedEnd: 3, actualEnd: 3 });
    // The request stops where the previous turn went on (a retry after a rollback).
    expect(idDiff([1, 2, 3, 4], [1, 2])).toEqual({ start: 2, expectedEnd: 4, actualEnd: 2 });
    // Two quotes inserted in the middle.
    expect(idDiff([7, 30, 9], [7, 1, 30, 1, 9])).toEqual({ start: 1, expectedEnd: 2, actualEnd: 4 });
    // A shared tail that could overlap the shared head is cut at start.
    expect(idDiff([1, 1], [1, 1, 1])).toEqual({ start: 2, expectedEnd: 2, actualEnd: 3 });
  });

  it('parts where the sequences part and keeps the longest shared tail after', () => {
    fc.assert(
      fc.property(ids, ids, (expected, actual) => {
        const diff = idDiff(expected, actual);
        if (diff === null) {
          expect(actual).toEqual(expected);
          return;
        }
        const { start, expectedEnd, actualEnd } = diff;
        expect(actual.slice(0, start)).toEqual(expected.slice(0, start));
        if (start < expected.length && start < actual.length) expect(actual[start]).not.toBe(expected[start]);
        else expect(start).toBe(Math.min(expected.length, actual.length));
        expect(expectedEnd).toBeGreaterThanOrEqual(start);
        expect(actualEnd).toBeGreaterThanOrEqual(start);
        expect(actual.slice(actualEnd)).toEqual(expected.slice(expectedEnd));
        // Longest: one more shared id would reach over start or is not shared.
        if (expectedEnd > start && actualEnd > start)
          expect(actual[actualEnd - 1]).not.toBe(expected[expectedEnd - 1]);
      }),
    );
  });

  it('finds a planted edit where it was planted', () => {
    fc.assert(
      fc.property(ids, ids, fc.nat(), fc.integer({ min: 7, max: 9 }), (head, tail, cut, planted) => {
        const base = [...head, ...tail];
        const at = cut % (base.length + 1);
        // The planted id never occurs in the base, so the sequences part exactly there.
        const edited = [...base.slice(0, at), planted, ...base.slice(at)];
        expect(firstDifference(base, edited)).toBe(at);
        expect(idDiff(base, edited)).toMatchObject({ start: at, actualEnd: at + 1, expectedEnd: at });
      }),
    );
  });
});
