/**
 * `npm run bench:workers`: what `--session-server-workers 32` (newer Miles' default, PR #2774) costs the
 * replay step against one session server, on the same episodes: the recipe's step (4 prompts x 8
 * samples, generated episodes, one seed) with 1 and with N fake workers, alternated (1, N, 1, N, …
 * `--pairs` times), each a fresh process (scripts/bench/workers-probe.ts): wall time, step time, peak
 * RSS, and each pair's N/1 ratios with their median (docs/performance.md; target ≤ 1.2× wall, ≤ +200 MB).
 * Prints one JSON object (format harness-bench-workers/1) on stdout; `--out FILE` also writes it.
 *
 *   node --max-semi-space-size=16 scripts/bench/workers-bench.ts [--pairs N] [--workers N] [--seed S] [--out FILE]
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { z } from 'zod';
import { parseScriptFlags, valueFlag } from '../../common/cli-flags.ts';
import { HARNESS_NODE_FLAGS } from '../../common/node-flags.ts';
import { machineInfo } from './machine.ts';
import { median } from './stats.ts';

const PROBE = fileURLToPath(new URL('./workers-probe.ts', import.meta.url));

const Count = z.coerce.number().int().positive();
const SPEC = {
  command: 'bench:workers',
  invocation: 'npm run bench:workers --',
  flags: {
    pairs: valueFlag('N', Count.default(3), '1-worker / N-worker replay pairs, alternated [3]'),
    workers: valueFlag('N', Count.default(32), "session-server workers of the second run [the recipe's 32]"),
    seed: valueFlag(
      'S',
      z.coerce.number().int().min(0).default(42),
      'replay seed, the same for every run [42]',
    ),
    out: valueFlag('FILE', z.string().min(1).optional(), 'also write the result here'),
  },
  about: 'The replay step over N session-server workers against one, on the same episodes.',
};

const values = parseScriptFlags(process.argv.slice(2), SPEC, process);
if (typeof values === 'number') process.exit(values);
const seed = String(values.seed);

const ProbeSchema = z.object({
  workers: z.number(),
  wall_ms: z.number(),
  step_ms: z.array(z.number()),
  rollouts: z.array(z.number()),
  verdict: z.string(),
  peak_rss_mb: z.number(),
});
type Probe = z.infer<typeof ProbeSchema>;

async function probe(workers: number): Promise<Probe> {
  const run = await execa(process.execPath, [...HARNESS_NODE_FLAGS, PROBE, String(workers), '1', seed], {
    reject: false,
  });
  const last = run.stdout.trim().split('\n').at(-1) ?? '';
  try {
    return ProbeSchema.parse(JSON.parse(last));
  } catch {
    throw new Error(`workers probe printed no result (exit ${run.exitCode}): ${run.stderr.slice(-1000)}`);
  }
}

const startedAt = new Date().toISOString();
const machine = await machineInfo();
const runs: Probe[] = [];
for (let k = 0; k < values.pairs; k += 1)
  for (const workers of [1, values.workers]) {
    process.stderr.write(`replay step, ${workers} worker(s) (pair ${k + 1} of ${values.pairs})\n`);
    runs.push(await probe(workers));
  }
// Each pair's own ratio (its two runs are neighbours in time and share the machine's load), then the
// median over pairs.
const pairs = Array.from({ length: values.pairs }, (_, k) => [runs[2 * k]!, runs[2 * k + 1]!] as const);
const round2 = (v: number) => Math.round(v * 100) / 100;
const stepOf = (p: Probe) => p.step_ms[0] ?? Number.NaN;
const result = {
  format: 'harness-bench-workers/1',
  started_at: startedAt,
  machine,
  seed: values.seed,
  workers: values.workers,
  runs,
  many_over_one: {
    wall: round2(median(pairs.map(([one, many]) => many.wall_ms / one.wall_ms))),
    step: round2(median(pairs.map(([one, many]) => stepOf(many) / stepOf(one)))),
    peak_rss_added_mb: Math.round(median(pairs.map(([one, many]) => many.peak_rss_mb - one.peak_rss_mb))),
  },
  step_ratio_per_pair: pairs.map(([one, many]) => round2(stepOf(many) / stepOf(one))),
};
const text = `${JSON.stringify(result, null, 2)}\n`;
if (values.out !== undefined) await writeFile(values.out, text);
process.stdout.write(text);
