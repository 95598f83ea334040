/**
 * The few CPython string behaviours Terminus 2's prompts depend on: `str.strip()`, `str.format()` with
 * named fields, `str(float)`, `float(text)` and `repr(str)`. Harbor builds its error and warning texts
 * with them, so the fake must apply the same rules to produce the same bytes.
 */

/** `str.isspace()` (= `re`'s `\s` for str patterns): the characters CPython's `strip()` removes. */
const PY_WHITESPACE =
  '\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000';
/** A regex class for CPython's `\s`. */
export const PY_S = `[${PY_WHITESPACE}]`;
/** CPython's Unicode `\w`: letters, numbers and underscore. */
export const PY_W = '[\\p{L}\\p{N}_]';

const SPACE = new RegExp(`^${PY_S}$`, 'u');
const isPySpace = (code: number): boolean =>
  code === 0x20 ||
  (code >= 0x09 && code <= 0x0d) ||
  (code >= 0x1c && code <= 0x1f) ||
  (code > 0x7f && SPACE.test(String.fromCharCode(code)));

/** `str.strip()` with no argument (all of CPython's whitespace is in the BMP). */
export function pyStrip(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isPySpace(text.charCodeAt(start))) start += 1;
  while (end > start && isPySpace(text.charCodeAt(end - 1))) end -= 1;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/** A Python number as Terminus sees it: `int` and `float` format differently. */
export type PyNumber =
  | { readonly kind: 'int'; readonly value: bigint }
  | { readonly kind: 'float'; readonly value: number };

export const pyFloat = (value: number): PyNumber => ({ kind: 'float', value });
export const pyInt = (value: bigint): PyNumber => ({ kind: 'int', value });

/** `float(n)` of a Python number; an int beyond the double range raises OverflowError in CPython. */
export function toPyFloat(n: PyNumber): number {
  if (n.kind === 'float') return n.value;
  const value = Number(n.value);
  if (!Number.isFinite(value)) throw new PythonOverflowError('int too large to convert to float');
  return value;
}

export class PythonOverflowError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OverflowError';
  }
}

export class PythonIndexError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'IndexError';
  }
}

/** `repr(float)` / `str(float)`: shortest round-trip digits, fixed notation for 1e-4 <= |x| < 1e16. */
function pyFloatRepr(value: number): string {
  if (Number.isNaN(value)) return 'nan';
  if (value === Number.POSITIVE_INFINITY) return 'inf';
  if (value === Number.NEGATIVE_INFINITY) return '-inf';
  if (value === 0) return Object.is(value, -0) ? '-0.0' : '0.0';
  const sign = value < 0 ? '-' : '';
  const [mantissa = '', exponent = '0'] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const decpt = Number(exponent) + 1;
  if (decpt > -4 && decpt <= 16) {
    if (decpt <= 0) return `${sign}0.${'0'.repeat(-decpt)}${digits}`;
    if (decpt >= digits.length) return `${sign}${digits}${'0'.repeat(decpt - digits.length)}.0`;
    return `${sign}${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
  }
  const exp = decpt - 1;
  const body = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
  return `${sign}${body}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
}

/** `str(n)` of a Python number. */
export function pyNumberStr(n: PyNumber): string {
  return n.kind === 'int' ? n.value.toString() : pyFloatRepr(n.value);
}

/** `min(n, 60)` as Terminus caps a duration: the first argument wins ties, so 60.0 stays a float. */
export function pyMinDuration(n: PyNumber, cap: number): PyNumber {
  const value = n.kind === 'int' ? Number(n.value) : n.value;
  return cap < value ? pyInt(BigInt(cap)) : n;
}

const FLOAT_TEXT = /^[+-]?(?:(?:\d(?:_?\d)*)?\.\d(?:_?\d)*|\d(?:_?\d)*\.?)(?:[eE][+-]?\d(?:_?\d)*)?$/;
const SPECIAL_FLOAT = /^([+-]?)(inf|infinity|nan)$/i;

/** `float(text)` for a str: undefined where CPython raises ValueError (Unicode digits are not accepted here). */
export function parsePyFloat(text: string): number | undefined {
  const body = pyStrip(text);
  const special = SPECIAL_FLOAT.exec(body);
  if (special) {
    if ((special[2] as string).toLowerCase() === 'nan') return Number.NaN;
    return special[1] === '-' ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  }
  if (!FLOAT_TEXT.test(body)) return undefined;
  return Number(body.replace(/_/g, ''));
}

/**
 * `template.format(**fields)` for templates with named fields only: `{{`/`}}` are literal braces and a
 * value is inserted as is (never re-read as a template).
 */
export function pyFormat(template: string, fields: Readonly<Record<string, string>>): string {
  return template.replace(/\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g, (match, name: string | undefined) => {
    if (match === '{{') return '{';
    if (match === '}}') return '}';
    const value = fields[name as string];
    if (value === undefined) throw new Error(`template field {${name}} has no value`);
    return value;
  });
}

const NON_PRINTABLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}]/u;

/** `repr(str)`: CPython's quote choice and escapes (`\xNN`, `\uNNNN`, `\UNNNNNNNN` for non-printables). */
export function pyRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of text) {
    const cp = ch.codePointAt(0) as number;
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\t') out += '\\t';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch !== ' ' && NON_PRINTABLE.test(ch)) {
      if (cp <= 0xff) out += `\\x${cp.toString(16).padStart(2, '0')}`;
      else if (cp <= 0xffff) out += `\\u${cp.toString(16).padStart(4, '0')}`;
      else out += `\\U${cp.toString(16).padStart(8, '0')}`;
    } else out += ch;
  }
  return out + quote;
}

/** Code points, as Python indexes a str (JS strings index UTF-16 units). */
export function codePoints(text: string): string[] {
  return Array.from(text);
}

const SURROGATE = /[\uD800-\uDFFF]/;

/** Whether UTF-16 indexes of `text` equal Python's code-point indexes. */
export function indexesMatchPython(text: string): boolean {
  return !SURROGATE.test(text);
}
