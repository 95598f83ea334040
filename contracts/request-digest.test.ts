import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { canonicalJson, messagesDigest } from './request-digest.ts';

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
