import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AsciiWriter, joinInts } from './ascii-writer.ts';

/**
 * The digit writer against the oracle it replaces, `Array.prototype.join` (and `Buffer.from(text,
 * 'utf8')` for text): the same bytes for every number `join` can meet, at the edges of the digit path
 * (0, ±(2^31 − 1), −2^31, 2^31, every digit count) and off it (-0, fractions, NaN, ±Infinity, huge
 * integers), with separators the digit path takes (`''`, `','`, `', '`) and ones it leaves to `join`.
 */

const EDGES = [
  0,
  -0,
  1,
  -1,
  9,
  10,
  99,
  100,
  999,
  1000,
  99_999,
  100_000,
  999_999_999,
  1_000_000_000,
  2 ** 31 - 1,
  -(2 ** 31),
  -(2 ** 31) + 1,
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 32,
  2 ** 53 - 1,
  -(2 ** 53),
  1e21,
  -1e21,
  0.5,
  -1.25,
  1e-7,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  Number.MAX_VALUE,
  Number.MIN_VALUE,
];

const id = fc.oneof(
  fc.constantFrom(...EDGES),
  fc.integer(),
  fc.integer({ min: 0, max: 200_000 }),
  fc.integer({ min: -(2 ** 53), max: 2 ** 53 }),
  fc.double(),
);
const sep = fc.constantFrom('', ',', ', ', ' ', ' ,  ', 'é', '\ud800', ', é');

describe('AsciiWriter.ints', () => {
  it('writes the bytes of ids.join(sep), through one reused writer', () => {
    const writer = new AsciiWriter(16);
    fc.assert(
      fc.property(fc.array(id, { maxLength: 300 }), sep, fc.string(), (ids, s, before) => {
        writer.text(before);
        writer.ints(ids, s);
        expect(writer.bytes().equals(Buffer.from(`${before}${ids.join(s)}`, 'utf8'))).toBe(true);
        expect(writer.length).toBe(0);
      }),
      { numRuns: 600 },
    );
  });

  it('writes every edge number as join does', () => {
    const writer = new AsciiWriter(1);
    writer.ints(EDGES, ', ');
    expect(writer.view().toString('latin1')).toBe(EDGES.join(', '));
  });

  it('grows past its buffer without losing what was written', () => {
    const writer = new AsciiWriter(4);
    const ids = Array.from({ length: 40_000 }, (_, i) => i * 53 - 1_000_000);
    writer.text('[');
    writer.ints(ids, ', ');
    writer.text(']');
    expect(writer.bytes().toString('latin1')).toBe(`[${ids.join(', ')}]`);
  });
});

describe('AsciiWriter.text', () => {
  it('encodes as Buffer.from(text, "utf8") does, lone surrogates included', () => {
    const writer = new AsciiWriter(2);
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary' }), { maxLength: 5 }), (texts) => {
        for (const t of texts) writer.text(t);
        expect(writer.bytes().equals(Buffer.from(texts.join(''), 'utf8'))).toBe(true);
      }),
    );
    writer.text('\ud800a\udfff');
    expect(writer.bytes().equals(Buffer.from('\ud800a\udfff', 'utf8'))).toBe(true);
  });
});

describe('joinInts', () => {
  it('is ids.join(sep)', () => {
    fc.assert(
      fc.property(fc.array(id, { maxLength: 300 }), sep, (ids, s) => {
        expect(joinInts(ids, s)).toBe(ids.join(s));
      }),
      { numRuns: 600 },
    );
  });
});
