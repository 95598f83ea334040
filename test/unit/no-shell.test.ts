import { readFile } from 'node:fs/promises';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isTestPath, REPO_ROOT, sourceFiles } from '../helpers/source-files.ts';

/**
 * No user value reaches a shell: every child process in the repository is started with an argument
 * array. This scans the sources for the ways a shell gets involved anyway (docs/security.md).
 */

const SELF = fileURLToPath(import.meta.url);

interface Rule {
  readonly name: string;
  readonly pattern: RegExp;
  /** Test oracles may run bash on purpose (quoting round trips); production code may not. */
  readonly productionOnly?: boolean;
}

const RULES: readonly Rule[] = [
  { name: 'a shell option', pattern: /\bshell\s*:\s*(true|['"`])/ },
  { name: "execa's string-command API", pattern: /\bexecaCommand(Sync)?\b/ },
  {
    name: 'child_process exec/execSync imported',
    pattern: /import\s*\{[^}]*\b(exec|execSync)\b[^}]*\}\s*from\s*['"](node:)?child_process['"]/,
  },
  {
    name: 'child_process exec/execSync required',
    pattern: /\b(exec|execSync)\b[^;\n]*require\(\s*['"](node:)?child_process['"]\)/,
  },
  {
    name: 'exec through a child_process namespace',
    pattern: /\b(child_process|childProcess|cp)\.(exec|execSync)\s*\(/,
  },
  {
    name: 'a shell run with -c',
    pattern: /['"](?:\/bin\/)?(ba|z|da)?sh['"]\s*,\s*\[\s*(?:['"]--?\w+['"]\s*,\s*)*['"]-c['"]/,
    productionOnly: true,
  },
];

/** The rules a source text breaks. */
function violations(source: string, test: boolean): string[] {
  return RULES.filter((r) => !(r.productionOnly && test) && r.pattern.test(source)).map((r) => r.name);
}

describe('no shell anywhere', () => {
  it('the scanner catches each way of reaching a shell', () => {
    expect(violations("execa('make', [], { shell: true })", false)).toEqual(['a shell option']);
    expect(violations("spawn(cmd, { shell: '/bin/bash' })", false)).toEqual(['a shell option']);
    expect(violations('await execaCommand("git " + x)', false)).toEqual(["execa's string-command API"]);
    expect(violations("import { exec } from 'node:child_process';", false)).toEqual([
      'child_process exec/execSync imported',
    ]);
    expect(violations("const { execSync } = require('child_process');", false)).toEqual([
      'child_process exec/execSync required',
    ]);
    expect(violations('cp.exec(line)', false)).toEqual(['exec through a child_process namespace']);
    expect(violations("execa('bash', ['-c', script])", false)).toEqual(['a shell run with -c']);
    expect(violations("spawn('bash', ['--norc', '-c', SCRIPT])", true)).toEqual([]);
    expect(violations("execa('git', ['-C', dir, 'status']); /x/.exec(s)", false)).toEqual([]);
  });

  it('no source file in the repository breaks a rule', async () => {
    const files = (await sourceFiles()).filter((f) => f !== SELF);
    expect(files.length).toBeGreaterThan(100);
    const found: string[] = [];
    for (const file of files) {
      const rel = relative(REPO_ROOT, file);
      for (const v of violations(await readFile(file, 'utf8'), isTestPath(rel))) found.push(`${rel}: ${v}`);
    }
    expect(found).toEqual([]);
  });
});
