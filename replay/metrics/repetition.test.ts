import { deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hasRepetition } from './repetition.ts';

// The oracle is the definition spelt out: len() and [-10000:] over code points (Array.from splits a
// JS string as Python indexes the str it came from, a lone surrogate one point), then zlib level 9.
function byDefinition(text: string): boolean {
  const points = Array.from(text);
  if (points.length <= 10000) return false;
  const raw = Buffer.from(points.slice(-10000).join(''), 'utf8');
  return raw.length / deflateSync(raw, { level: 9 }).length > 10;
}

// Texts around the 10000-point edge, repetitive or not, with surrogate pairs and lone halves anywhere.
const unit = fc.constantFrom('a', 'b', 'é', '😀', '\ud800', '\udc00', '\udbff\udfff', ' ', '\n');
const text = fc
  .tuple(
    fc.integer({ min: 9990, max: 10012 }),
    fc.array(unit, { minLength: 1, maxLength: 8 }),
    fc.array(fc.tuple(fc.nat(), unit), { maxLength: 40 }),
    fc.boolean(),
  )
  .map(([length, pattern, noise, random]) => {
    const points: string[] = [];
    for (let i = 0; i < length; i++)
      points.push(random ? String.fromCodePoint(0x20 + ((i * 7919) % 5000)) : pattern[i % pattern.length]!);
    for (const [at, u] of noise) points[at % length] = u;
    return points.join('');
  });

describe('hasRepetition', () => {
  it('agrees with the code-point definition at the 10000 edge', () => {
    fc.assert(
      fc.property(text, (t) => {
        expect(hasRepetition(t)).toBe(byDefinition(t));
      }),
      { numRuns: 300 },
    );
  });
});
