import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { parseJson } from '../../common/python-json.ts';
import { compare, QUICK_METRICS, STEP_METRICS, type Tree, table } from './tree-comparison.ts';

/**
 * `npm run bench:compare`: the same benchmark on two or more checkouts of the harness, run alternately in
 * one session (benchmarks/README.md "Before and after"), so a change is read as a ratio between trees
 * measured under the same load rather than against figures from another day. Each round runs every tree
 * once, the order rotated round by round; a tree's figure is the median over rounds, and its ratio is
 * that median over the first tree's.
 */

const HELP = `usage: npm run bench:compare -- --tree NAME=DIR --tree NAME=DIR [--tree ...] [--probe quick|step]
                             [--rounds N] [--json]

  --tree NAME=DIR   a checkout to measure (the first is the baseline of the ratios); its node_modules
                    must resolve (a symlink to this checkout's will do)
  --probe quick     \`npm run bench -- --quick --json\` in each tree (chat, samples op, a small step, the
                    replay; about 80 s a run) [default]
  --probe step      the realistic step at the recipe's scale: 32 rollouts x 50 turns to 32,768 tokens, the
                    client and the two fakes each a process (scripts/bench/realistic-probe.ts)
  --rounds N        runs of each tree [3]
  --json            print one JSON object on stdout (progress goes to stderr)
  -h, --help        this help
`;

const TreeSchema = z
  .string()
  .regex(/^[^=]+=.+$/, 'must be NAME=DIR')
  .transform((s) => {
    const at = s.indexOf('=');
    return { name: s.slice(0, at), dir: resolve(s.slice(at + 1)) };
  })
  .refine((t) => existsSync(resolve(t.dir, 'scripts/bench.ts')), {
    message: 'DIR must be a checkout of the harness (no scripts/bench.ts there)',
  });

const OptionsSchema = z.object({
  tree: z.array(TreeSchema).min(2, 'give at least two --tree NAME=DIR'),
  probe: z.enum(['quick', 'step']).default('quick'),
  rounds: z.coerce.number().int().positive().default(3),
  json: z.boolean().default(false),
});

function probeArgs(probe: 'quick' | 'step', tree: Tree): string[] {
  const flags = ['--max-semi-space-size=16'];
  if (probe === 'quick') return [...flags, resolve(tree.dir, 'scripts/bench.ts'), '--quick', '--json'];
  const probeFile = resolve(tree.dir, 'scripts/bench/realistic-probe.ts');
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
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      options: {
        tree: { type: 'string', multiple: true },
        probe: { type: 'string' },
        rounds: { type: 'string' },
        json: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    });
  } catch (error) {
    process.stderr.write(`bench:compare: ${(error as Error).message}\n${HELP}`);
    return 2;
  }
  if (parsed.values.help === true) {
    process.stdout.write(HELP);
    return 0;
  }
  const options = OptionsSchema.safeParse(parsed.values);
  if (!options.success) {
    const issue = options.error.issues[0];
    process.stderr.write(`bench:compare: --${String(issue?.path[0] ?? 'options')}: ${issue?.message}\n`);
    return 2;
  }
  const { tree: trees, probe, rounds, json } = options.data;
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
  return 1;
});
