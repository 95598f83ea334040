/**
 * `npm run bench:tokenizer`: what `--tokenizer qwen3` costs (docs/tokenizers.md, benchmarks/README.md).
 *   1. the Qwen3 tokenizer's load time and memory in a fresh process, and its encode throughput
 *      (scripts/bench/tokenizer-probe.ts, three runs; the median);
 *   2. the realistic step, `harness replay` (the recipe's 4 prompts x 8 samples), on toy ids and on Qwen3
 *      ids in the same run, alternated (toy, qwen3, toy, qwen3, … `--pairs` times), each a fresh process
 *      (scripts/bench/replay-probe.ts): wall time, step time, CPU seconds, peak RSS, and the qwen3/toy
 *      ratios (each pair's, and their median), twice: on each flag's default episodes (what a user gets)
 *      and on the same written episodes (like for like). With `--baseline DIR` the other checkout's
 *      probe runs in each pair too, so a change is read before and after under the same load.
 * Prints one JSON object (format harness-bench-tokenizer/2) on stdout; `--out FILE` also writes it.
 *
 *   node --max-semi-space-size=16 scripts/bench/tokenizer-bench.ts [--pairs N] [--batch N] [--samples M] [--baseline DIR] [--out FILE]
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { z } from 'zod';
import { parseScriptFlags, valueFlag } from '../../common/cli-flags.ts';
import { HARNESS_NODE_FLAGS } from '../../common/node-flags.ts';
import { machineInfo } from './machine.ts';
import { median } from './stats.ts';

const TOKENIZER_PROBE = fileURLToPath(new URL('./tokenizer-probe.ts', import.meta.url));
const REPLAY_PROBE = fileURLToPath(new URL('./replay-probe.ts', import.meta.url));
const HARNESS_BIN = fileURLToPath(new URL('../../bin/harness.ts', import.meta.url));

const Count = z.coerce.number().int().positive();
const FLAGS = {
  pairs: valueFlag('N', Count.default(1), 'toy/qwen3 replay pairs, alternated [1]'),
  batch: valueFlag('N', Count.default(4), "replay --rollout-batch-size [the recipe's 4]"),
  samples: valueFlag('M', Count.default(8), "replay --n-samples-per-prompt [the recipe's 8]"),
  out: valueFlag('FILE', z.string().min(1).optional(), 'also write the result here'),
  baseline: valueFlag(
    'DIR',
    z.string().min(1).optional(),
    "another checkout (before a change) whose replay-probe.ts runs alternately with this tree's",
  ),
};
type Episodes = 'default' | 'same';
const SPEC = {
  command: 'bench:tokenizer',
  invocation: 'npm run bench:tokenizer --',
  flags: FLAGS,
  about: 'What --tokenizer qwen3 costs: the tokenizer alone, then replay steps on toy and Qwen3 ids.',
};

const values = parseScriptFlags(process.argv.slice(2), SPEC, process);
if (typeof values === 'number') process.exit(values);
const pairs = values.pairs;
const batch = String(values.batch);
const samples = String(values.samples);

async function lastJson(args: readonly string[]): Promise<Record<string, unknown>> {
  const run = await execa(process.execPath, [...HARNESS_NODE_FLAGS, '--expose-gc', ...args], {
    reject: false,
  });
  const last = run.stdout.trim().split('\n').at(-1) ?? '';
  try {
    return JSON.parse(last) as Record<string, unknown>;
  } catch {
    throw new Error(`probe printed no result (exit ${run.exitCode}): ${run.stderr.slice(-1000)}`);
  }
}

const startedAt = new Date().toISOString();
const machine = await machineInfo();
process.stderr.write('tokenizer: load and encode, 3 fresh processes\n');
const loads = [];
for (let k = 0; k < 3; k += 1) loads.push(await lastJson([TOKENIZER_PROBE]));
const num = (r: Record<string, unknown>, key: string) => r[key] as number;

interface StepRun {
  readonly tree: 'this' | 'baseline';
  readonly episodes: Episodes;
  readonly tokenizer: 'toy' | 'qwen3';
  readonly exit_code: number;
  readonly wall_ms: number;
  readonly step_ms: number;
  /** user + sys CPU seconds of the whole probe process (/usr/bin/time): steadier than wall on a shared machine. */
  readonly cpu_s: number;
  readonly peak_rss_mb: number;
}

/** The probe under /usr/bin/time, whose last stderr line is `CPU user sys`. */
async function timedProbe(probe: string, args: readonly string[]) {
  const run = await execa(
    '/usr/bin/time',
    ['-f', 'CPU %U %S', process.execPath, ...HARNESS_NODE_FLAGS, '--expose-gc', probe, ...args],
    { reject: false },
  );
  const cpu = /CPU ([\d.]+) ([\d.]+)\s*$/.exec(run.stderr);
  const last = run.stdout.trim().split('\n').at(-1) ?? '';
  if (cpu === null) throw new Error(`/usr/bin/time printed no CPU line: ${run.stderr.slice(-1000)}`);
  try {
    return { probe: JSON.parse(last) as Record<string, unknown>, cpuS: Number(cpu[1]) + Number(cpu[2]) };
  } catch {
    throw new Error(`probe printed no result (exit ${run.exitCode}): ${run.stderr.slice(-1000)}`);
  }
}

