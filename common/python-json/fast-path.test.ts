import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pythonJsonDumps, pythonJsonPieces, pythonJsonPiecesToBytes } from './dumps.ts';
import { faithfulJsonDumps, type PythonDumpsOptions } from './faithful-dumps.ts';
import { faithfulJsonLoads } from './faithful-loads.ts';
import { pythonJsonLoads } from './loads.ts';
import { PythonFloat } from './values.ts';

/**
 * The fast paths (loads.ts, dumps.ts: native JSON.parse, joined pieces, native escaping) against the
 * character-by-character faithful parser and writer: identical values and identical bytes, or the
 * identical error. The generators are built to hit what differs between JavaScript's JSON and
 * CPython's (NaN/Infinity, lone surrogates, non-ASCII, huge integers, duplicate keys, long numbers,
 * broken documents); each test counts how often it hit each case and requires every case.
 */

type Outcome = { ok: true; text: string } | { ok: false; error: string };

function outcome(run: () => unknown, render: (v: unknown) => string = String): Outcome {
  try {
    return { ok: true, text: render(run()) };
  } catch (error) {
    return { ok: false, error: `${(error as Error).name}: ${(error as Error).message}` };
  }
}

// A parsed value rendered so that every difference shows: -0 vs 0, NaN, key order, own `__proto__`
// keys, the exact double (shortest repr), lone surrogates (escaped by ensure_ascii).
const fingerprint = (v: unknown): string =>
  `${faithfulJsonDumps(v)}|${Object.getPrototypeOf(v ?? 0) === Object.prototype ? 'plain' : 'other'}`;

/** A JSON-ish document as text, with the cases it contains. */
interface Doc {
  readonly text: string;
  readonly cases: readonly string[];
}

const doc = (text: string, ...cases: string[]): Doc => ({ text, cases });
const join = (parts: readonly Doc[], text: string): Doc => ({
  text,
  cases: parts.flatMap((p) => p.cases),
});

const ws = fc.constantFrom('', '', ' ', '\n  ', '\t', '\r\n');

// String units as they stand in the document text: raw, escaped, surrogates raw and escaped.
const stringUnit: fc.Arbitrary<Doc> = fc.oneof(
  fc.constantFrom('a', 'Z', ' ', '0', '/', "'", '~').map((t) => doc(t)),
  fc.constantFrom('é', '😀', '\u2028', '中', '\u007f', '\u0080').map((t) => doc(t, 'non-ascii')),
  fc
    .constantFrom('\\"', '\\\\', '\\/', '\\n', '\\t', '\\b', '\\f', '\\r', '\\u0000', '\\u001F')
    .map((t) => doc(t)),
  fc.constantFrom('\\u00e9', '\\uD83D\\uDE00', '\\u2028').map((t) => doc(t, 'non-ascii')),
  fc.constantFrom('\ud800', '\udfff', '\\ud800', '\\uDC00', '\\ud83d"').map((t) => doc(t, 'lone-surrogate')),
  fc
    .integer({ min: 0x20, max: 0xffff })
    .filter((c) => c !== 0x22 && c !== 0x5c)
    .map((c) => doc(String.fromCharCode(c), c > 0x7f ? 'non-ascii' : 'ascii')),
);
// `\\ud83d"` above ends the string early on purpose: the rest of the document is then broken.
const stringDoc = fc
  .array(stringUnit, { maxLength: 8 })
  .map((units) => join(units, `"${units.map((u) => u.text).join('')}"`));

const numberDoc: fc.Arbitrary<Doc> = fc.oneof(
  fc.integer({ min: -1000, max: 1000 }).map((n) => doc(String(n))),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => doc(String(d))),
  fc
    .bigInt({ min: -(10n ** 40n), max: 10n ** 40n })
    .filter((n) => n > 2n ** 53n || n < -(2n ** 53n))
    .map((n) => doc(String(n), 'huge-integer')),
  fc.constantFrom('NaN', 'Infinity', '-Infinity').map((t) => doc(t, 'nan-infinity')),
  fc.constantFrom('1e400', '-1e400', '-0', '0.0', '1E+2', '2.5e-324').map((t) => doc(t)),
  fc.nat({ max: 600 }).map((n) => doc(`1${'0'.repeat(n + 390)}`, 'long-number')),
);

