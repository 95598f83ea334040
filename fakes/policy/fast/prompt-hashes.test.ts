import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tokenIdsDigest } from '../../../contracts/request-digest.ts';
import { completionId } from '../completion.ts';
import { idsDigest } from '../ids-hashes.ts';
import { PromptHashes } from './prompt-hashes.ts';

/**
 * The policy's continued hashes against the whole-list expressions they replace (the oracle: what the
 * policy computed per request before): the completion id from `ids.join(',')`, the reply seed from
 * `Int32Array.from(ids)` and `tokenIdsDigest(ids)`. Requests come as sessions send them (each
 * re-sending the previous ids plus more) and as they must not be trusted to: a changed earlier id, a
 * shorter list, another session, no session key.
 */

const id = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 200_000 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(0, -0, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 53, 1e21, 0.5, Number.NaN, -7),
  },
);

type Step =
  | { kind: 'extend'; ids: number[] }
  | { kind: 'edit'; at: number; id: number }
  | { kind: 'cut'; keep: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('extend' as const),
      ids: fc.array(id, { maxLength: 30 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('edit' as const), at: fc.nat(), id }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cut' as const), keep: fc.nat() }) },
);

const sessionKey = fc.constantFrom<string | null>('s1', 's2', null);

function oracleCompletionId(ids: readonly number[], counter: number): string {
  const crc = crc32(`${ids.join(',')}#${counter}`);
  return `chatcmpl-${crc.toString(16).padStart(8, '0')}${counter.toString(16).padStart(6, '0')}`;
}

describe('PromptHashes', () => {
  it('gives the whole-list values for every request of interleaved sessions (two kept at most)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(sessionKey, step), { minLength: 1, maxLength: 25 }), (requests) => {
        const hashes = new PromptHashes(2);
        // Each session's current ids; every request is a fresh copy, as a parsed body is.
        const lists = new Map<string | null, number[]>();
        requests.forEach(([key, s], counter) => {
          let ids = [...(lists.get(key) ?? [])];
          if (s.kind === 'extend') ids = ids.concat(s.ids);
          else if (s.kind === 'edit') {
            if (ids.length > 0) ids[s.at % ids.length] = s.id;
          } else ids = ids.slice(0, s.keep % (ids.length + 1));
          lists.set(key, ids);
          const got = hashes.idsHashes(key, ids);
          expect(completionId(got.joinedTextCrc, counter)).toBe(oracleCompletionId(ids, counter));
          expect(got.int32Crc).toBe(crc32(Buffer.from(Int32Array.from(ids).buffer)));
          expect(idsDigest(got)).toBe(tokenIdsDigest(ids));
          // Asked again for the same request (the log asks after the answer did): the same values.
          expect(idsDigest(hashes.idsHashes(key, ids))).toBe(tokenIdsDigest(ids));
        });
      }),
      { numRuns: 300 },
    );
  });

  it('keeps only ids an Int32Array holds exactly (a later prompt equal to their int32 value is not a continuation)', () => {
    const hashes = new PromptHashes();
    for (const [first, second] of [
      [[2 ** 31], [-(2 ** 31), 5]],
      [[1.5], [1, 7]],
      [[2 ** 32 + 3], [3, 1]],
      [
        [-0, 4],
        [0, 4, 9],
      ],
    ] as const) {
      hashes.idsHashes('k', first);
      const got = hashes.idsHashes('k', second);
      expect(idsDigest(got)).toBe(tokenIdsDigest(second));
      expect(got.int32Crc).toBe(crc32(Buffer.from(Int32Array.from(second).buffer)));
      expect(completionId(got.joinedTextCrc, 1)).toBe(oracleCompletionId(second, 1));
    }
  });

  it('matches Python zlib.crc32 on fixed prompts', () => {
    // /usr/bin/python3: 'chatcmpl-%08x%06x' % (zlib.crc32((','.join(map(str, ids)) + '#' + str(c)).encode()), c)
    // and zlib.crc32(struct.pack('<%di' % len(ids), *ids)) for the seed.
    const hashes = new PromptHashes();
    const check = (ids: number[], counter: number, expectedId: string, seed: number) => {
      const got = hashes.idsHashes('p', ids);
      expect(completionId(got.joinedTextCrc, counter)).toBe(expectedId);
      expect(got.int32Crc).toBe(seed);
    };
    check([1, 2, 3], 1, 'chatcmpl-1b496327000001', 2_967_478_931);
    check([], 7, 'chatcmpl-47cdc091000007', 0);
    check([151644, 8948, 198, -5, 2 ** 31 - 1, -(2 ** 31)], 4096, 'chatcmpl-fef32d50001000', 3_016_120_380);
    const long = Array.from({ length: 13_334 }, (_, i) => i * 3);
    check(
      long.slice(0, 5000),
      1,
      oracleCompletionId(long.slice(0, 5000), 1),
      crc32(Buffer.from(Int32Array.from(long.slice(0, 5000)).buffer)),
    );
    check(long, 123_456, 'chatcmpl-75e161b001e240', 3_228_738_940);
  });
});
