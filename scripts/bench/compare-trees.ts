import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { z } from 'zod';
import { type FlagSet, parseScriptFlags, switchFlag, valueFlag } from '../../common/cli-flags.ts';
import { EXIT } from '../../common/exit-codes.ts';
import { parseJson } from '../../common/python-json/loads.ts';
import { compare, QUICK_METRICS, STEP_METRICS, type Tree, table } from './tree-comparison.ts';

/**
 * `npm run bench:compare`: the same benchmark on two or more checkouts of the harness, run alternately in
 * one session (benchmarks/README.md "Before and after"), so a change is read as a ratio between trees
 * measured under the same load rather than against figures from another day. Each round runs every tree
 * once, the order rotated round by round; a tree's figure is the median over rounds, and its ratio is
 * that median over the first tree's.
 */

const TreeSchema = z
  .string()
  .regex(/^[^=]+=.+$/, 'must be NAME=DIR')
  .transform((s) => {
    const at = s.indexOf('=');
    return { name: s.slice(0, at), dir: resolve(s.slice(at + 1)) };
  })
  .refine((t) => benchEntries('bench.ts').some((f) => existsSync(resolve(t.dir, f))), {
    message: 'DIR must be a checkout of the harness (no scripts/bench/bench.ts or scripts/bench.ts there)',
  });

/** Where a tree keeps a script of the benchmarks: scripts/bench/ since issue 35 split scripts/ by role, scripts/ before. */
function benchEntries(file: string): string[] {
  return [`scripts/bench/${file}`, `scripts/${file}`];
}

function benchScript(tree: Tree, file: string): string {
  const found = benchEntries(file).find((f) => existsSync(resolve(tree.dir, f)));
  return resolve(tree.dir, found ?? `scripts/bench/${file}`);
}

const FLAGS = {
  tree: {
    type: 'string',
    multiple: true,
    meta: 'NAME=DIR',
    schema: z.array(TreeSchema).min(2, 'give at least two --tree NAME=DIR'),
    help: "a checkout to measure (the first is the baseline of the ratios); its node_modules\nmust resolve (a symlink to this checkout's will do)",
  },
  probe: valueFlag(
    'quick|step',
    z.enum(['quick', 'step']).default('quick'),
    "quick [default]: `npm run bench -- --quick --json` in each tree (chat, samples op, a small\nstep, the replay; about a minute a run); step: the realistic step at the recipe's scale, 32\nrollouts x 50 turns to 32,768 tokens, client and fakes each a process (realistic-probe.ts)",
  ),
  rounds: valueFlag('N', z.coerce.number().int().positive().default(3), 'runs of each tree [3]'),
  json: switchFlag('print one JSON object on stdout (progress goes to stderr)'),
} satisfies FlagSet;

const SPEC = {
  command: 'bench:compare',
  invocation: 'npm run bench:compare --',
  flags: FLAGS,
  about: 'The same benchmark on two or more checkouts, alternately in one session, as ratios to the first.',
};

function probeArgs(probe: 'quick' | 'step', tree: Tree): string[] {
  const flags = ['--max-semi-space-size=16'];
  if (probe === 'quick') return [...flags, benchScript(tree, 'bench.ts'), '--quick', '--json'];
  const probeFile = benchScript(tree, 'realistic-probe.ts');
  return ['--expose-gc', ...flags, probeFile, '32', '50', '32768', '1', 'processes'];
}

/** One probe run in `tree` with this process's Node; its JSON (the last line of stdout). */
function runProbe(probe: 'quick' | 'step', tree: Tree): Promise<unknown> {
  return new Promise((done, fail) => {
    execFile(
      process.execPath,
      probeArgs(probe, tree),
      { cwd: tree.dir, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) {
          fail(new Error(`${tree.name}: the probe failed (${error.message})\n${stderr.slice(-2000)}`));
          return;
        }
        const lines = stdout.trim().split('\n');
        try {
          done(parseJson(lines[lines.length - 1] ?? ''));
        } catch {
          fail(new Error(`${tree.name}: the probe printed no JSON:\n${stdout.slice(-2000)}`));
        }
      },
    );
  });
}

async function main(): Promise<number> {
  const values = parseScriptFlags(process.argv.slice(2), SPEC, process);
  if (typeof values === 'number') return values;
  const { tree: trees, probe, rounds, json } = values;
  const runs = new Map<string, unknown[]>(trees.map((t) => [t.name, []]));
  for (let round = 0; round < rounds; round += 1) {
    // Rotated each round, so no tree always runs first (a warm page cache, a quieter minute).
    const order = trees.map((_, k) => trees[(k + round) % trees.length]!);
    for (const tree of order) {
      process.stderr.write(`round ${round + 1}/${rounds}: ${tree.name} (${probe}) ...\n`);
      runs.get(tree.name)!.push(await runProbe(probe, tree));
    }
  }
  const result = compare(probe, probe === 'quick' ? QUICK_METRICS : STEP_METRICS, trees, runs, rounds);
  process.stdout.write(json ? `${JSON.stringify(result)}\n` : `${table(result)}\n`);
  return 0;
}

process.exitCode = await main().catch((error: unknown) => {
  process.stderr.write(`bench:compare: ${(error as Error).message}\n`);
  return EXIT.failed;
});
