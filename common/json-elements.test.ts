import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  isKeyToken,
  keyMayBe,
  scanArrayTail,
  scanObjectTail,
  skipJsonValue,
  skipJsonWhitespace,
} from './json-elements.ts';
import { pythonJsonDumps } from './python-json/dumps.ts';
import { faithfulJsonDumps } from './python-json/faithful-dumps.ts';
import { pythonJsonLoads } from './python-json/loads.ts';

/**
 * The structural scan against the parsers: every element's bytes, cut where the scan says it ends,
 * parse (JSON.parse, or CPython-faithful `pythonJsonLoads` for Python's non-finite literals) to that
 * element, from the start of the array and from any element on, in every writer's spacing.
 */

const utf8 = new TextEncoder();
const text = (bytes: Uint8Array, from: number, to: number) =>
  new TextDecoder().decode(bytes.subarray(from, to));

// Strings that stress the string skip: quotes, backslashes before quotes, brackets and commas inside,
// non-ASCII and astral characters, control characters written as escapes.
const trickyString = fc.oneof(
  fc.string({
    unit: fc.constantFrom('"', '\\', '[', ']', '{', '}', ',', ':', ' ', 'a', 'é', '😀', '\n', '\u0001'),
  }),
  fc.string({ unit: 'grapheme' }),
);
const element = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    trickyString,
    fc.integer(),
    fc.double({ noNaN: false }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(trickyString, tie('value'), { maxKeys: 4 }),
  ),
})).value;

type Writer = { readonly name: string; readonly write: (v: unknown[]) => string; readonly python: boolean };
const writers: readonly Writer[] = [
  // JSON.stringify writes NaN and ±Infinity as null; Python writes its literals.
  { name: 'JSON.stringify', write: (v) => JSON.stringify(v), python: false },
  { name: 'JSON.stringify indented', write: (v) => JSON.stringify(v, null, 2), python: false },
  { name: 'json.dumps', write: (v) => pythonJsonDumps(v), python: true },
  {
    name: 'json.dumps ensure_ascii=False',
    write: (v) => pythonJsonDumps(v, { ensureAscii: false }),
    python: true,
  },
];

describe('scanArrayTail', () => {
  it('cuts every element where it ends, from the start and from any element on', () => {
    fc.assert(
      fc.property(
        fc.array(element, { maxLength: 8 }),
        fc.constantFrom(...writers),
        fc.nat(),
        (values, writer, k) => {
          // The array inside an object, as a chat body holds its messages, with a member after it.
          const head = '{"model": "m",\n "messages": ';
          const doc = `${head}${writer.write(values)}, "after": [1, {"x": "]"}]}`;
          const bytes = utf8.encode(doc);
          const open = utf8.encode(head).length;
          expect(bytes[open]).toBe(0x5b);
          const parse = (s: string) => (writer.python ? pythonJsonLoads(s) : JSON.parse(s));
          const expected = (parse(doc) as { messages: unknown[] }).messages;
          const whole = scanArrayTail(bytes, open + 1, false);
          expect(whole).not.toBeNull();
          expect(whole?.elementEnds.length).toBe(expected.length);
          expect(skipJsonValue(bytes, open)).toBe((whole?.close ?? 0) + 1);
          let start = open + 1;
          whole?.elementEnds.forEach((end, i) => {
            // Between elements only whitespace and one comma.
            const from = skipJsonWhitespace(bytes, start);
            const piece = text(bytes, bytes[from] === 0x2c ? from + 1 : from, end);
            expect(faithfulJsonDumps(parse(piece))).toBe(faithfulJsonDumps(expected[i]));
            start = end;
          });
          // From just past element k, the rest of the same ends and the same `]`.
          if (expected.length > 0) {
            const i = k % expected.length;
            const ends = whole?.elementEnds ?? [];
            const rest = scanArrayTail(bytes, ends[i] as number, true);
            expect(rest).toEqual({ elementEnds: ends.slice(i + 1), close: whole?.close });
          }
        },
      ),
    );
  });

  it('gives null where the bytes end first or an element is not followed by a comma', () => {
    const bytes = utf8.encode('[1, "a]", {"b": [2]}');
    expect(scanArrayTail(bytes, 1, false)).toBeNull();
    expect(scanArrayTail(utf8.encode('[1 2]'), 1, false)).toBeNull();
    expect(scanArrayTail(utf8.encode('["abc'), 1, false)).toBeNull();
    expect(scanArrayTail(utf8.encode('[]'), 1, false)).toEqual({ elementEnds: [], close: 1 });
  });
});

