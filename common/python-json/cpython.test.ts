import fc from 'fast-check';
import { expect, it } from 'vitest';
import { pythonJson } from '../../test/helpers/python-oracle.ts';
import { pythonJsonDumps } from './dumps.ts';
import { faithfulJsonLoads } from './faithful-loads.ts';
import { pythonFloatRepr } from './values.ts';

/**
 * CPython itself as the oracle where this folder reads or writes text a run at a time: the faithful
 * parser's string runs in faithful-loads.ts (values, and the exact `JSONDecodeError` text with its
 * position for broken strings), and `repr(float)` where it prints `String(v)` (values.ts).
 */

function python(program: string, input: unknown): string[] {
  return pythonJson<string[]>(program, input);
}

// Pieces of a string's inside (raw, escaped, broken escapes, controls, surrogates) and structure.
const piece = fc.constantFrom(
  '"',
  '\\',
  '\\n',
  '\\u00e9',
  '\\u12',
  '\\x',
  'a',
  'ab c',
  'é',
  '😀',
  '\ud800',
  '\u0001',
  '\t',
  '1.5',
  ',',
  ':',
  '{',
  '}',
  ']',
);
const documents = fc.array(
  fc
    .tuple(
      fc.constantFrom('{"k": "', '["', '"', '{"a": [1, "'),
      fc.array(piece, { maxLength: 8 }),
      fc.constantFrom('"}', '"]', '"', '', '"}'),
    )
    .map(([open, inside, close]) => `${open}${inside.join('')}${close}`),
  { minLength: 300, maxLength: 300 },
);

it('parses strings to what json.loads gives, or raises its exact error', () => {
  const docs = fc.sample(documents, { numRuns: 1, seed: 12 })[0]!;
  const expected = python(
    'import json,sys\nout=[]\nfor d in json.load(sys.stdin):\n  try: out.append("ok:"+json.dumps(json.loads(d)))\n  except ValueError as e: out.append("err:"+str(e))\nprint(json.dumps(out))',
    docs,
  );
  const actual = docs.map((d) => {
    try {
      return `ok:${pythonJsonDumps(faithfulJsonLoads(d, { keepFloats: true }))}`;
    } catch (error) {
      return `err:${(error as Error).message}`;
    }
  });
  expect(actual).toEqual(expected);
  // Both outcomes came up often enough to mean something.
  expect(expected.filter((e) => e.startsWith('ok:')).length).toBeGreaterThan(20);
  expect(expected.filter((e) => e.startsWith('err:')).length).toBeGreaterThan(20);
});

it('prints every double as repr(float) does', () => {
  const doubles = fc.sample(fc.double({ noNaN: true, noDefaultInfinity: true }), { numRuns: 2000, seed: 7 });
  const decimals = fc.sample(
    fc.tuple(fc.integer({ min: -999_999, max: 999_999 }), fc.integer({ min: -20, max: 20 })),
    { numRuns: 2000, seed: 8 },
  );
  const values = [
    ...doubles,
    ...decimals.map(([m, e]) => m * 10 ** e),
    1e-4,
    9.999999999999999e-5,
    1e16,
    0.1,
  ];
  // Sent as JS text (which round-trips exactly) so Python reads a float, not an int.
  const expected = python(
    'import json,sys\nprint(json.dumps([repr(float(x)) for x in json.load(sys.stdin)]))',
    values.map((v) => (Object.is(v, -0) ? '-0.0' : String(v))),
  );
  expect(values.map(pythonFloatRepr)).toEqual(expected);
});

// Values a chat body carries (nested messages, ids, flags), with the characters that could confuse a
// separator rewrite: commas, colons, spaces, escaped newlines, brackets, non-ASCII and surrogates.
const text = fc
  .array(
    fc.constantFrom(
      'a',
      ', ',
      ': ',
      ',\n ',
      '\n',
      '[]',
      '{}',
      '"',
      '\\',
      ' ',
      'é',
      '😀',
      '\u007f',
      '\u2028',
      '\ud800',
    ),
    { maxLength: 6 },
  )
  .map((parts) => parts.join(''));
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
    fc.double({ min: -1e6, max: 1e6, noNaN: true }).filter((d) => !Number.isInteger(d)),
    fc.constantFrom(null, true, false),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(text, tie('value'), { maxKeys: 3 }),
  ),
}));

it('writes json.dumps bytes with Python’s default separators, ASCII-escaped or not', () => {
  const values = fc.sample(
    fc.oneof(
      value,
      fc.record({
        messages: fc.array(fc.record({ role: text, content: text }), { maxLength: 4 }),
        input_ids: fc.array(fc.nat(), { maxLength: 5 }),
        logprobs: fc.boolean(),
      }),
    ),
    { numRuns: 400, seed: 21 },
  );
  // Sent as the text JSON.stringify writes for a lone surrogate (`\ud800`), which Python reads back.
  const expected = python(
    'import json,sys\nprint(json.dumps([[json.dumps(v), json.dumps(v, ensure_ascii=False)] for v in json.load(sys.stdin)]))',
    values,
  );
  const actual = values.map((v) => [pythonJsonDumps(v), pythonJsonDumps(v, { ensureAscii: false })]);
  expect(actual).toEqual(expected);
});
