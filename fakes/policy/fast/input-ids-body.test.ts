import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pythonJsonDumps } from '../../../common/python-json/dumps.ts';
import { splitInputIds } from './input-ids-body.ts';

/**
 * The oracle is what the policy did before: `JSON.parse(new TextDecoder().decode(bytes))`. Whenever the
 * split answers, that parse succeeds and gives the same object (same keys in the same order, the ids
 * as the last key, every value the same); whenever it cannot tell, it answers null (the caller parses
 * the whole text, so a broken body keeps its error).
 */

// The oracle's JSON.parse runs in a context of its own: V8 can misread an escaped key through a hidden
// class an earlier parse left (common/native-json-keys.ts), and the test files before this one in the
// same worker (vitest.config.ts `isolate: false`) parse plenty; here only the oracle's parses come before.
const oracleParse = runInNewContext('(text) => JSON.parse(text)') as (text: string) => unknown;

const oracle = (bytes: Uint8Array): { ok: true; value: unknown } | { ok: false } => {
  try {
    return { ok: true, value: oracleParse(new TextDecoder('utf-8').decode(bytes)) };
  } catch {
    return { ok: false };
  }
};

const sameValue = (a: unknown, b: unknown): boolean => {
  if (Array.isArray(a) || Array.isArray(b)) {
    return (
      Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((v, i) => sameValue(v, b[i]))
    );
  }
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
    const ka = Object.keys(a);
    const kb = Object.keys(b);
    return (
      ka.length === kb.length &&
      ka.every(
        (k, i) =>
          k === kb[i] && sameValue((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
      )
    );
  }
  return Object.is(a, b);
};

// Texts that look like the layout the split reads, inside strings.
const text = fc
  .array(fc.constantFrom('a', 'é', '"', '\\', ', "input_ids": [', ']}', '1, 2', '😀', '\n'), { maxLength: 4 })
  .map((parts) => parts.join(''));
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.integer({ min: -1000, max: 1000 }),
    fc.constantFrom(null, true, false, 0.5),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('input_ids', 'a', 'messages', '__proto__', 'é'), tie('value'), {
      maxKeys: 3,
    }),
  ),
}));
const rest = fc.dictionary(
  fc.constantFrom('messages', 'model', 'input_ids', 'logprobs', '__proto__', 'é'),
  value,
  {
    maxKeys: 4,
  },
);
// How an id may be spelt: what JSON.parse reads as the same int32, and what the split must refuse.
const idText = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: -999_999_999, max: 999_999_999 }).map(String) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '0',
      '-0',
      '01',
      '-01',
      '1000000000',
      '2147483648',
      '1.5',
      '1e3',
      '',
      '-',
      '--1',
    ),
  },
);
const separator = fc.oneof(
  { weight: 8, arbitrary: fc.constant(', ') },
  { weight: 1, arbitrary: fc.constantFrom(',', ' , ', ',  ', ' ') },
);
// Damage to the bytes: none mostly; a cut, a byte changed, invalid UTF-8, a BOM, trailing space.
const damage = fc.oneof(
  { weight: 6, arbitrary: fc.constant(null) },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constantFrom('cut', 'flip', 'invalid', 'bom', 'space'), at: fc.nat() }),
  },
);

function damaged(bytes: Buffer, d: { kind: string; at: number } | null): Buffer {
  if (d === null) return bytes;
  const at = bytes.length === 0 ? 0 : d.at % bytes.length;
  switch (d.kind) {
    case 'cut':
      return bytes.subarray(0, at);
    case 'flip': {
      const copy = Buffer.from(bytes);
      copy[at] = (copy[at]! + 1) % 256;
      return copy;
    }
    case 'invalid':
      return Buffer.concat([bytes.subarray(0, at), Buffer.from([0xe2, 0x82]), bytes.subarray(at)]);
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), bytes]);
    default:
      return Buffer.concat([bytes, Buffer.from(' ')]);
  }
}

describe('splitInputIds', () => {
  it('gives JSON.parse’s object (the ids its last key) or null, never anything else', () => {
    let split = 0;
    fc.assert(
      fc.property(
        rest,
        fc.array(idText, { maxLength: 12 }),
        separator,
        fc.boolean(),
        damage,
        fc.boolean(),
        (members, ids, sep, python, d, comma) => {
          // The session server's layout (Python's separators), or JSON.stringify's, then the ids (after
          // a comma even when there is no member before them: `{, "input_ids": [...]}` is not JSON).
          const head = python ? pythonJsonDumps(members) : JSON.stringify(members);
          const body = `${head.slice(0, -1)}${comma || head.length > 2 ? ', ' : ''}"input_ids": [${ids.join(sep)}]}`;
          const bytes = damaged(Buffer.from(body, 'utf8'), d);
          const got = splitInputIds(bytes);
          if (got === null) return;
          split += 1;
          const want = oracle(bytes);
          expect(want.ok).toBe(true);
          const parsed = (want as { value: Record<string, unknown> }).value;
          // `input_ids` was the last key (a second one earlier would keep that place), the rest as parsed.
          expect(Object.keys(parsed).at(-1)).toBe('input_ids');
          const { input_ids: _ids, ...others } = parsed;
          expect(sameValue(got.rest, others)).toBe(true);
          // Every id exactly (`Array.from` of an Int32Array cannot hold -0: none may come back as 0).
          expect((parsed.input_ids as number[]).every((v, i) => Object.is(v, got.inputIds[i]))).toBe(true);
        },
      ),
      { numRuns: 1500 },
    );
    // The shortcut was taken often enough to be tested.
    expect(split).toBeGreaterThan(300);
  });

  it('reads the session server’s bodies (Python layout, plain int ids) without the whole parse', () => {
    const body = pythonJsonDumps({
      messages: [{ role: 'user', content: 'hi' }],
      logprobs: true,
      input_ids: [5, -7, 0, 123_456_789],
    });
    const got = splitInputIds(Buffer.from(body, 'utf8'));
    expect(got?.rest).toEqual({ messages: [{ role: 'user', content: 'hi' }], logprobs: true });
    expect(Array.from(got?.inputIds ?? [])).toEqual([5, -7, 0, 123_456_789]);
    expect(splitInputIds(Buffer.from(pythonJsonDumps({ input_ids: [1] }), 'utf8'))).toBeNull();
  });
});
