import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { withRoom } from './buffer-room.ts';

describe('withRoom', () => {
  it('keeps the buffer when it has room, else gives a larger one holding its first `keep` elements', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), { maxLength: 64 }),
        fc.nat(200),
        fc.nat(64),
        (values, length, keepAsked) => {
          const buffer = Int32Array.from(values);
          const keep = Math.min(keepAsked, buffer.length);
          const out = withRoom(buffer, length, keep, (n) => new Int32Array(n));
          expect(out.length).toBeGreaterThanOrEqual(length);
          if (buffer.length >= length) expect(out).toBe(buffer);
          else {
            expect(out).not.toBe(buffer);
            expect([...out.subarray(0, keep)]).toEqual(values.slice(0, keep));
          }
        },
      ),
    );
  });

  it('makes the larger buffer with `make` (a Buffer stays a Buffer)', () => {
    const out = withRoom(Buffer.from('abc'), 10, 2, (n) => Buffer.alloc(n));
    expect(Buffer.isBuffer(out)).toBe(true);
    expect(out.subarray(0, 3).toString('latin1')).toBe('ab\0');
  });
});
