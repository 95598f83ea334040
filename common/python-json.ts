/**
 * JSON as Python's `json` module reads and writes it. The fakes stand in for Python servers, so where the
 * bytes or the error text are observable (an `invalid JSON body: …` 400, the body forwarded to the policy,
 * the samples reply's meta JSON) they follow CPython rather than `JSON.parse`/`JSON.stringify`:
 * `NaN`/`Infinity` are accepted, errors read `Expecting value: line 1 column 1 (char 0)`, floats print in
 * `repr` form, and `ensure_ascii` escapes everything outside ASCII.
 */

import { AsciiWriter, joinInts } from './ascii-writer.ts';
import { nativeJsonKeysTrusted } from './native-json-keys.ts';
import { decodeJsonBytes } from './python-bytes.ts';

/** CPython's `json.JSONDecodeError`: `message` is the full `msg: line L column C (char P)` text. */
export class PythonJsonDecodeError extends Error {
  readonly pos: number;
  constructor(msg: string, doc: string, utf16Index: number) {
    const pos = codePointIndex(doc, utf16Index);
    const before = [...doc].slice(0, pos).join('');
    const lineno = before.split('\n').length;
    const lastNl = before.lastIndexOf('\n');
    const colno = lastNl === -1 ? pos + 1 : [...before.slice(lastNl + 1)].length + 1;
    super(`${msg}: line ${lineno} column ${colno} (char ${pos})`);
    this.name = 'JSONDecodeError';
    this.pos = pos;
  }
}

function codePointIndex(doc: string, utf16Index: number): number {
  return [...doc.slice(0, utf16Index)].length;
}

