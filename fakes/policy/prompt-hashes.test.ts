import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { messagesDigest, tokenIdsDigest } from '../../contracts/request-digest.ts';
import { completionId } from './completion.ts';
import { idsDigest, PromptHashes } from './prompt-hashes.ts';

/**
 * The policy's continued hashes against the whole-list expressions they replace (the oracle: what the
 * policy computed per request before): the completion id from `ids.join(',')`, the reply seed from
 * `Int32Array.from(ids)`, `tokenIdsDigest(ids)` and `messagesDigest(messages)`. Requests come as
 * sessions do (each re-sending the previous list plus more) and as they must not be trusted to:
 * a changed, dropped or reordered earlier item, a shorter list, another session, no session key.
 */

const id = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 200_000 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(0, -0, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 53, 1e21, 0.5, Number.NaN, -7),
  },
);

// Parsed-JSON-like messages; equal content in another key order is the same canonical JSON.
const message = fc.oneof(
  fc.record({ role: fc.constantFrom('user', 'tool'), content: fc.string({ maxLength: 6 }) }),
  fc
    .record({ content: fc.constantFrom('a', 'é', '\ud800'), role: fc.constant('assistant') })
    .map((m) => ({ ...m, tool_calls: null, n: [1, { x: -0 }] })),
  fc.constantFrom<unknown>('text', 3, null, [], { constructor: 1 }, { toString: 'x', '1': [2] }),
);

type Step =
  | { kind: 'extend'; ids: number[]; messages: unknown[] }
  | { kind: 'edit'; at: number; id: number; message: unknown }
  | { kind: 'cut'; keep: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('extend' as const),
      ids: fc.array(id, { maxLength: 30 }),
      messages: fc.array(message, { maxLength: 3 }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('edit' as const), at: fc.nat(), id, message }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('cut' as const), keep: fc.nat() }) },
);

const sessionKey = fc.constantFrom<string | null>('s1', 's2', null);

function oracleCompletionId(ids: readonly number[], counter: number): string {
  const crc = crc32(`${ids.join(',')}#${counter}`);
  return `chatcmpl-${crc.toString(16).padStart(8, '0')}${counter.toString(16).padStart(6, '0')}`;
}

describe('PromptHashes', () => {
  it('gives the whole-list values for every request of interleaved sessions', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(sessionKey, step), { minLength: 1, maxLength: 25 }), (requests) => {
        const hashes = new PromptHashes(2);
        // Each session's current lists; every request is a fresh copy, as a parsed body is.
        const lists = new Map<string | null, { ids: number[]; messages: unknown[] }>();
        requests.forEach(([key, s], counter) => {
          const current = lists.get(key) ?? { ids: [], messages: [] };
          let ids = [...current.ids];
          let messages = structuredClone(current.messages);
          if (s.kind === 'extend') {
            ids.push(...s.ids);
            messages.push(...s.messages);
          } else if (s.kind === 'edit') {
            if (ids.length > 0) ids[s.at % ids.length] = s.id;
            if (messages.length > 0) messages[s.at % messages.length] = s.message;
          } else {
            ids = ids.slice(0, s.keep % (ids.length + 1));
            messages = messages.slice(0, s.keep % (messages.length + 1));
          }
          lists.set(key, { ids, messages });
          const got = hashes.idsHashes(key, ids);
          expect(completionId(got.joinedTextCrc, counter)).toBe(oracleCompletionId(ids, counter));
          expect(got.int32Crc).toBe(crc32(Buffer.from(Int32Array.from(ids).buffer)));
          expect(idsDigest(got)).toBe(tokenIdsDigest(ids));
          // Asked again for the same request (the log asks after the answer did): the same values.
          expect(idsDigest(hashes.idsHashes(key, ids))).toBe(tokenIdsDigest(ids));
          expect(hashes.messagesDigest(key, messages)).toBe(messagesDigest(messages));
        });
      }),
      { numRuns: 300 },
    );
  });

  it('notices an earlier message whose content changed, or whose keys differ', () => {
    const hashes = new PromptHashes();
    const first = [{ role: 'user', content: 'a', n: [1] }];
    hashes.messagesDigest('s', first);
    for (const changed of [
      [{ role: 'user', content: 'b', n: [1] }, { role: 'tool' }],
      [{ role: 'user', content: 'a', n: [1], extra: 1 }, { role: 'tool' }],
      [{ content: 'a', n: [1] }, { role: 'tool' }],
      [{ role: 'user', content: ['a'], n: [1] }, { role: 'tool' }],
      [{ role: 'user', content: 'a', n: [1, 2] }, { role: 'tool' }],
      [{ role: 'user', content: 'a', n: [] }, { role: 'tool' }],
      [{ role: 'user', content: 'a', n: { 0: 1 } }, { role: 'tool' }],
    ]) {
      expect(hashes.messagesDigest('s', changed)).toBe(messagesDigest(changed));
      hashes.messagesDigest('s', first);
    }
    // The same content in another key order is the same canonical JSON: continued, same digest.
    const reordered = [{ n: [1], content: 'a', role: 'user' }, { role: 'tool' }];
    expect(hashes.messagesDigest('s', reordered)).toBe(messagesDigest(reordered));
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
