import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WireSample } from '../../contracts/wire-sample.ts';
import { TokenSnapshot } from './token-snapshot.ts';
import { startsWith, stripLastOutputTokens } from './turn-sample.ts';
import {
  SnapshotPrefix,
  sliceTokens,
  type TurnSample,
  tokenCount,
  toTurnSample,
  toWireSample,
} from './values/turn-tokens.ts';

// The oracle is the one-array sample Miles keeps (`Sample.tokens`), with Python's slice rules written out
// by hand: every two-part operation must give what the joined list gives.

const ids = fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 12 });

/**
 * A two-part sample over `head ++ tail`, the other fields as a turn sample has them. With `shareWith`, the
 * head is a prefix of a node snapshot (as a record's prompt read in place is) that keeps its common prefix
 * with `shareWith` by reference, followed by one id past the prompt (the node's completion).
 */
function twoPart(
  head: number[],
  tail: number[],
  responseLength = tail.length,
  shareWith: TokenSnapshot | null | undefined = undefined,
): TurnSample {
  const { tokens: _tokens, ...rest } = wire([...head, ...tail], responseLength);
  if (shareWith === undefined) return { ...rest, head, tail };
  const snapshot = TokenSnapshot.of([...head, 9], shareWith);
  return { ...rest, head: new SnapshotPrefix(snapshot, head.length), tail };
}

const HEAD_KINDS = ['plain', 'snapshot'] as const;

function wire(tokens: number[], responseLength: number): WireSample {
  return {
    tokens,
    response: 'r',
    response_length: responseLength,
    loss_mask: Array.from({ length: responseLength }, (_, i) => i % 2),
    rollout_log_probs: Array.from({ length: responseLength }, (_, i) => -i / 8),
    rollout_routed_experts: null,
    rollout_indexer_topk: null,
    status: 'pending',
    weight_versions: [],
    prefix_cache_info: { cached_tokens: 0, total_prompt_tokens: 0 },
    metadata: {},
    reward: null,
  };
}

/** Python's `xs[start:stop]` index normalisation for one bound (None = `fallback`). */
function pyBound(k: number | undefined, n: number, fallback: number): number {
  if (k === undefined) return fallback;
  if (k < 0) return Math.max(n + k, 0);
  return Math.min(k, n);
}
function pySlice(xs: readonly number[], start?: number, stop?: number): number[] {
  const lo = pyBound(start, xs.length, 0);
  const hi = pyBound(stop, xs.length, xs.length);
  const out: number[] = [];
  for (let i = lo; i < hi; i += 1) out.push(xs[i] as number);
  return out;
}

const decode = (tokens: readonly number[]) => tokens.join(',');