const FLOAT_SPELLING = /\d[.eE]/;
// A JSON string token, unrolled (no backtracking per character).
const STRING_TOKEN = /"[^"\\]*(?:\\.[^"\\]*)*"/g;

// Every digit right before `.`, `e` or `E`, in turn.
const FLOAT_SPELLINGS = /\d[.eE]/g;

/**
 * Whether some float spelling of `doc` (valid JSON) can be a number token, judged from what stands
 * before it, without reading the strings: a token starts at the document's start or after `[`, `,` or
 * a key's closing `"` and `:` (whitespace between), and a quote after an odd run of backslashes is
 * escaped, inside a string. Text inside strings can look like that too (`"x, 1.5"`); never the other
 * way round.
 */
function floatTokenPossible(doc: string): boolean {
  FLOAT_SPELLINGS.lastIndex = 0;
  for (let m = FLOAT_SPELLINGS.exec(doc); m !== null; m = FLOAT_SPELLINGS.exec(doc)) {
    let i = m.index;
    while (i > 0 && isDigit(doc.charCodeAt(i - 1))) i -= 1;
    if (i > 0 && doc[i - 1] === '-') i -= 1;
    i = skipSpaceBack(doc, i);
    if (i === 0) return true;
    const before = doc[i - 1];
    if (before === '[' || before === ',') return true;
    if (before === ':') {
      const quote = skipSpaceBack(doc, i - 1) - 1;
      if (quote >= 0 && doc[quote] === '"') {
        let k = quote;
        while (k > 0 && doc[k - 1] === '\\') k -= 1;
        if ((quote - k) % 2 === 0) return true;
      }
    }
  }
  return false;
}

function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

/** The index after the last non-whitespace character before `i` (JSON whitespace). */
function skipSpaceBack(doc: string, i: number): number {
  let k = i;
  while (k > 0 && WS.has(doc[k - 1]!)) k -= 1;
  return k;
}

/**
 * Whether `keepFloats` could change anything: a number spelt as a float has a digit right before its
 * `.`, `e` or `E`, so a document without that outside its strings has no float to keep. On valid JSON
 * the regex finds exactly the string tokens; invalid JSON goes to the faithful parser anyway (the
 * caller's `JSON.parse` throws), so a wrong answer there changes nothing. `floatTokenPossible` first,
 * which reads only around each float spelling: an agent's messages quote JSON with decimals
 * (`\"duration\": 0.1`), and blanking every string of a long history costs more than parsing it.
 */
function mayHoldFloat(doc: string): boolean {
  return (
    FLOAT_SPELLING.test(doc) &&
    floatTokenPossible(doc) &&
    FLOAT_SPELLING.test(doc.replace(STRING_TOKEN, '""'))
  );
}
const WS = new Set([' ', '\t', '\n', '\r']);
// Sticky: matched in place at `lastIndex`, so a number is read whole without slicing the document.
const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;
// Sticky: the run of string characters that need no attention (not a quote, backslash or control).
const STRING_RUN = /[^"\\\u0000-\u001f]*/y;
// The one-character escapes JSON (and CPython) accept after a backslash.
const SIMPLE_ESCAPES: ReadonlySet<string> = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

/**
 * `json.loads` on text: returns plain JS values (objects keep the last duplicate key, like Python).
 * With `keepFloats`, a number written with a fraction or an exponent is a `PythonFloat` (see below).
 * Fast path: `JSON.parse` accepts exactly the JSON grammar, which the faithful parser also accepts
 * with the same values (same number conversion, last duplicate wins in the first key's place, own
 * `__proto__` keys, escapes and lone surrogates kept as code units). What it rejects (NaN, Infinity,
 * any syntax error) goes to the faithful parser, which accepts CPython's extensions or throws CPython's
 * error text. `keepFloats` needs the number's spelling, so it takes the faithful parser (whose strings
 * are read a run at a time: a chat body is mostly message text) unless the document cannot hold a float.
 * Property-tested against the faithful parser in python-json-fast-path.test.ts.
 */
export function pythonJsonLoads(doc: string, options: PythonLoadsOptions = {}): unknown {
  if (options.keepFloats === true && mayHoldFloat(doc)) return faithfulJsonLoads(doc, options);
  let value: unknown;
  try {
    value = JSON.parse(doc);
  } catch {
    return faithfulJsonLoads(doc, options);
  }
  // V8 can misread an escaped key (common/native-json-keys.ts): read such a document faithfully.
  return nativeJsonKeysTrusted(doc, value) ? value : faithfulJsonLoads(doc, options);
}

/**
 * `JSON.parse` for documents from outside (request and response bodies, files): the same values and the
 * same `SyntaxError`, without V8's misread escaped keys (common/native-json-keys.ts), which it reads
 * again with the faithful parser (equal to `JSON.parse` on every document `JSON.parse` accepts).
 */
export function parseJson(text: string): unknown {
  const value: unknown = JSON.parse(text);
  return nativeJsonKeysTrusted(text, value) ? value : faithfulJsonLoads(text);
}

/** The CPython-faithful parser (`pythonJsonLoads` falls back to it). */
export function faithfulJsonLoads(doc: string, options: PythonLoadsOptions = {}): unknown {
  let i = 0;
  const skip = () => {
    while (i < doc.length && WS.has(doc[i]!)) i += 1;
  };
  const fail = (msg: string, at: number): never => {
    throw new PythonJsonDecodeError(msg, doc, at);
  };

  // Checks the string token at `i` (CPython's errors, at its positions), then lets JSON.parse read it:
  // same escapes, same code units, and a fresh string. Slices of `doc` would be V8 sliced strings that
  // keep the whole document alive for as long as any value read from it (a record keeps its messages).
  const parseString = (): string => {
    const start = i; // at the opening quote
    i += 1;
    for (;;) {
      // The plain characters up to the next quote, backslash or control character, skipped in one go.
      STRING_RUN.lastIndex = i;
      STRING_RUN.test(doc);
      i = STRING_RUN.lastIndex;
      if (i >= doc.length) fail('Unterminated string starting at', start);
      const ch = doc[i]!;
      if (ch === '"') {
        i += 1;
        return JSON.parse(doc.slice(start, i)) as string;
      }
      if (ch === '\\') {
        const esc = doc[i + 1];
        if (esc === undefined) fail('Unterminated string starting at', start);
        if (esc === 'u') {
          // CPython also refuses an escape whose four digits end the document (`end >= len`).
          if (i + 6 >= doc.length || !/^[0-9a-fA-F]{4}$/.test(doc.slice(i + 2, i + 6)))
            fail('Invalid \\uXXXX escape', i + 1);
          i += 6;
        } else if (esc !== undefined && SIMPLE_ESCAPES.has(esc)) {
          i += 2;
        } else {
          fail('Invalid \\escape', i);
        }
        continue;
      }
      // What the run stops at besides a quote or a backslash: a control character.
      fail('Invalid control character at', i);
    }
  };

  const parseValue = (): unknown => {
    const ch = doc[i];
    if (ch === '"') return parseString();
    if (ch === '{') return parseObject();
    if (ch === '[') return parseArray();
    if (ch === 'n' && doc.startsWith('null', i)) {
      i += 4;
      return null;
    }
    if (ch === 't' && doc.startsWith('true', i)) {
      i += 4;
      return true;
    }
    if (ch === 'f' && doc.startsWith('false', i)) {
      i += 5;
      return false;
    }
    if (ch === 'N' && doc.startsWith('NaN', i)) {
      i += 3;
      return Number.NaN;
    }
    if (ch === 'I' && doc.startsWith('Infinity', i)) {
      i += 8;
      return Number.POSITIVE_INFINITY;
    }
    if (ch === '-' && doc.startsWith('-Infinity', i)) {
      i += 9;
      return Number.NEGATIVE_INFINITY;
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(doc);
    if (m) {
      i += m[0].length;
      return options.keepFloats && (m[1] !== undefined || m[2] !== undefined)
        ? new PythonFloat(Number(m[0]))
        : Number(m[0]);
    }
    return fail('Expecting value', i);
  };

  const parseObject = (): Record<string, unknown> => {
    i += 1;
    const out: Record<string, unknown> = {};
    skip();
    if (doc[i] === '}') {
      i += 1;
      return out;
    }
    for (;;) {
      if (doc[i] !== '"') fail('Expecting property name enclosed in double quotes', i);
      const key = parseString();
      skip();
      if (doc[i] !== ':') fail("Expecting ':' delimiter", i);
      i += 1;
      skip();
      const value = parseValue();
      // Own-property write, so a key named `__proto__` stays data.
      if (key === '__proto__')
        Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      else out[key] = value;
      skip();
      if (doc[i] === '}') {
        i += 1;
        return out;
      }
      if (doc[i] !== ',') fail("Expecting ',' delimiter", i);
      i += 1;
      skip();
    }
  };

  const parseArray = (): unknown[] => {
    i += 1;
    const out: unknown[] = [];
    skip();
    if (doc[i] === ']') {
      i += 1;
      return out;
    }
    for (;;) {
      out.push(parseValue());
      skip();
      if (doc[i] === ']') {
        i += 1;
        return out;
      }
      if (doc[i] !== ',') fail("Expecting ',' delimiter", i);
      i += 1;
      skip();
    }
  };

  skip();
  const value = parseValue();
  skip();
  if (i !== doc.length) fail('Extra data', i);
  return value;
}

/**
 * `json.loads` on bytes: decoded as CPython does (BOM-aware UTF-8/16/32, `surrogatepass`), then the text
 * parser. Undecodable bytes raise `PythonUnicodeDecodeError`, not `PythonJsonDecodeError`.
 */
export function pythonJsonLoadsBytes(bytes: Uint8Array, options: PythonLoadsOptions = {}): unknown {
  return pythonJsonLoads(decodeJsonBytes(bytes), options);
}

export interface PythonDumpsOptions {
  /** `ensure_ascii`: escape every non-ASCII code unit as `\uXXXX` (Python's default). */
  ensureAscii?: boolean;
  /** `(item, key)` separators; Python's default is `(', ', ': ')`, compact is `(',', ':')`. */
  separators?: readonly [string, string];
  sortKeys?: boolean;
  /** `allow_nan`: write NaN/Infinity literals; when false they raise, like Starlette's JSONResponse. */
  allowNan?: boolean;
}

/**
 * `json.dumps` with Python's defaults (ASCII-escaped, `", "`/`": "` separators, NaN allowed).
 * Fast path of `faithfulJsonDumps`: the pieces go into one array joined once; strings are escaped
 * natively (`JSON.stringify` escapes exactly what CPython does, with the same lowercase `\u00XX`; only
 * `ensure_ascii` and lone surrogates need more, see `quoteStringFast`); an array of plain integers is
 * written whole by the digit writer (`common/ascii-writer.ts`: the text of `join`). Property-tested
 * against the faithful writer in python-json-fast-path.test.ts.
 */
export function pythonJsonDumps(value: unknown, options: PythonDumpsOptions = {}): string {
  const pieces = dumpPieces(value, options, false);
  return (pieces as string[]).join('');
}

/**
 * The text of `pythonJsonDumps(value, options)` as pieces, in order: strings, and each array of plain
 * integers left as the array itself (its bracketed, `itemSep`-joined text). For writers that splice in
 * text of their own (fakes/session/fast/forwarded-body.ts) before `pythonJsonPiecesToBytes`.
 */
export function pythonJsonPieces(
  value: unknown,
  options: PythonDumpsOptions = {},
): Array<string | readonly number[]> {
  return dumpPieces(value, options, true);
}

/**
 * The UTF-8 bytes of pieces (see `pythonJsonPieces`), integer arrays written as digits straight into the
 * bytes (a 32k-token prompt's `input_ids`), the rest as UTF-8: `Buffer.from(pythonJsonDumps(value,
 * options), 'utf8')` without the text; a `Uint8Array` piece is bytes already written, copied as they
 * are, and an `Int32Array` piece its ids' digits joined by `itemSep` without brackets (a run of a
 * longer list). Property-tested against the text path in python-json-fast-path.test.ts. With `into`, the
 * bytes go into the buffer it gives (`AsciiWriter.bytes`).
 */
export function pythonJsonPiecesToBytes(
  pieces: ReadonlyArray<string | readonly number[] | Uint8Array | Int32Array>,
  itemSep: string,
  into?: (size: number) => Uint8Array,
): Buffer {
  // No user code runs from here on (getters ran while the pieces were collected), so the shared
  // writer cannot be re-entered; reset in case an earlier call stopped half way.
  const writer = bytesWriter;
  writer.reset();
  // Text pieces are joined in runs of a few KB before writing: fewer writes, and no run large enough
  // to be a large-object string (a 32k-token history joined whole is one of 200 KB per call).
  // Pieces end on whole tokens (a quote, a bracket, a digit), so no surrogate pair is split.
  let run: string[] = [];
  let runLength = 0;
  for (const piece of pieces) {
    if (typeof piece === 'string') {
      run.push(piece);
      runLength += piece.length;
      if (runLength < TEXT_RUN) continue;
    }
    if (run.length > 0) writer.text(run.join(''));
    run = [];
    runLength = 0;
    if (piece instanceof Uint8Array) writer.raw(piece);
    else if (piece instanceof Int32Array) writer.ints(piece, itemSep);
    else if (typeof piece !== 'string') {
      writer.text('[');
      writer.ints(piece, itemSep);
      writer.text(']');
    }
  }
  if (run.length > 0) writer.text(run.join(''));
  return writer.bytes(into);
}

const bytesWriter = new AsciiWriter();
const TEXT_RUN = 8192;

/**
 * The writer of `pythonJsonDumps`: the output as pieces, in order. With `deferInts`, an array of plain
 * integers is left in the pieces as the array itself (its bracketed, `itemSep`-joined text).
 */
function dumpPieces(
  value: unknown,
  options: PythonDumpsOptions,
  deferInts: boolean,
): Array<string | readonly number[]> {
  const ensureAscii = options.ensureAscii ?? true;
  const [itemSep, keySep] = options.separators ?? [', ', ': '];
  const allowNan = options.allowNan ?? true;
  const sortKeys = options.sortKeys === true;
  const out: Array<string | readonly number[]> = [];
  // A subtree JSON.stringify writes byte for byte as CPython does (numbers, strings and containers it
  // prints alike) goes to it whole when the separators are compact (its own format). Python's default
  // separators are the forwarded chat body's: `JSON.stringify(v, null, 1)` with the newlines dropped
  // would give them too, but measured slower than this writer (2x with 3,000 input ids, a few per cent
  // faster on the messages alone), so it is not used.
  const native = !sortKeys && itemSep === ',' && keySep === ':';
  const write = (v: unknown): void => {
    if (native && typeof v === 'object' && v !== null && stringifiesAsPython(v)) {
      const text = JSON.stringify(v);
      // Non-ASCII units only stand inside strings, so escaping them all is `ensure_ascii`.
      out.push(ensureAscii && NOT_ASCII.test(text) ? text.replace(NOT_ASCII_ALL, escapeUnit) : text);
      return;
    }
    if (v === null || v === undefined) out.push('null');
    else if (v === true) out.push('true');
    else if (v === false) out.push('false');
    else if (typeof v === 'number') out.push(pythonFloatJson(v, allowNan));
    else if (v instanceof PythonFloat) out.push(pythonFloatJsonAlways(v.value, allowNan));
    else if (typeof v === 'bigint') out.push(v.toString());
    else if (typeof v === 'string') out.push(quoteStringFast(v, ensureAscii));
    else if (Array.isArray(v)) {
      if (isPlainIntArray(v)) {
        out.push(deferInts ? v : `[${joinInts(v, itemSep)}]`);
        return;
      }
      out.push('[');
      for (let k = 0; k < v.length; k += 1) {
        if (k > 0) out.push(itemSep);
        write(v[k]);
      }
      out.push(']');
    } else if (typeof v === 'object') {
      const keys = Object.keys(v);
      if (sortKeys) keys.sort(comparePythonStrings);
      out.push('{');
      for (let k = 0; k < keys.length; k += 1) {
        if (k > 0) out.push(itemSep);
        const key = keys[k] as string;
        out.push(quoteStringFast(key, ensureAscii), keySep);
        write((v as Record<string, unknown>)[key]);
      }
      out.push('}');
    } else throw new TypeError(`Object of type ${typeof v} is not JSON serializable`);
  };
  write(value);
  return out;
}

/**
 * Whether `JSON.stringify(v)` gives `json.dumps(v, ensure_ascii=False, separators=(",", ":"))`: plain
 * arrays and objects (no `undefined` member, which JSON.stringify drops) of null, booleans, well-formed
 * strings and numbers that both print alike: integers below 1e16 (not -0) and fractions where both use
 * positional digits. `PythonFloat`, bigints, NaN and the rest take the writer.
 */
function stringifiesAsPython(v: unknown): boolean {
  if (v === null || typeof v === 'boolean') return true;
  if (typeof v === 'string') return v.isWellFormed();
  if (typeof v === 'number') {
    const abs = Math.abs(v);
    if (Number.isInteger(v)) return abs < 1e16 && !Object.is(v, -0);
    return abs >= 1e-4 && abs < 1e16;
  }
  if (Array.isArray(v)) {
    for (let k = 0; k < v.length; k += 1) if (!stringifiesAsPython(v[k])) return false;
    return true;
  }
  if (typeof v !== 'object' || v === undefined) return false;
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key of Object.keys(v)) {
    if (!key.isWellFormed() || !stringifiesAsPython((v as Record<string, unknown>)[key])) return false;
  }
  return true;
}

/** Integers `String()` writes as Python does (not -0, below 1e16), so the array joins as it is. */
function isPlainIntArray(v: readonly unknown[]): v is number[] {
  for (let k = 0; k < v.length; k += 1) {
    const x = v[k];
    if (typeof x !== 'number' || !Number.isSafeInteger(x) || Object.is(x, -0)) return false;
  }
  return true;
}

// Non-ASCII code units left by JSON.stringify (it escapes controls and lone surrogates only) and DEL.
const NOT_ASCII = /[\u007f-\uffff]/;
const NOT_ASCII_ALL = /[\u007f-\uffff]/g;
const escapeUnit = (ch: string): string => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`;

function quoteStringFast(s: string, ensureAscii: boolean): string {
  const quoted = JSON.stringify(s);
  if (ensureAscii) return NOT_ASCII.test(quoted) ? quoted.replace(NOT_ASCII_ALL, escapeUnit) : quoted;
  // JSON.stringify escapes a lone surrogate; CPython with ensure_ascii=False writes it raw.
  return s.isWellFormed() ? quoted : quoteString(s, false);
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

/** Starlette's `JSONResponse` rendering: compact, non-ASCII kept, NaN refused. */
export function starletteJson(value: unknown): string {
  return pythonJsonDumps(value, { ensureAscii: false, separators: [',', ':'], allowNan: false });
}

/** Python orders strings by code point; JS `sort()` by UTF-16 unit. */
function comparePythonStrings(a: string, b: string): number {
  const ca = [...a];
  const cb = [...b];
  for (let k = 0; k < Math.min(ca.length, cb.length); k += 1) {
    const d = ca[k]!.codePointAt(0)! - cb[k]!.codePointAt(0)!;
    if (d !== 0) return d;
  }
  return ca.length - cb.length;
}

function quoteString(s: string, ensureAscii: boolean): string {
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
function pythonFloatJson(v: number, allowNan = true): string {
  if (!Number.isFinite(v)) {
    if (!allowNan) throw new RangeError('Out of range float values are not JSON compliant');
    if (Number.isNaN(v)) return 'NaN';
    return v > 0 ? 'Infinity' : '-Infinity';
  }
  if (Number.isInteger(v) && Math.abs(v) < 1e16) return Object.is(v, -0) ? '-0.0' : String(v);
  return pythonFloatRepr(v);
}

/** `repr(float)`. */
export function pythonFloatRepr(v: number): string {
  // Where both use positional notation (1e-4 <= |v| < 1e16), a fraction prints the same shortest
  // digits in both languages; integral values still need the `.0`, below.
  const abs = Math.abs(v);
  if (abs >= 1e-4 && abs < 1e16) {
    const text = String(v);
    if (text.includes('.')) return text;
  }
  if (Number.isNaN(v)) return 'nan';
  if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
  if (v === 0) return Object.is(v, -0) ? '-0.0' : '0.0';
  const [mantissa, expText] = v.toExponential().split('e') as [string, string];
  const exp = Number(expText);
  const sign = mantissa.startsWith('-') ? '-' : '';
  const digits = mantissa.replace('-', '').replace('.', '');
  if (exp < -4 || exp >= 16) {
    const m = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    const e = `${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`;
    return `${sign}${m}e${e}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, '0');
  const frac = digits.slice(exp + 1);
  return `${sign}${intPart}.${frac === '' ? '0' : frac}`;
}

/** Python's `repr()` of a JSON-like value, for error texts that embed `{x!r}`. */
export function pythonRepr(v: unknown): string {
  if (v instanceof PythonFloat) return pythonFloatRepr(v.value);
  if (v === null || v === undefined) return 'None';
  if (v === true) return 'True';
  if (v === false) return 'False';
  if (typeof v === 'number')
    return Number.isInteger(v) && Math.abs(v) < 1e16 ? String(v) : pythonFloatRepr(v);
  if (typeof v === 'string') {
    const quote = v.includes("'") && !v.includes('"') ? '"' : "'";
    let out = quote;
    for (const ch of v) {
      const c = ch.codePointAt(0)!;
      if (ch === '\\') out += '\\\\';
      else if (ch === quote) out += `\\${quote}`;
      else if (ch === '\n') out += '\\n';
      else if (ch === '\r') out += '\\r';
      else if (ch === '\t') out += '\\t';
      else if (c < 0x20 || c === 0x7f) out += `\\x${c.toString(16).padStart(2, '0')}`;
      else out += ch;
    }
    return out + quote;
  }
  if (Array.isArray(v)) return `[${v.map(pythonRepr).join(', ')}]`;
  if (typeof v === 'object') {
    const parts = Object.entries(v).map(([k, x]) => `${pythonRepr(k)}: ${pythonRepr(x)}`);
    return `{${parts.join(', ')}}`;
  }
  return String(v);
}

/** Python's type name for a JSON-like value (`'list' object has no attribute 'get'`). */
export function pythonTypeName(v: unknown): string {
  if (v instanceof PythonFloat) return 'float';
  if (v === null || v === undefined) return 'NoneType';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (typeof v === 'string') return 'str';
  if (Array.isArray(v)) return 'list';
  return 'dict';
}

/** Python truthiness of a JSON-like value. */
export function pythonTruthy(v: unknown): boolean {
  if (v instanceof PythonFloat) return v.value !== 0;
  if (v === null || v === undefined || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (typeof v === 'object') return Object.keys(v).length > 0;
  return true;
}

/** A plain JSON object (a Python dict), not an array or null. */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof PythonFloat);
}

// --- Python floats --------------------------------------------------------------------------------------
// JS has one number type, so `1.0` and `1` are the same value once parsed, while Python writes a float as
// `1.0` (Miles' JSON keeps an agent's `"reward": 1.0` as `1.0`). A value that must stay a Python float is
// wrapped in `PythonFloat`: `pythonJsonLoads(doc, { keepFloats: true })` produces it for every number
// written with a fraction or exponent, and `pythonJsonDumps` writes it as `repr(float)` does.

export interface PythonLoadsOptions {
  /** Parse numbers written as floats (`1.0`, `1e3`) into `PythonFloat`, so they are written back as floats. */
  readonly keepFloats?: boolean;
}

/** A number that is a Python `float`: written `1.0`, never `1`. */
export class PythonFloat {
  readonly value: number;

  constructor(value: number) {
    this.value = value;
  }

  /** `JSON.stringify` (and anything else that does not know the wrapper) sees the plain number. */
  toJSON(): number {
    return this.value;
  }
}

/** The plain number of a number or `PythonFloat`; anything else unchanged. */
export function unwrapPythonFloat(v: unknown): unknown {
  return v instanceof PythonFloat ? v.value : v;
}

/** A float as `json.dumps` writes it: `float.__repr__`, or the NaN/Infinity literals. */
function pythonFloatJsonAlways(v: number, allowNan: boolean): string {
  if (!Number.isFinite(v)) return pythonFloatJson(v, allowNan);
  return pythonFloatRepr(v);
}
