import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root, for the source scans of test/unit. */
export const REPO_ROOT = fileURLToPath(new URL('../..', import.meta.url));

const SKIP_DIRS = new Set(['node_modules', '.git', 'benchmarks']);
const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;

/** Every JavaScript or TypeScript source under `dir` (dependencies, hidden folders and bench results left out). */
export async function sourceFiles(dir: string = REPO_ROOT): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (SKIP_DIRS.has(entry.name) || entry.name.startsWith('.')) continue;
      for (const file of await sourceFiles(join(dir, entry.name))) out.push(file);
    } else if (SOURCE.test(entry.name)) out.push(join(dir, entry.name));
  }
  return out;
}

/** Whether a repository-relative path is a test's (a `*.test.*` file or anything under a `test` folder). */
export function isTestPath(path: string): boolean {
  return /\.test\.[cm]?[jt]s$/.test(path) || path.split('/').includes('test');
}
