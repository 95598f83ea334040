import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { canonicalJson, continueMessagesHash, messagesDigest } from './request-digest.ts';

const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

// Keys that sort differently by code unit, collide with Object.prototype's members, or look like indexes.
const key = fc.constantFrom(
  'role',
  'content',
  'b',
  'B',
  'é',
  '😀',
  '10',
  '2',
  '',
  'constructor',
  'toString',
  '__proto__',
);
const { json } = fc.letrec<{ json: unknown }>((tie) => ({
  json: fc.oneof(
    { depthSize: 'small' },
    fc.oneof(fc.string(), fc.double(), fc.integer(), fc.constantFrom(null, true, false, -0)),
    fc.array(tie('json'), { maxLength: 3 }),
    fc.dictionary(key, tie('json'), { maxKeys: 4 }),
  ),
}));

it('digests the canonical JSON of any parsed message list, however its objects spell their keys', () => {
  const seen = { proto: 0 };
  fc.assert(
    fc.property(fc.array(json, { maxLength: 4 }), (list) => {
      // Through JSON text, as the policy gets them: `__proto__` becomes an own key, -0 stays -0.
      const parsed = JSON.parse(JSON.stringify(list)) as unknown[];
      if (JSON.stringify(list).includes('"__proto__"')) seen.proto += 1;
      expect(messagesDigest(parsed)).toBe(sha(canonicalJson(parsed)));
      expect(messagesDigest(list)).toBe(sha(canonicalJson(list)));
    }),
    { numRuns: 500 },
  );
  expect(seen.proto).toBeGreaterThan(10);
});

it('digests long lists of short and long messages alike (texts hashed a run of messages at a time)', () => {
  const message = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.record({ role: fc.constantFrom('user', 'tool'), content: fc.string({ maxLength: 30 }) }),
    },
    // Long texts (a 32k-token observation is tens of KB), so the run length adapts down and up again.
    {
      weight: 1,
      arbitrary: fc
        .tuple(fc.integer({ min: 9000, max: 40_000 }), fc.string({ maxLength: 3 }))
        .map(([n, s]) => ({ content: `${'é'.repeat(n)}${s}` })),
    },
    { weight: 1, arbitrary: json },
  );
  fc.assert(
    fc.property(fc.array(message, { minLength: 30, maxLength: 160 }), (list) => {
      const parsed = JSON.parse(JSON.stringify(list)) as unknown[];
      expect(messagesDigest(parsed)).toBe(sha(canonicalJson(parsed)));
    }),
    { numRuns: 40 },
  );
});

it('continues a digest over the messages after any split point to the whole list’s digest', () => {
  fc.assert(
    fc.property(fc.array(json, { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 3 }), (list, cuts) => {
      const parsed = JSON.parse(JSON.stringify(list)) as unknown[];
      // The list fed in runs (each run's keys on their own), cut where the cuts say.
      const points = [...new Set(cuts.map((c) => c % (parsed.length + 1)))].sort((a, b) => a - b);
      const hash = createHash('sha256').update('[');
      let from = 0;
      for (const to of [...points, parsed.length]) {
        continueMessagesHash(hash, parsed.slice(from, to), from);
        from = to;
      }
      // The oracle: each message's canonical text on its own, joined, hashed whole.
      const joined = `[${parsed.map((m) => canonicalJson(m)).join(',')}]`;
      expect(hash.update(']').digest('hex')).toBe(sha(joined));
      expect(sha(joined)).toBe(sha(canonicalJson(parsed)));
    }),
    { numRuns: 400 },
  );
});
