import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pythonJsonDumps } from '../../common/python-json/dumps.ts';
import { TokenSnapshot } from './token-snapshot.ts';

/**
 * The oracle is the plain array each snapshot was built from: a chain of snapshots, each sharing some
 * prefix of its parent's ids, must read back exactly (same numbers, `-0` and floats included) and print
 * the same JSON.
 */

// Mostly 32-bit ids (the typed-array tails), sometimes values an Int32Array would change.
const id = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }) },
  { weight: 1, arbitrary: fc.constantFrom(-0, 0.5, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 1e300, 151_643) },
);
// Each step: how many of the previous ids to keep (clamped), then the new ids.
const chain = fc.array(fc.tuple(fc.nat({ max: 60 }), fc.array(id, { maxLength: 25 })), {
  minLength: 1,
  maxLength: 8,
});

function build(steps: Array<[number, number[]]>): Array<{ ids: number[]; snapshot: TokenSnapshot }> {
  const out: Array<{ ids: number[]; snapshot: TokenSnapshot }> = [];
  let prev: { ids: number[]; snapshot: TokenSnapshot } | null = null;
  for (const [keep, more] of steps) {
    const ids: number[] = [...(prev?.ids.slice(0, keep) ?? []), ...more];
    const snapshot = TokenSnapshot.of(ids, prev?.snapshot ?? null);
    out.push({ ids, snapshot });
    prev = { ids, snapshot };
  }
  return out;
}

const sameIds = (a: readonly number[], b: readonly number[]) =>
  a.length === b.length && a.every((v, i) => Object.is(v, b[i]));

describe('TokenSnapshot', () => {
  it('reads back every snapshot of a chain exactly, as a plain array that prints the same JSON', () => {
    fc.assert(
      fc.property(chain, (steps) => {
        for (const { ids, snapshot } of build(steps)) {
          const back = snapshot.toArray();
          expect(Array.isArray(back)).toBe(true);
          expect(snapshot.length).toBe(ids.length);
          expect(sameIds(back, ids)).toBe(true);
          expect(pythonJsonDumps({ input_ids: back })).toBe(pythonJsonDumps({ input_ids: ids }));
        }
      }),
    );
  });

  it('slices like Array.prototype.slice and finds the common prefix a plain === scan finds', () => {
    fc.assert(
      fc.property(
        chain,
        fc.nat({ max: 200 }),
        fc.nat({ max: 200 }),
        fc.array(id, { maxLength: 80 }),
        (steps, a, b, other) => {
          const { ids, snapshot } = build(steps).at(-1)!;
          expect(sameIds(snapshot.slice(a, b), ids.slice(a, b))).toBe(true);
          // A probe that starts with some of the ids, so long common prefixes occur.
          const probe = [...ids.slice(0, a), ...other];
          let expected = 0;
          while (expected < Math.min(ids.length, probe.length) && ids[expected] === probe[expected])
            expected++;
          expect(snapshot.commonPrefixLength(probe)).toBe(expected);
        },
      ),
    );
  });

  it('gives pieces that read back as the slice, non-empty, sharing the parent arrays for the shared prefix', () => {
    fc.assert(
      fc.property(chain, fc.nat({ max: 200 }), fc.nat({ max: 200 }), (steps, a, b) => {
        const built = build(steps);
        const { ids, snapshot } = built.at(-1)!;
        const pieces = snapshot.pieces(a, b);
        const joined = pieces.flatMap((p) => Array.from(p.data.slice(p.from, p.to)));
        expect(sameIds(joined, ids.slice(a, b))).toBe(true);
        expect(pieces.every((p) => p.from < p.to && p.to <= p.data.length)).toBe(true);
        // The snapshot's own tail is the last piece of its whole range; what precedes it is its parent's.
        const parent = built.at(-2)?.snapshot;
        if (parent !== undefined && snapshot.length > 0) {
          const own = snapshot.pieces(0, snapshot.length);
          const parentData = new Set(parent.pieces(0, parent.length).map((p) => p.data));
          expect(own.slice(0, -1).every((p) => parentData.has(p.data))).toBe(true);
        }
      }),
    );
  });

  it('extends a snapshot as slice + concat, and builds the child of prompt + more that `of` builds', () => {
    // NaN too: a plain tail may hold one (a backend's NaN id), and `===` never matches it.
    const odd = fc.oneof({ weight: 6, arbitrary: id }, { weight: 1, arbitrary: fc.constant(Number.NaN) });
    const oddChain = fc.array(fc.tuple(fc.nat({ max: 60 }), fc.array(odd, { maxLength: 25 })), {
      minLength: 1,
      maxLength: 8,
    });
    fc.assert(
      fc.property(
        oddChain,
        fc.nat({ max: 7 }),
        fc.nat({ max: 80 }),
        fc.array(odd, { maxLength: 12 }),
        fc.array(odd, { maxLength: 12 }),
        fc.nat({ max: 7 }),
        (steps, at, keep, more, completion, parentAt) => {
          const built = build(steps);
          const base = built[at % built.length]!;
          // The prompt: the first `keep` ids of a snapshot, then new ones (the chat route's `extend`).
          const prompt = TokenSnapshot.extend(base.snapshot, keep, more);
          const promptIds = base.ids.slice(0, keep).concat(more);
          expect(sameIds(prompt.toArray(), promptIds)).toBe(true);
          expect(prompt.length).toBe(promptIds.length);
          // Its child under the snapshot it extends (the commit) or under another one (any parent).
          const parent =
            parentAt % 3 === 0
              ? null
              : parentAt % 3 === 1
                ? base.snapshot
                : built[parentAt % built.length]!.snapshot;
          const all = promptIds.concat(completion);
          const expectedShared = parent === null ? 0 : parent.commonPrefixLength(all);
          const expected = TokenSnapshot.of(all, parent, expectedShared);
          const { snapshot, shared } = prompt.concatFor(completion, parent);
          expect(shared).toBe(expectedShared);
          expect(sameIds(snapshot.toArray(), all)).toBe(true);
          // The same layout: the same parent arrays by reference, the same own tail.
          const layout = (s: TokenSnapshot) =>
            s.pieces(0, s.length).map((p, i, list) => ({
              from: p.from,
              to: p.to,
              data: i === list.length - 1 ? Array.from(p.data) : p.data,
            }));
          const got = layout(snapshot);
          const want = layout(expected);
          expect(got.length).toBe(want.length);
          got.forEach((piece, i) => {
            expect([piece.from, piece.to]).toEqual([want[i]!.from, want[i]!.to]);
            if (Array.isArray(piece.data)) expect(sameIds(piece.data, want[i]!.data as number[])).toBe(true);
            else expect(piece.data).toBe(want[i]!.data);
          });
        },
      ),
      { numRuns: 400 },
    );
  });

  it('keeps no reference to the array it was built from', () => {
    const ids = [1, 2, 3];
    const snapshot = TokenSnapshot.of(ids);
    ids[0] = 7;
    ids.push(4);
    expect(snapshot.toArray()).toEqual([1, 2, 3]);
  });
});