const KEYS = ['a', 'b', '__proto__', '1', 'é', ''];

const { value: valueDoc } = fc.letrec<{ value: Doc }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberDoc,
    stringDoc,
    fc.constantFrom('null', 'true', 'false').map((t) => doc(t)),
    fc
      .array(tie('value'), { maxLength: 4 })
      .chain((items) =>
        fc
          .tuple(ws, ws)
          .map(([a, b]) => join(items, `[${a}${items.map((x) => x.text).join(`${b},${a}`)}${b}]`)),
      ),
    fc.array(fc.tuple(fc.constantFrom(...KEYS), tie('value'), ws), { maxLength: 4 }).map((entries) => {
      const keys = entries.map(([k]) => k);
      const dup = new Set(keys).size < keys.length ? ['duplicate-key'] : [];
      const text = `{${entries.map(([k, v, w]) => `${w}${JSON.stringify(k)}${w}:${w}${v.text}`).join(',')}}`;
      return join([...entries.map(([, v]) => v), doc('', ...dup)], text);
    }),
  ),
}));

// Sometimes broken: cut short, a stray character, a trailing comma, extra data.
const documentDoc: fc.Arbitrary<Doc> = fc.oneof(
  { weight: 4, arbitrary: fc.tuple(ws, valueDoc, ws).map(([a, v, b]) => join([v], `${a}${v.text}${b}`)) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(valueDoc, fc.nat(), fc.constantFrom('', 'x', ',', ']', '\u0001', '"'))
      .map(([v, at, stray]) => {
        const cut = at % (v.text.length + 1);
        return join([v, doc('', 'broken')], `${v.text.slice(0, cut)}${stray}${v.text.slice(cut + 1)}`);
      }),
  },
);

function countCases(seen: Map<string, number>, cases: readonly string[]) {
  for (const c of new Set(cases)) seen.set(c, (seen.get(c) ?? 0) + 1);
}

