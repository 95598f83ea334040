import { readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isTestPath, REPO_ROOT, sourceFiles } from '../helpers/source-files.ts';

/**
 * Production code reads JSON with `parseJson` or `pythonJsonLoads` (common/python-json/loads.ts), never with
 * `JSON.parse` itself (nor `Response.json()`, which is JSON.parse of the text): V8's can misread an escaped object key after an earlier parse
 * (common/native-json-keys.ts, nodejs/node#63785), and the fakes read what other processes send.
 * Only the two readers call it: loads.ts behind the check, and the faithful parser on a string token it has
 * already checked with CPython's grammar. Comments may name it; scripts/ is left out (it
 * reads only the JSON this repository's own benchmarks and tools print).
 */

const ALLOWED = new Set(['common/python-json/loads.ts', 'common/python-json/faithful-loads.ts']);
// `JSON.parse` itself, or `Request`/`Response`'s `.json()`, which is JSON.parse of the text.
const CALL = /\bJSON\.parse\s*\(|\.json\(\s*\)/;

/** The lines of `source` that call `JSON.parse`, comment lines left out. */
function callingLines(source: string): number[] {
  const out: number[] = [];
  source.split('\n').forEach((line, k) => {
    const code = line.trimStart();
    if (code.startsWith('*') || code.startsWith('//') || code.startsWith('/*')) return;
    if (CALL.test(code.replace(/\/\/.*$/, ''))) out.push(k + 1);
  });
  return out;
}

describe('no native JSON.parse in production code', () => {
  it('the scanner finds calls and skips comments', () => {
    expect(callingLines('const v = JSON.parse(text);\n// JSON.parse(x)\n * `JSON.parse(doc)`')).toEqual([1]);
    expect(callingLines('a();\n  return JSON.parse (t) as X; // read')).toEqual([2]);
    expect(callingLines('parseJson(text); // not JSON.parse(text)')).toEqual([]);
    expect(callingLines('const v = await response.json();\nparseJson(await response.text());')).toEqual([1]);
  });

  it('no production source calls it outside the two readers of common/python-json/', async () => {
    const found: string[] = [];
    let scanned = 0;
    for (const file of await sourceFiles()) {
      const rel = relative(REPO_ROOT, file);
      if (isTestPath(rel) || ALLOWED.has(rel) || rel.startsWith('scripts/')) continue;
      scanned += 1;
      for (const line of callingLines(await readFile(file, 'utf8'))) found.push(`${rel}:${line}`);
    }
    expect(scanned).toBeGreaterThan(100);
    expect(found).toEqual([]);
  });

  it('each allowed file exists and calls it (the allowance names no stale path)', async () => {
    for (const rel of ALLOWED) {
      const lines = callingLines(await readFile(join(REPO_ROOT, rel), 'utf8'));
      expect(lines.length, rel).toBeGreaterThan(0);
    }
  });
});
