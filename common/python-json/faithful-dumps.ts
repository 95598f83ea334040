/**
 * `json.dumps` as CPython writes: `ensure_ascii` escapes, `repr(float)` numbers, the separators and
 * `sort_keys` by code point, piece by piece. The oracle the fast writer (dumps.ts) is property-tested
 * against, and the home of the number and string spellings both writers share.
 */

import { PythonFloat, pythonFloatRepr } from './values.ts';

export interface PythonDumpsOptions {
  /** `ensure_ascii`: escape every non-ASCII code unit as `\uXXXX` (Python's default). */
  ensureAscii?: boolean;
  /** `(item, key)` separators; Python's default is `(', ', ': ')`, compact is `(',', ':')`. */
  separators?: readonly [string, string];
  sortKeys?: boolean;
  /** `allow_nan`: write NaN/Infinity literals; when false they raise, like Starlette's JSONResponse. */
  allowNan?: boolean;
}

/** The piece-by-piece CPython-faithful writer (`pythonJsonDumps` is its fast path). */
export function faithfulJsonDumps(value: unknown, options: PythonDumpsOptions = {}): string {
  const ensureAscii = options.ensureAscii ?? true;
  const [itemSep, keySep] = options.separators ?? [', ', ': '];
  const allowNan = options.allowNan ?? true;
  const write = (v: unknown): string => {
    if (v === null || v === undefined) return 'null';
    if (v === true) return 'true';
    if (v === false) return 'false';
    if (typeof v === 'number') return pythonFloatJson(v, allowNan);
    if (v instanceof PythonFloat) return pythonFloatJsonAlways(v.value, allowNan);
    if (typeof v === 'bigint') return v.toString();
    if (typeof v === 'string') return quoteString(v, ensureAscii);
    if (Array.isArray(v)) return `[${v.map(write).join(itemSep)}]`;
    if (typeof v === 'object') {
      const keys = Object.keys(v);
      if (options.sortKeys) keys.sort(comparePythonStrings);
      const parts = keys.map(
        (k) => `${quoteString(k, ensureAscii)}${keySep}${write((v as Record<string, unknown>)[k])}`,
      );
      return `{${parts.join(itemSep)}}`;
    }
    throw new TypeError(`Object of type ${typeof v} is not JSON serializable`);
  };
  return write(value);
}

/** Python orders strings by code point; JS `sort()` by UTF-16 unit. */
export function comparePythonStrings(a: string, b: string): number {
  const ca = [...a];
  const cb = [...b];
  for (let k = 0; k < Math.min(ca.length, cb.length); k += 1) {
    const d = ca[k]!.codePointAt(0)! - cb[k]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return ca.length - cb.length;
}

export function quoteString(s: string, ensureAscii: boolean): string {
  let out = '"';
  for (let k = 0; k < s.length; k += 1) {
    const c = s.charCodeAt(k);
    const ch = s[k]!;
    if (ch === '"') out += '\\"';
    else if (ch === '\\') out += '\\\\';
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (ch === '\b') out += '\\b';
    else if (ch === '\f') out += '\\f';
    else if (c < 0x20 || (ensureAscii && c > 0x7e)) out += `\\u${c.toString(16).padStart(4, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/**
 * A number as Python writes it. Integral values print as ints (JSON cannot tell `1` from `1.0` once
 * parsed in JS); others use `repr(float)`: the same shortest digits as JS, but scientific notation below
 * 1e-4 and from 1e16 on, with a signed two-digit exponent.
 */
export function pythonFloatJson(v: number, allowNan = true): string {
  if (!Number.isFinite(v)) {
    if (!allowNan) throw new RangeError('Out of range float values are not JSON compliant');
    if (Number.isNaN(v)) return 'NaN';
    return v > 0 ? 'Infinity' : '-Infinity';
  }
  if (Number.isInteger(v) && Math.abs(v) < 1e16) return Object.is(v, -0) ? '-0.0' : String(v);
  return pythonFloatRepr(v);
}

/** A float as `json.dumps` writes it: `float.__repr__`, or the NaN/Infinity literals. */
export function pythonFloatJsonAlways(v: number, allowNan: boolean): string {
  if (!Number.isFinite(v)) return pythonFloatJson(v, allowNan);
  return pythonFloatRepr(v);
}