describe('scanObjectTail', () => {
  // Whitespace as any writer (or a hand-written body) may put it between tokens.
  const ws = fc.constantFrom('', ' ', '\n  ', '\t', '\r\n ');
  it('gives every member its key and value bounds, from the start and from any member on', () => {
    fc.assert(
      fc.property(
        // Pairs, not a dictionary: a key may come twice (Python keeps the last, the scan sees both).
        fc.array(fc.tuple(trickyString, element, ws, ws, ws), { maxLength: 6 }),
        fc.constantFrom(...writers),
        ws,
        fc.nat(),
        (pairs, writer, end, k) => {
          const piece = (v: unknown) =>
            writer
              .write([v])
              .replace(/^\[\s*/, '')
              .replace(/\s*\]$/, '');
          const members = pairs.map(([key, value, a, b, c]) => `${a}${piece(key)}${b}:${c}${piece(value)}`);
          const doc = `{${members.join(',')}${end}}`;
          const bytes = utf8.encode(doc);
          const parse = (s: string) => (writer.python ? pythonJsonLoads(s) : JSON.parse(s));
          const whole = scanObjectTail(bytes, 1, false);
          expect(whole).not.toBeNull();
          expect(whole?.close).toBe(bytes.length - 1);
          expect(whole?.members.length).toBe(pairs.length);
          whole?.members.forEach((m, i) => {
            const [key, value] = pairs[i]!;
            expect(parse(text(bytes, m.keyStart, m.keyEnd))).toBe(key);
            expect(bytes[m.valueStart]).not.toBe(0x20);
            expect(faithfulJsonDumps(parse(text(bytes, m.valueStart, m.valueEnd)))).toBe(
              faithfulJsonDumps(parse(piece(value))),
            );
          });
          if (pairs.length > 0) {
            const i = k % pairs.length;
            const all = whole?.members ?? [];
            const rest = scanObjectTail(bytes, all[i]?.valueEnd as number, true);
            expect(rest).toEqual({ members: all.slice(i + 1), close: whole?.close });
            // Bounded at the comma after member i: the members before it, as if the object ended there.
            const comma = skipJsonWhitespace(bytes, all[i]?.valueEnd as number);
            if (i + 1 < pairs.length) {
              expect(bytes[comma]).toBe(0x2c);
              expect(scanObjectTail(bytes, 1, false, comma)).toEqual({
                members: all.slice(0, i + 1),
                close: comma,
              });
            }
          }
        },
      ),
    );
  });

  it('gives null where the bytes end first or a member is not shaped key, colon, value', () => {
    expect(scanObjectTail(utf8.encode('{"a": 1'), 1, false)).toBeNull();
    expect(scanObjectTail(utf8.encode('{"a" 1}'), 1, false)).toBeNull();
    expect(scanObjectTail(utf8.encode('{a: 1}'), 1, false)).toBeNull();
    expect(scanObjectTail(utf8.encode('{"a": 1 "b": 2}'), 1, false)).toBeNull();
    expect(scanObjectTail(utf8.encode('{"a": "}'), 1, false)).toBeNull();
    expect(scanObjectTail(utf8.encode('{}'), 1, false)).toEqual({ members: [], close: 1 });
    // A bound inside a member, or one the members never stop at, is not where they stop.
    const two = utf8.encode('{"a": 1, "b": 2}');
    expect(scanObjectTail(two, 1, false, 7)).toEqual({
      members: [{ keyStart: 1, keyEnd: 4, valueStart: 6, valueEnd: 7 }],
      close: 7,
    });
    expect(scanObjectTail(two, 1, false, 4)).toBeNull();
    expect(scanObjectTail(two, 1, false, 8)).toBeNull();
  });
});

describe('isKeyToken and keyMayBe', () => {
  const token = utf8.encode('"messages"');
  it.each([
    ['"messages"', true, true],
    ['"message"', false, false],
    ['"messagez"', false, false],
    ['"messag\\u0065s"', false, true],
    ['"a\\nb"', false, true],
    ['"MESSAGES"', false, false],
  ])('%s: spelt so %s, might be %s', (key, spelt, might) => {
    const bytes = utf8.encode(`{${key}: 1}`);
    const end = 1 + utf8.encode(key).length;
    // The oracle: a key that decodes to `messages` is always one that might be.
    if (JSON.parse(key) === 'messages') expect(might).toBe(true);
    expect(isKeyToken(bytes, 1, end, token)).toBe(spelt);
    expect(keyMayBe(bytes, 1, end, token)).toBe(might);
  });
});
