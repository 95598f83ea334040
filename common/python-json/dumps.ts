/**
 * The JSON writers production code calls: `pythonJsonDumps` (CPython's `json.dumps`, byte for byte), its
 * pieces and bytes for writers that splice text of their own, and Starlette's `JSONResponse` rendering.
 * Fast paths of the faithful writer (faithful-dumps.ts), property-tested against it in fast-path.test.ts.
 */

import { AsciiWriter, joinInts } from '../ascii-writer.ts';
import {
  comparePythonStrings,
  type PythonDumpsOptions,
  pythonFloatJson,
  pythonFloatJsonAlways,
  quoteString,
} from './faithful-dumps.ts';
import { PythonFloat } from './values.ts';

/**
 * `json.dumps` with Python's defaults (ASCII-escaped, `", "`/`": "` separators, NaN allowed).
 * Fast path of `faithfulJsonDumps`: the pieces go into one array joined once; strings are escaped
 * natively (`JSON.stringify` escapes exactly what CPython does, with the same lowercase `\u00XX`; only
 * `ensure_ascii` and lone surrogates need more, see `quoteStringFast`); an array of plain integers is
 * written whole by the digit writer (`common/ascii-writer.ts`: the text of `join`). Property-tested
 * against the faithful writer in fast-path.test.ts.
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
 * longer list). Property-tested against the text path in fast-path.test.ts. With `into`, the
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

/** Starlette's `JSONResponse` rendering: compact, non-ASCII kept, NaN refused. */
export function starletteJson(value: unknown): string {
  return pythonJsonDumps(value, { ensureAscii: false, separators: [',', ':'], allowNan: false });
}
