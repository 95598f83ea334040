import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { captureIo } from './io.ts';
import { main } from './main.ts';

/**
 * What `--help` points a user at must be in the repository: a docs file that exists, never the
 * project's unshipped `shared/` folder or a section (§) of a design note the repository lacks.
 */

const ROOT = resolve(import.meta.dirname, '..');

async function help(argv: readonly string[]): Promise<string> {
  const io = captureIo();
  expect(await main([...argv, '--help'], io), argv.join(' ')).toBe(0);
  return io.out() + io.err();
}

/** Every command of `harness --help`, and the subcommands its help names (`harness X Y`, serve's targets). */
async function allHelpTexts(): Promise<Map<string, string>> {
  const texts = new Map<string, string>([['harness', await help([])]]);
  const commands = [...texts.get('harness')!.matchAll(/^ {2}([a-z][\w-]*) {2,}/gm)].map((m) => m[1]!);
  expect(commands.length).toBeGreaterThan(5);
  for (const command of commands) {
    const text = await help([command]);
    texts.set(command, text);
    const subs = new Set(
      [...text.matchAll(new RegExp(`harness ${command} ([a-z][\\w-]*)`, 'g'))].map((m) => m[1]!),
    );
    // `serve` lists its targets one a line under "targets:".
    const targets = text.split(/^targets:$/m)[1]?.split(/\n\n/)[0] ?? '';
    for (const [, target] of targets.matchAll(/^ {2}([a-z][\w-]*)$/gm)) subs.add(target!);
    for (const sub of subs) texts.set(`${command} ${sub}`, await help([command, sub]));
  }
  return texts;
}

describe('every --help text', () => {
  it('names only docs the repository has, and no shared/ path or spec section', async () => {
    const texts = await allHelpTexts();
    expect([...texts.keys()]).toEqual(
      expect.arrayContaining(['replay', 'serve harbor', 'surface check', 'trace replay', 'recipe diff']),
    );
    const bad: string[] = [];
    for (const [command, text] of texts) {
      for (const [name] of text.matchAll(/[\w./-]+\.md\b/g))
        if (!existsSync(join(ROOT, name))) bad.push(`${command}: ${name}`);
      for (const line of text.split('\n'))
        if (/(^|[^\w-])shared\/|§/.test(line)) bad.push(`${command}: ${line.trim()}`);
    }
    expect(bad).toEqual([]);
  }, 30_000);
});