// Like for like: the user-facing qwen3 replay turns tool calls on (tool_call_rate 0.25, docs/replay.md),
// which draws differently from then on, so its episodes are not the toy's. `same` plays one set of
// written scripts (the generator's defaults, seed 42) on both tokenizers; `default` is what
// `harness replay` does with each flag.
const sameDir = await mkdtemp(join(tmpdir(), 'harness-bench-tokenizer-'));
await execa(process.execPath, [HARNESS_BIN, 'episodes', 'generate', '--out', sameDir, '--seed', '42']);
const episodeArgs: Record<Episodes, readonly string[]> = { default: [], same: ['--episodes', sameDir] };

const trees = values.baseline === undefined ? (['this'] as const) : (['baseline', 'this'] as const);
const probeOf = (tree: 'this' | 'baseline') =>
  tree === 'this' ? REPLAY_PROBE : join(resolve(values.baseline!), 'scripts/bench/replay-probe.ts');
const runs: StepRun[] = [];
for (let k = 0; k < pairs; k += 1) {
  for (const tree of trees) {
    for (const episodes of ['default', 'same'] as const) {
      for (const tokenizer of ['toy', 'qwen3'] as const) {
        process.stderr.write(
          `replay ${batch}x${samples}, ${tree} tree, ${episodes} episodes, --tokenizer ${tokenizer} (pair ${k + 1} of ${pairs})\n`,
        );
        const { probe, cpuS } = await timedProbe(probeOf(tree), [
          '--rollout-batch-size',
          batch,
          '--n-samples-per-prompt',
          samples,
          '--tokenizer',
          tokenizer,
          ...episodeArgs[episodes],
        ]);
        const steps = probe.steps as Array<{ duration_ms: number }>;
        runs.push({
          tree,
          episodes,
          tokenizer,
          exit_code: num(probe, 'exit_code'),
          wall_ms: num(probe, 'wall_ms'),
          step_ms: steps[0]?.duration_ms ?? Number.NaN,
          cpu_s: Math.round(cpuS * 100) / 100,
          peak_rss_mb: num(probe, 'peak_rss_mb'),
        });
      }
    }
  }
}
await rm(sameDir, { recursive: true, force: true });

// Each pair's own ratio (its two runs are neighbours in time, so they share the machine's load), then
// the median over pairs: on a shared machine a ratio of medians mixes different loads.
const r2 = (v: number) => Math.round(v * 100) / 100;
function ratios(tree: 'this' | 'baseline', episodes: Episodes) {
  const of = (tokenizer: 'toy' | 'qwen3') =>
    runs.filter((r) => r.tree === tree && r.episodes === episodes && r.tokenizer === tokenizer);
  const [toy, qwen3] = [of('toy'), of('qwen3')];
  const perPair = (key: 'wall_ms' | 'step_ms' | 'cpu_s' | 'peak_rss_mb') =>
    qwen3.map((q, k) => q[key] / toy[k]![key]);
  return {
    tree,
    episodes,
    step: r2(median(perPair('step_ms'))),
    cpu: r2(median(perPair('cpu_s'))),
    wall: r2(median(perPair('wall_ms'))),
    peak_rss: r2(median(perPair('peak_rss_mb'))),
    step_per_pair: perPair('step_ms').map(r2),
    cpu_per_pair: perPair('cpu_s').map(r2),
  };
}
const result = {
  format: 'harness-bench-tokenizer/2',
  started_at: startedAt,
  machine,
  tokenizer: {
    load_ms: median(loads.map((r) => num(r, 'load_ms'))),
    heap_added_mb: median(loads.map((r) => num(r, 'heap_added_mb'))),
    rss_added_mb: median(loads.map((r) => num(r, 'rss_added_mb'))),
    encode_tokens_per_s: median(loads.map((r) => num(r, 'encode_tokens_per_s'))),
  },
  replay: {
    rollouts: Number(batch) * Number(samples),
    pairs,
    baseline: values.baseline ?? null,
    runs,
    qwen3_over_toy: trees.flatMap((tree) => [ratios(tree, 'default'), ratios(tree, 'same')]),
  },
};
const text = `${JSON.stringify(result, null, 2)}\n`;
if (values.out !== undefined) await writeFile(values.out, text);
process.stdout.write(text);
for (const r of result.replay.qwen3_over_toy) {
  process.stderr.write(
    `qwen3/toy, ${r.tree} tree, ${r.episodes} episodes: step ×${r.step} (pairs ${r.step_per_pair.join(', ')}), CPU ×${r.cpu}\n`,
  );
}