describe('pythonJsonLoads fast path', () => {
  it('gives the faithful parser’s value, or its exact error, on any document', () => {
    const seen = new Map<string, number>();
    let fastHits = 0;
    fc.assert(
      fc.property(documentDoc, ({ text, cases }) => {
        countCases(seen, cases);
        const faithful = outcome(() => faithfulJsonLoads(text), fingerprint);
        const fast = outcome(() => pythonJsonLoads(text), fingerprint);
        expect(fast).toEqual(faithful);
        if (outcome(() => JSON.parse(text)).ok) fastHits += 1;
      }),
      { numRuns: 400 },
    );
    // Every case the generator is meant to produce really came up (and the native path was taken).
    for (const c of [
      'non-ascii',
      'lone-surrogate',
      'huge-integer',
      'nan-infinity',
      'duplicate-key',
      'long-number',
      'broken',
    ])
      expect(seen.get(c) ?? 0, c).toBeGreaterThanOrEqual(10);
    expect(fastHits).toBeGreaterThanOrEqual(100);
  });

  it('gives the faithful parser’s value with keepFloats too, on any document', () => {
    let nativeHits = 0;
    fc.assert(
      fc.property(documentDoc, ({ text }) => {
        const faithful = outcome(() => faithfulJsonLoads(text, { keepFloats: true }), fingerprint);
        expect(outcome(() => pythonJsonLoads(text, { keepFloats: true }), fingerprint)).toEqual(faithful);
        if (!/\d[.eE]/.test(text) && outcome(() => JSON.parse(text)).ok) nativeHits += 1;
      }),
      { numRuns: 400 },
    );
    expect(nativeHits).toBeGreaterThanOrEqual(40);
  });

  it('finds every float token among strings that quote floats, end in backslashes or hold `": 1.5` (keepFloats)', () => {
    // Text pieces as they stand in the document: escaped backslashes and quotes, and float-looking text.
    const piece = fc.constantFrom('a', '\\\\', '\\"', ': 1.5', ', 2.5', '[3.5]', '\\": 0.1', ' ');
    const str = fc.array(piece, { maxLength: 4 }).map((p) => `"${p.join('')}"`);
    const space = fc.constantFrom('', ' ', '\n ');
    const scalar = fc.oneof(str, fc.constantFrom('1.5', '-0.5', '2e3', '7', 'true', 'null'));
    const { value } = fc.letrec<{ value: string }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small' },
        scalar,
        fc
          .tuple(space, fc.array(tie('value'), { maxLength: 3 }))
          .map(([w, items]) => `[${w}${items.join(`${w},`)}]`),
        fc
          .array(fc.tuple(str, space, tie('value')), { maxLength: 3 })
          .map((members) => `{${members.map(([k, w, v]) => `${k}${w}:${w}${v}`).join(', ')}}`),
      ),
    }));
    let floats = 0;
    let onlyInStrings = 0;
    fc.assert(
      fc.property(value, (text) => {
        const faithful = outcome(() => faithfulJsonLoads(text, { keepFloats: true }), fingerprint);
        expect(outcome(() => pythonJsonLoads(text, { keepFloats: true }), fingerprint)).toEqual(faithful);
        const hasFloat = faithful.ok && /\d\.\d|\de\d/.test(text.replace(/"[^"\\]*(?:\\.[^"\\]*)*"/g, '""'));
        if (hasFloat) floats += 1;
        else if (/\d[.eE]/.test(text)) onlyInStrings += 1;
      }),
      { numRuns: 600 },
    );
    expect(floats).toBeGreaterThanOrEqual(100);
    expect(onlyInStrings).toBeGreaterThanOrEqual(50);
  });

  it('sees a float between strings that end in escaped quotes or backslashes (keepFloats)', () => {
    // A string scan that stopped at an escaped quote would take `, 1.5, ` for string text.
    // A key ending in an escaped backslash: its closing quote is a real one (an even run before it).
    for (const text of [
      '["\\"", 1.5, "x"]',
      '["\\\\", 2e3, "\\\\\\""]',
      '{"k\\"": 0.5, "v": "\\""}',
      '{"a\\\\": 1.5}',
      '{"\\\\\\\\" : -2e3}',
    ]) {
      const value = pythonJsonLoads(text, { keepFloats: true }) as Record<string, unknown>;
      expect(
        Object.values(value).some((v) => v instanceof PythonFloat),
        text,
      ).toBe(true);
    }
  });

  it('keeps a number spelt with a fraction or an exponent a float (keepFloats)', () => {
    // The spellings that make a float, and the ones that do not.
    const floats = pythonJsonLoads('[1.0, 1e3, 2E-2, -0.5, 1, -0, 10]', { keepFloats: true }) as unknown[];
    expect(floats.map((v) => (v instanceof PythonFloat ? 'float' : typeof v))).toEqual([
      'float',
      'float',
      'float',
      'float',
      'number',
      'number',
      'number',
    ]);
  });

  it('reads a number longer than 400 characters whole', () => {
    const text = `[1${'0'.repeat(450)}, 2]`;
    expect(faithfulJsonLoads(text)).toEqual(JSON.parse(text));
  });
});

// Values as code builds them: strings with any code unit, doubles of every kind, bigints, undefined.
const codeUnitString = fc
  .array(
    fc.oneof(
      fc
        .constantFrom('a', ' ', '"', '\\', '\n', '\u0001', '\u001f', '\u007f', '/', '\b', '\f')
        .map((t) => doc(t)),
      fc.constantFrom('é', '😀', '\u2028', '\uffff').map((t) => doc(t, 'non-ascii')),
      fc.constantFrom('\ud800', '\udfff', '\udc00x').map((t) => doc(t, 'lone-surrogate')),
      fc.integer({ min: 0, max: 0xffff }).map((c) => doc(String.fromCharCode(c))),
    ),
    { maxLength: 8 },
  )
  .map((units) => join(units, units.map((u) => u.text).join('')));

