import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { delimiter, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { HARNESS_NODE_FLAGS } from '../../common/node-flags.ts';

/**
 * Every way the harness starts a process passes HARNESS_NODE_FLAGS: the binary's shebang (what `npx
 * harness` and `harness serve …` run), the npm scripts, and, checked here on a live process, the flags
 * the kernel actually recorded for a `harness serve` started through the shebang.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const BIN = `${ROOT}bin/harness.ts`;
const flags = HARNESS_NODE_FLAGS.join(' ');

describe('the harness processes run with HARNESS_NODE_FLAGS', () => {
  it('the binary’s shebang passes them to node', () => {
    const first = readFileSync(BIN, 'utf8').split('\n')[0];
    expect(first).toBe(`#!/usr/bin/env -S node ${flags}`);
  });

  it('the npm scripts that start the binary or the benchmarks pass them', () => {
    const { scripts } = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as {
      scripts: Record<string, string>;
    };
    const entries = ['bin/harness.ts', 'scripts/bench/bench.ts'];
    const starting = Object.entries(scripts).filter(([, command]) =>
      entries.some((entry) => command.includes(entry)),
    );
    expect(starting.map(([name]) => name).sort()).toEqual(['bench', 'harness', 'replay']);
    for (const [, command] of starting)
      expect(command).toMatch(
        new RegExp(`^node ${flags} (${entries.map((entry) => entry.replaceAll('.', '\\.')).join('|')})`),
      );
  });

  it.skipIf(!existsSync('/proc/self/cmdline'))(
    'a `harness serve policy` started through the shebang has them on its command line (skips without /proc)',
    async () => {
      // The shebang finds `node` on PATH, as npx's PATH gives it: this test's own (pinned) node first.
      const env = { PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` };
      const child = spawn(BIN, ['serve', 'policy', '--port', '0'], {
        env,
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      const exited = once(child, 'exit');
      try {
        await new Promise<void>((resolve, reject) => {
          child.stdout?.on('data', (chunk: Buffer) => {
            if (chunk.toString().includes('listening')) resolve();
          });
          void exited.then(([code]) =>
            reject(new Error(`harness serve policy exited ${code} before listening`)),
          );
        });
        const argv = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
        expect(argv.slice(1, 1 + HARNESS_NODE_FLAGS.length)).toEqual([...HARNESS_NODE_FLAGS]);
        expect(argv[1 + HARNESS_NODE_FLAGS.length]).toBe(BIN);
      } finally {
        child.kill('SIGTERM');
        await exited;
      }
    },
  );
});
