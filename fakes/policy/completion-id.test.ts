import { createHash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tokenIdsDigest } from '../../contracts/request-digest.ts';
import { completionId } from './completion.ts';
import { promptSeed } from './synthetic.ts';

/**
 * What the synthetic policy derives from a prompt's ids without joining or copying them per call:
 * the completion id, the reply's seed and the request log's ids digest, each against the expression
 * it replaced (and Python's `zlib.crc32` for fixed vectors), on ids at the edges of the digit path.
 */

const id = fc.oneof(
  fc.integer({ min: 0, max: 200_000 }),
  fc.integer(),
  fc.constantFrom(0, -0, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 53, 1e21, -1e21, 0.5, Number.NaN),
  fc.integer({ min: -(2 ** 53), max: 2 ** 53 }),
);
const ids = fc.array(id, { maxLength: 200 });

describe('completionId', () => {
  it('is the CRC-32 of the ids joined by commas, then # and the counter, as before', () => {
    fc.assert(
      fc.property(ids, fc.integer({ min: 0, max: 2 ** 24 }), (promptIds, counter) => {
        const crc = crc32(`${promptIds.join(',')}#${counter}`);
        expect(completionId(promptIds, counter)).toBe(
          `chatcmpl-${crc.toString(16).padStart(8, '0')}${counter.toString(16).padStart(6, '0')}`,
        );
      }),
      { numRuns: 500 },
    );
  });

  it('matches Python zlib.crc32 on fixed prompts', () => {
    // /usr/bin/python3: 'chatcmpl-%08x%06x' % (zlib.crc32((','.join(map(str, ids)) + '#' + str(c)).encode()), c)
    expect(completionId([1, 2, 3], 1)).toBe('chatcmpl-1b496327000001');
    expect(completionId([], 7)).toBe('chatcmpl-47cdc091000007');
    expect(completionId([151644, 8948, 198, -5, 2 ** 31 - 1, -(2 ** 31)], 4096)).toBe(
      'chatcmpl-fef32d50001000',
    );
    const long = Array.from({ length: 13_334 }, (_, i) => i * 3);
    expect(completionId(long, 123_456)).toBe('chatcmpl-75e161b001e240');
  });
});

describe('promptSeed', () => {
  it('is the CRC-32 of Int32Array.from(ids), through a reused buffer', () => {
    // Long then short prompts: the reused buffer must hash only the current prompt's ids.
    fc.assert(
      fc.property(fc.array(ids, { maxLength: 4 }), (prompts) => {
        for (const p of prompts) expect(promptSeed(p)).toBe(crc32(Buffer.from(Int32Array.from(p).buffer)));
      }),
      { numRuns: 300 },
    );
    // /usr/bin/python3: zlib.crc32(struct.pack('<%di' % len(ids), *ids))
    expect(promptSeed(Array.from({ length: 13_334 }, (_, i) => i * 3))).toBe(3_228_738_940);
    expect(promptSeed([1, 2, 3])).toBe(2_967_478_931);
    expect(promptSeed([])).toBe(0);
  });
});

describe('tokenIdsDigest', () => {
  it('is the sha256 of the ids as float64 values (-0 as 0), through a reused buffer', () => {
    fc.assert(
      fc.property(fc.array(ids, { maxLength: 4 }), (prompts) => {
        for (const p of prompts) {
          const values = Float64Array.from(p, (v) => v + 0);
          const expected = createHash('sha256').update(new Uint8Array(values.buffer)).digest('hex');
          expect(tokenIdsDigest(p)).toBe(expected);
        }
      }),
      { numRuns: 300 },
    );
  });
});
