/**
 * The JSON readers production code calls (test/unit/no-native-json-parse.test.ts keeps it so):
 * `pythonJsonLoads` (CPython's `json.loads`) and `parseJson` (`JSON.parse` for documents from outside),
 * each `JSON.parse` first and the faithful parser (faithful-loads.ts) where `JSON.parse` cannot be trusted
 * to give CPython's answer. Property-tested against the faithful parser in fast-path.test.ts.
 */

import { nativeJsonKeysTrusted } from '../native-json-keys.ts';
import { decodeJsonBytes } from '../python-bytes.ts';
import { faithfulJsonLoads, JSON_WHITESPACE, type PythonLoadsOptions } from './faithful-loads.ts';

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
  while (k > 0 && JSON_WHITESPACE.has(doc[k - 1]!)) k -= 1;
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

/**
 * `json.loads` on text: returns plain JS values (objects keep the last duplicate key, like Python).
 * With `keepFloats`, a number written with a fraction or an exponent is a `PythonFloat` (see below).
 * Fast path: `JSON.parse` accepts exactly the JSON grammar, which the faithful parser also accepts
 * with the same values (same number conversion, last duplicate wins in the first key's place, own
 * `__proto__` keys, escapes and lone surrogates kept as code units). What it rejects (NaN, Infinity,
 * any syntax error) goes to the faithful parser, which accepts CPython's extensions or throws CPython's
 * error text. `keepFloats` needs the number's spelling, so it takes the faithful parser (whose strings
 * are read a run at a time: a chat body is mostly message text) unless the document cannot hold a float.
 * Property-tested against the faithful parser in fast-path.test.ts.
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

/**
 * `json.loads` on bytes: decoded as CPython does (BOM-aware UTF-8/16/32, `surrogatepass`), then the text
 * parser. Undecodable bytes raise `PythonUnicodeDecodeError`, not `PythonJsonDecodeError`.
 */
export function pythonJsonLoadsBytes(bytes: Uint8Array, options: PythonLoadsOptions = {}): unknown {
  return pythonJsonLoads(decodeJsonBytes(bytes), options);
}
