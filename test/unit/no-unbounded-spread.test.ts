import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, sourceFiles } from '../helpers/source-files.ts';

/**
 * No array is spread into the arguments of a variadic built-in (`push(...xs)`, `Math.max(...xs)`, …):
 * every element becomes a call argument on the stack, and past ~120k elements the call throws
 * `RangeError: Maximum call stack size exceeded` (a 254 KiB chat message did that to the toy tokenizer).
 * Array literals (`[...a, ...b]`) iterate instead and are fine. A spread whose length is bounded by
 * construction may stay when the same line or the line above says why, with `bounded-spread: <reason>`.
 * See docs/security.md.
 */

const SELF = fileURLToPath(import.meta.url);

/** Built-ins whose arguments are the data: a spread hands them one argument per element. */
const VARIADIC_CALL =
  /(?:\.(?:push|unshift|splice)|\bMath\.(?:max|min|hypot)|\bString\.(?:fromCharCode|fromCodePoint))\s*\(/g;
const WAIVER = 'bounded-spread:';

/** Whether the argument list starting after `open` (the index just past `(`) has a spread at depth 0. */
function spreadsAtTopLevel(source: string, open: number): boolean {
  let depth = 0;
  let quote: string | undefined;
  for (let i = open; i < source.length; i++) {
    const ch = source[i]!;
    if (quote !== undefined) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = undefined;
      continue;
    }
    if (ch === "'" || ch === '"' || ch === '`') quote = ch;
    else if (ch === '(' || ch === '[' || ch === '{') depth++;
    else if (ch === ')' || ch === ']' || ch === '}') {
      if (depth === 0) return false;
      depth--;
    } else if (depth === 0 && source.startsWith('...', i)) return true;
  }
  return false;
}

/** `line: text` of every unwaived spread into a variadic built-in. */
function violations(source: string): string[] {
  const lines = source.split('\n');
  const found: string[] = [];
  for (const match of source.matchAll(VARIADIC_CALL)) {
    const at = match.index;
    if (!spreadsAtTopLevel(source, at + match[0].length)) continue;
    const lineNo = source.slice(0, at).split('\n').length;
    const here = lines[lineNo - 1] ?? '';
    const above = lines[lineNo - 2] ?? '';
    if (here.includes(WAIVER) || above.includes(WAIVER)) continue;
    found.push(`${lineNo}: ${here.trim()}`);
  }
  return found;
}

describe('no unbounded array spread into a call', () => {
  it('the scanner catches spreads into push, unshift, splice, Math.max/min and fromCharCode', () => {
    expect(violations('out.push(...ids);')).toEqual(['1: out.push(...ids);']);
    expect(violations("lines.push('', 'x', ...more.map(f));")).toHaveLength(1);
    expect(violations('a.unshift(...b); a.splice(0, 0, ...c);')).toHaveLength(2);
    expect(violations('Math.max(...xs) + Math.min(\n  ...ys)')).toHaveLength(2);
    expect(violations('String.fromCharCode(...codes)')).toHaveLength(1);
    // Not spreads into the call: object/array literals, rest parameters elsewhere, strings.
    expect(violations('out.push({ ...ref, x }); out.push([...a, ...b]); f(...xs);')).toEqual([]);
    expect(violations("out.push('...'); out.push(`a ... b`);")).toEqual([]);
    expect(violations('// bounded-spread: at most 3 problems\nout.push(...problems);')).toEqual([]);
    expect(violations('out.push(...problems); // bounded-spread: at most 3')).toEqual([]);
  });

  it('no source file in the repository spreads an array into a variadic built-in without a waiver', async () => {
    const files = (await sourceFiles()).filter((f) => f !== SELF);
    expect(files.length).toBeGreaterThan(100);
    const found: string[] = [];
    for (const file of files) {
      for (const v of violations(await readFile(file, 'utf8')))
        found.push(`${relative(REPO_ROOT, file)}:${v}`);
    }
    expect(found).toEqual([]);
  });
});
