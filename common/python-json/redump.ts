import { faithfulJsonLoads } from './faithful-loads.ts';
import { pythonFloatRepr } from './values.ts';

/**
 * `json.dumps(json.loads(text), ensure_ascii=False)` straight from the text, without JS values in between:
 * a JS object reorders integer-like keys ahead of the others, a JS number prints `1.0` as `1` and `-0.0`
 * as `0`, and integers past 2^53 lose digits, while Python keeps the key order, the float/int distinction
 * and every digit. Chat templates print tool-call arguments this way (HF's `tojson` filter after
 * Miles' `normalize_tool_arguments` parses the argument string), so the bytes must be Python's.
 */

/** What `json.loads(text)` gives, as far as a template can tell: a string, or any other value. */
export type RedumpedJson =
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'other'; readonly json: string };

/** CPython's `sys.int_info.default_max_str_digits`: a longer integer literal makes `json.loads` raise. */
const MAX_INT_DIGITS = 4300;

const WS = new Set([' ', '\t', '\n', '\r']);
const NUMBER = /-?(?:0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)?/y;

/** `json.loads(text)` then, for a non-string, `json.dumps(value, ensure_ascii=False)`; throws CPython's errors. */
export function pythonJsonRedump(text: string): RedumpedJson {
  // The faithful parser validates the document with CPython's grammar and error texts.
  const value = faithfulJsonLoads(text);
  if (typeof value === 'string') return { kind: 'string', value };
  let i = 0;
  const skip = () => {
    while (i < text.length && WS.has(text[i]!)) i += 1;
  };
  const readString = (): string => {
    const start = i;
    i += 1;
    while (text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
    i += 1;
    return faithfulJsonLoads(text.slice(start, i)) as string;
  };
  const readValue = (): string => {
    skip();
    const c = text[i];
    if (c === '"') return quote(readString());
    if (c === '{') {
      i += 1;
      const members = new Map<string, string>();
      skip();
      if (text[i] === '}') {
        i += 1;
        return '{}';
      }
      for (;;) {
        skip();
        const key = readString();
        skip();
        i += 1; // ':'
        // A repeated key keeps its first place and takes the last value (a Python dict's assignment).
        members.set(key, readValue());
        skip();
        if (text[i++] === '}') break;
      }
      return `{${[...members].map(([k, v]) => `${quote(k)}: ${v}`).join(', ')}}`;
    }
    if (c === '[') {
      i += 1;
      const items: string[] = [];
      skip();
      if (text[i] === ']') {
        i += 1;
        return '[]';
      }
      for (;;) {
        items.push(readValue());
        skip();
        if (text[i++] === ']') break;
      }
      return `[${items.join(', ')}]`;
    }
    for (const [literal, dumped] of LITERALS) {
      if (text.startsWith(literal, i)) {
        i += literal.length;
        return dumped;
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text)!;
    i += m[0].length;
    if (m[1] === undefined && m[2] === undefined) {
      const digits = m[0].replace('-', '');
      if (digits.length > MAX_INT_DIGITS) {
        throw new Error(
          `Exceeds the limit (${MAX_INT_DIGITS} digits) for integer string conversion: value has ${digits.length} digits; use sys.set_int_max_str_digits() to increase the limit`,
        );
      }
      return m[0] === '-0' ? '0' : m[0];
    }
    return floatJson(Number(m[0]));
  };
  return { kind: 'other', json: readValue() };
}

const LITERALS: ReadonlyArray<readonly [string, string]> = [
  ['true', 'true'],
  ['false', 'false'],
  ['null', 'null'],
  ['NaN', 'NaN'],
  ['Infinity', 'Infinity'],
  ['-Infinity', '-Infinity'],
];

/** `json.dumps` of a float: `repr`, or the literals for the non-finite ones. */
function floatJson(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? 'Infinity' : '-Infinity';
  return pythonFloatRepr(v);
}

/** `py_encode_basestring` (`ensure_ascii=False`): only `"`, `\` and the C0 controls are escaped. */
const ESCAPABLE = /[\x00-\x1f\\"]/g;
const SHORT_ESCAPES: Record<string, string> = {
  '\\': '\\\\',
  '"': '\\"',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
};

export function quote(s: string): string {
  return `"${s.replace(
    ESCAPABLE,
    (ch) => SHORT_ESCAPES[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  )}"`;
}