describe('two-part turn samples (head = prompt ids, tail = output ids)', () => {
  it('slice as the joined token list slices, for any bounds', () => {
    fc.assert(
      fc.property(
        ids,
        ids,
        fc.integer({ min: -16, max: 16 }),
        fc.option(fc.integer({ min: -16, max: 16 })),
        (head, tail, from, to) => {
          const joined = [...head, ...tail];
          for (const kind of HEAD_KINDS) {
            const sample = twoPart(head, tail, tail.length, kind === 'plain' ? undefined : null);
            expect(tokenCount(sample)).toBe(joined.length);
            expect(sliceTokens(sample, from, to ?? undefined)).toEqual(
              pySlice(joined, from, to ?? undefined),
            );
          }
        },
      ),
    );
  });

  it('decide `long.tokens[:len(short.tokens)] == short.tokens` as the joined lists do, wherever the parts split', () => {
    const pair = fc
      .tuple(ids, ids, fc.nat(14), fc.nat(14), fc.nat(14), fc.boolean(), fc.nat(5))
      .map(([a, b, splitLong, cut, splitShort, edit, value]) => {
        const long = [...a, ...b];
        let short = long.slice(0, Math.min(cut, long.length + 2));
        if (short.length < cut) short = short.concat([value, value]);
        if (edit && short.length > 0)
          short = short.with(value % short.length, (short[value % short.length] as number) + 1);
        const at = (xs: number[], k: number) => Math.min(k, xs.length);
        const parts = (xs: number[], k: number) => [xs.slice(0, at(xs, k)), xs.slice(at(xs, k))] as const;
        return {
          long: parts(long, splitLong),
          short: parts(short, splitShort),
          expected: short.length <= long.length && short.every((token, i) => token === long[i]),
        };
      });
    fc.assert(
      fc.property(pair, ({ long, short, expected }) => {
        expect(startsWith(twoPart(...long), twoPart(...short))).toBe(expected);
        // Heads read from snapshots, the short one sharing the long one's stored ids where they agree.
        const longSample = twoPart(long[0], long[1], long[1].length, null);
        const longSnapshot = (longSample.head as SnapshotPrefix).snapshot;
        const shortSample = twoPart(short[0], short[1], short[1].length, longSnapshot);
        expect(startsWith(longSample, shortSample)).toBe(expected);
      }),
    );
  });

  it("strip the last n output tokens as Miles' Sample.strip_last_output_tokens does", () => {
    // radixark/miles@31f1ca96 miles/utils/types.py L221-240: tokens, log-probs and mask lose their last
    // n; the response is decode(tokens[-response_length:]), or "" when nothing is left.
    const cases = fc
      .tuple(
        ids,
        ids.filter((t) => t.length > 0),
        fc.nat(20),
        fc.nat(20),
      )
      .map(([head, tail, split, n]) => {
        const joined = [...head, ...tail];
        const responseLength = tail.length;
        const at = Math.min(split, joined.length);
        return { joined, at, responseLength, n: n % (responseLength + 2) };
      });
    fc.assert(
      fc.property(cases, ({ joined, at, responseLength, n }) => {
        fc.pre(n <= responseLength);
        for (const kind of HEAD_KINDS) {
          const sample = twoPart(
            joined.slice(0, at),
            joined.slice(at),
            responseLength,
            kind === 'plain' ? undefined : null,
          );
          const before = wire(joined, responseLength);
          stripLastOutputTokens(sample, n, decode);
          if (n === 0) {
            expect(toWireSample(sample)).toEqual(before);
            continue;
          }
          const left = responseLength - n;
          expect(toWireSample(sample)).toEqual({
            ...before,
            tokens: pySlice(joined, 0, -n),
            response_length: left,
            loss_mask: pySlice(before.loss_mask ?? [], 0, -n),
            rollout_log_probs: pySlice(before.rollout_log_probs ?? [], 0, -n),
            response: left > 0 ? decode(pySlice(pySlice(joined, 0, -n), -left)) : '',
          });
        }
      }),
    );
  });

  it("compare across the parts: a prefix whose prompt part runs into the other's output part", () => {
    const long = twoPart([1, 2], [3, 4]);
    expect(startsWith(long, twoPart([1, 2, 3], [4]))).toBe(true);
    expect(startsWith(long, twoPart([1], [2, 3]))).toBe(true);
    expect(startsWith(long, twoPart([1, 2, 3], [5]))).toBe(false);
    expect(startsWith(long, twoPart([1, 2, 3, 4], [4]))).toBe(false);
  });

  it('strip leaves absent log-probs and mask absent (Miles checks each for None)', () => {
    const sample = { ...twoPart([1, 2], [3, 4, 5]), loss_mask: null, rollout_log_probs: null };
    stripLastOutputTokens(sample, 2, decode);
    expect([sample.loss_mask, sample.rollout_log_probs, sample.response_length]).toEqual([null, null, 1]);
    expect([sliceTokens(sample, 0), sample.response]).toEqual([[1, 2, 3], '3']);
  });

  it('round-trip a wire sample through the two-part form unchanged', () => {
    fc.assert(
      fc.property(ids, fc.nat(12), (tokens, rl) => {
        const sample = wire(tokens, Math.min(rl, tokens.length));
        expect(toWireSample(toTurnSample(sample))).toEqual(sample);
        expect(toTurnSample(sample).tail).toEqual([]);
      }),
    );
  });
});
