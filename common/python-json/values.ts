/**
 * Python's view of JSON-like values, for the texts and the bytes the fakes must write as Python does: its
 * `float` (kept apart from `int` where Miles' JSON keeps `1.0`), `repr()`, type names and truthiness.
 * Reading and writing JSON are beside it: faithful-loads.ts, loads.ts, faithful-dumps.ts, dumps.ts.
 */

// --- Python floats --------------------------------------------------------------------------------------
// JS has one number type, so `1.0` and `1` are the same value once parsed, while Python writes a float as
// `1.0` (Miles' JSON keeps an agent's `"reward": 1.0` as `1.0`). A value that must stay a Python float is
// wrapped in `PythonFloat`: `pythonJsonLoads(doc, { keepFloats: true })` produces it for every number
// written with a fraction or exponent, and `pythonJsonDumps` writes it as `repr(float)` does.

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
