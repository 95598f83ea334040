import fc from 'fast-check';

/**
 * Text that reaches every branch of a JSON escaper. fast-check's default string unit is printable
 * ASCII, so `fc.string()` and `fc.jsonValue()` never produce non-ASCII text; this unit draws from four
 * classes instead: ASCII (controls, quote, backslash included), BMP non-ASCII, non-BMP (a surrogate
 * pair) and a lone surrogate. Two adjacent lone halves may pair up, which is text a client can send too.
 */
const textUnit: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.integer({ min: 0, max: 0x7f }).map((c) => String.fromCharCode(c)) },
  {
    weight: 2,
    arbitrary: fc
      .integer({ min: 0x80, max: 0xffff - 0x800 })
      .map((c) => String.fromCharCode(c < 0xd800 ? c : c + 0x800)),
  },
  { weight: 2, arbitrary: fc.integer({ min: 0x10000, max: 0x10ffff }).map((c) => String.fromCodePoint(c)) },
  { weight: 1, arbitrary: fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c)) },
);

/** A string of `textUnit`s. */
export function wildString(
  constraints: { minLength?: number; maxLength?: number } = {},
): fc.Arbitrary<string> {
  return fc.string({ ...constraints, unit: textUnit });
}

/** Any JSON value whose strings (keys included) are `wildString`s. */
export function wildJsonValue(constraints: { maxDepth?: number } = {}): fc.Arbitrary<unknown> {
  return fc.jsonValue({ ...constraints, stringUnit: textUnit });
}

/** What a sample of text contains, for the test that proves the arbitraries above do their job. */
export function textClasses(text: string): { nonAscii: boolean; nonBmp: boolean; loneSurrogate: boolean } {
  return {
    nonAscii: /[^\x00-\x7f]/.test(text),
    nonBmp: /[\ud800-\udbff][\udc00-\udfff]/.test(text),
    loneSurrogate: /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text),
  };
}

/** Every string in a JSON-like value, object keys included. */
export function stringsIn(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.flatMap(stringsIn);
  if (value !== null && typeof value === 'object') {
    return Object.entries(value).flatMap(([k, v]) => [k, ...stringsIn(v)]);
  }
  return [];
}

/** How many of `values` contain each class of text somewhere in their strings. */
export function countTextClasses(values: readonly unknown[]): {
  nonAscii: number;
  nonBmp: number;
  loneSurrogate: number;
} {
  const seen = { nonAscii: 0, nonBmp: 0, loneSurrogate: 0 };
  for (const value of values) {
    const classes = textClasses(stringsIn(value).join('\n'));
    if (classes.nonAscii) seen.nonAscii += 1;
    if (classes.nonBmp) seen.nonBmp += 1;
    if (classes.loneSurrogate) seen.loneSurrogate += 1;
  }
  return seen;
}