type Tagged = { readonly value: unknown; readonly cases: readonly string[] };

const { tagged } = fc.letrec<{ tagged: Tagged }>((tie) => ({
  tagged: fc.oneof(
    { depthSize: 'small' },
    codeUnitString.map((s) => ({ value: s.text, cases: s.cases })),
    fc.double().map((d) => ({ value: d, cases: Number.isFinite(d) ? [] : ['nan-infinity'] })),
    fc.integer().map((n) => ({ value: n, cases: [] })),
    fc.constantFrom(Number.NaN, Infinity, -Infinity).map((value) => ({ value, cases: ['nan-infinity'] })),
    fc
      .double({ min: 2 ** 53, max: 1e300, noNaN: true })
      .map((d) => ({ value: Math.round(d) * (d > 1e200 ? -1 : 1), cases: ['huge-integer'] })),
    fc.bigInt().map((n) => ({ value: n, cases: [] })),
    fc.constantFrom(null, undefined, true, false, -0).map((value) => ({ value, cases: [] })),
    fc.array(tie('tagged'), { maxLength: 5 }).map((items) => ({
      value: items.map((i) => i.value),
      cases: items.flatMap((i) => i.cases),
    })),
    fc
      .array(fc.integer({ min: -(2 ** 53), max: 2 ** 53 }), { maxLength: 6 })
      .map((value) => ({ value, cases: [] })),
    fc.array(fc.tuple(codeUnitString, tie('tagged')), { maxLength: 4 }).map((entries) => {
      const value: Record<string, unknown> = {};
      for (const [k, v] of entries)
        Object.defineProperty(value, k.text, {
          value: v.value,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      return { value, cases: entries.flatMap(([k, v]) => [...k.cases, ...v.cases]) };
    }),
  ),
}));

const optionsArb: fc.Arbitrary<PythonDumpsOptions> = fc.record(
  {
    ensureAscii: fc.boolean(),
    separators: fc.constantFrom<readonly [string, string]>([', ', ': '], [',', ':'], [',', ': ']),
    sortKeys: fc.boolean(),
    allowNan: fc.boolean(),
  },
  { requiredKeys: [] },
);

describe('pythonJsonDumps fast path', () => {
  it('writes the faithful writer’s bytes, or throws its error, for any value and options', () => {
    const seen = new Map<string, number>();
    fc.assert(
      fc.property(tagged, optionsArb, ({ value, cases }, options) => {
        countCases(seen, cases);
        expect(outcome(() => pythonJsonDumps(value, options))).toEqual(
          outcome(() => faithfulJsonDumps(value, options)),
        );
      }),
      { numRuns: 400 },
    );
    for (const c of ['non-ascii', 'lone-surrogate', 'huge-integer', 'nan-infinity'])
      expect(seen.get(c) ?? 0, c).toBeGreaterThanOrEqual(10);
  });

  // Compact and non-ASCII kept (Starlette, the samples meta) hands whole subtrees to JSON.stringify:
  // numbers at the edges of where JS and Python print alike, floats, undefined and surrogates, nested.
  const edgeNumber = fc.oneof(
    fc.constantFrom(
      -0,
      0,
      1e-4,
      9.99e-5,
      1e-5,
      1.5e-7,
      1e16,
      9_999_999_999_999_998,
      1e21,
      2 ** 53,
      0.1,
      -2.5,
    ),
    fc.double({ min: -1e17, max: 1e17, noNaN: true }),
    fc.integer().map((n) => n / 1000),
  );
  const { edgy } = fc.letrec<{ edgy: unknown }>((tie) => ({
    edgy: fc.oneof(
      { depthSize: 'small' },
      edgeNumber,
      edgeNumber.map((n) => new PythonFloat(n)),
      fc.constantFrom(null, undefined, true, 'a', 'é😀', '\ud800', '\n', Number.NaN, 10n),
      fc.array(tie('edgy'), { maxLength: 4 }),
      fc.dictionary(fc.constantFrom('a', 'b', '__proto__', '1', '\udc00'), tie('edgy'), { maxKeys: 3 }),
    ),
  }));

  // Compact (handed to JSON.stringify) or not, ASCII-escaped or not.
  const nativeOptions = fc.record({
    ensureAscii: fc.boolean(),
    separators: fc.constantFrom<readonly [string, string]>([',', ':'], [', ', ': '], [',', ': ']),
  });

  it('hands subtrees to JSON.stringify only when the bytes stay the same', () => {
    fc.assert(
      fc.property(edgy, nativeOptions, (value, options) => {
        expect(outcome(() => pythonJsonDumps(value, options))).toEqual(
          outcome(() => faithfulJsonDumps(value, options)),
        );
      }),
      { numRuns: 1000 },
    );
  });

  // The forwarded chat body's path: integer arrays written as digits into the bytes.
  const intsArb = fc.array(
    fc.oneof(
      fc.constantFrom(0, -0, 2 ** 31 - 1, -(2 ** 31), 2 ** 31, 2 ** 53 - 1, -(2 ** 53) + 1, 1e16, 0.5),
      fc.integer({ min: 0, max: 200_000 }),
      fc.integer({ min: -(2 ** 53), max: 2 ** 53 }),
    ),
    { maxLength: 40 },
  );
  const bodyArb = fc.oneof(
    tagged.map((t) => t.value),
    fc.record({ messages: tagged.map((t) => t.value), input_ids: intsArb, after: intsArb }),
    fc.array(
      fc.oneof(
        intsArb,
        tagged.map((t) => t.value),
      ),
      { maxLength: 4 },
    ),
  );
  const bytesOptions = fc.record(
    {
      ensureAscii: fc.boolean(),
      separators: fc.constantFrom<readonly [string, string]>(
        [', ', ': '],
        [',', ':'],
        [',', ': '],
        [' ,  ', ' : '],
        ['é', ':'],
      ),
      sortKeys: fc.boolean(),
      allowNan: fc.boolean(),
    },
    { requiredKeys: [] },
  );
  const utf8Outcome = (v: unknown) => Buffer.from(String(v), 'utf8').toString('hex');
  // What the forwarded body's writer does with its pieces (fakes/session/fast/forwarded-body.ts).
  const dumpsBytes = (value: unknown, options: PythonDumpsOptions) =>
    pythonJsonPiecesToBytes(pythonJsonPieces(value, options), options.separators?.[0] ?? ', ');

  it('writes, as bytes, the UTF-8 of the faithful writer’s text (pythonJsonPieces, then pythonJsonPiecesToBytes)', () => {
    fc.assert(
      fc.property(bodyArb, bytesOptions, (value, options) => {
        const expected = outcome(() => faithfulJsonDumps(value, options), utf8Outcome);
        expect(outcome(() => dumpsBytes(value, options).toString('hex'))).toEqual(expected);
        expect(outcome(() => pythonJsonDumps(value, options), utf8Outcome)).toEqual(expected);
      }),
      { numRuns: 600 },
    );
  });

  it('writes long bodies (text runs past the writer’s flush size) as the text path does', () => {
    // Chat-sized: messages of a few KB (non-ASCII and lone surrogates too) around integer arrays.
    const content = fc
      .tuple(fc.constantFrom('w1 w2 ', 'é😀 ', '\ud800 ', '"q"\n'), fc.nat({ max: 1500 }))
      .map(([unit, n]) => unit.repeat(n));
    const chatBody = fc.record({
      messages: fc.array(fc.record({ role: fc.constantFrom('user', 'tool'), content }), { maxLength: 12 }),
      input_ids: intsArb,
      logprobs: fc.boolean(),
    });
    fc.assert(
      fc.property(chatBody, fc.boolean(), (value, ensureAscii) => {
        expect(
          dumpsBytes(value, { ensureAscii }).equals(
            Buffer.from(faithfulJsonDumps(value, { ensureAscii }), 'utf8'),
          ),
        ).toBe(true);
      }),
      { numRuns: 60 },
    );
  });
});
