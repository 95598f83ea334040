/**
 * `json.loads` as CPython reads text: its grammar (NaN and Infinity accepted), its values (the last
 * duplicate key wins in the first key's place) and its error texts (`Expecting value: line 1 column 1
 * (char 0)`), written from the behaviour of CPython's `json` module. The fakes stand in for Python
 * servers, so where an error text is observable (an `invalid JSON body: …` 400) it is CPython's. This is
 * the oracle the fast path (loads.ts) is property-tested against; most callers want loads.ts.
 */

import { PythonFloat } from './values.ts';

export interface PythonLoadsOptions {
  /** Parse numbers written as floats (`1.0`, `1e3`) into `PythonFloat`, so they are written back as floats. */
  readonly keepFloats?: boolean;
}

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

/** JSON's whitespace (CPython's `WHITESPACE`), skipped between tokens. */
export const JSON_WHITESPACE: ReadonlySet<string> = new Set([' ', '\t', '\n', '\r']);
// Sticky: matched in place at `lastIndex`, so a number is read whole without slicing the document.
const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;
// Sticky: the run of string characters that need no attention (not a quote, backslash or control).
const STRING_RUN = /[^"\\\u0000-\u001f]*/y;
// The one-character escapes JSON (and CPython) accept after a backslash.
const SIMPLE_ESCAPES: ReadonlySet<string> = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't']);

/** The CPython-faithful parser (`pythonJsonLoads` falls back to it). */
export function faithfulJsonLoads(doc: string, options: PythonLoadsOptions = {}): unknown {
  let i = 0;
  const skip = () => {
    while (i < doc.length && JSON_WHITESPACE.has(doc[i]!)) i += 1;
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
