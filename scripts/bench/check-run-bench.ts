import { spawn } from 'node:child_process';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { parseScriptFlags, switchFlag, valueFlag } from '../../common/cli-flags.ts';
import { HARNESS_NODE_FLAGS } from '../../common/node-flags.ts';
import { renderTable } from '../../common/text-table.ts';
import { wholeNumber } from '../../common/whole-number.ts';
import { DEFAULT_PYTHON } from '../../replay/conformance/miles-server.ts';
import { runReplay } from '../../replay/run-replay.ts';
import { milesDumpInput, writeMilesDumps } from '../../replay/testing/miles-dumps.ts';
import { type CheckRunBenchResult, CheckRunBenchResultSchema } from './check-run-result.ts';
import { machineInfo } from './machine.ts';
import { type ProcessUsage, sampleProcessTree } from './process-usage.ts';
import { median } from './stats.ts';

/**
 * Issue 36 item 5: `harness check-run` at the recipe's scale. A few distinct replay steps of 4 prompts x
 * 8 generated episodes (contexts to 32k) are written by Miles' own writers (write_dumps.py, its input's
 * `repeat` making a `--steps`-step run of them) with Miles' log_rollout_data log; then `harness
 * check-run` runs as a child under /usr/bin/time while its process tree is polled from /proc. Prints a
 * table (wall and CPU seconds per step, each process's CPU and peak RSS, their sum, the load average)
 * and writes the result JSON (check-run-result.ts). Needs MILES_ROOT and torch. docs/check-run.md "Scale".
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

const SPEC = {
  command: 'check-run-bench',
  invocation: 'node scripts/bench/check-run-bench.ts',
  about: "check-run over a 100-step recipe-scale --dump-details folder written by Miles' own writers.",
  flags: {
    out: valueFlag('DIR', z.string().min(1).default('.bench/check-run'), 'work folder (replaced)'),
    steps: valueFlag(
      'N',
      wholeNumber('--steps', 1, 1000).optional(),
      'steps in the dumped run (default 100)',
    ),
    distinct: valueFlag(
      'N',
      wholeNumber('--distinct', 1, 100).optional(),
      'distinct replay steps (default 4)',
    ),
    python: valueFlag('BIN', z.string().default(DEFAULT_PYTHON), 'Python with torch'),
    reuse: switchFlag(
      'check the dumps already under --out (a previous run wrote them) instead of writing new ones',
    ),
    result: valueFlag(
      'FILE',
      z.string().min(1).default('benchmarks/results/check-run.json'),
      'where the result JSON goes',
    ),
  },
};

/** What the generation step knows that the folder does not say (kept beside the dumps for --reuse). */
const DumpFactsSchema = z.object({
  distinct_replay_steps: z.number().int(),
  tokens_per_step: z.number().int(),
});
type DumpFacts = z.infer<typeof DumpFactsSchema>;

/** Replays `distinct` recipe-scale steps and has Miles' writers dump them `steps` times over. */
async function writeDumps(out: string, steps: number, distinct: number, python: string, milesRoot: string) {
  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  const train = { global_batch_size: 32, dp_size: 2, allow_partial_train_step: false };
  const run = await runReplay(
    {
      episodes: [],
      generated: { seed: 7 },
      prompts: join(ROOT, 'fixtures/prompts/tb2-89.jsonl'),
      rolloutBatchSize: 4,
      nSamplesPerPrompt: 8,
      steps: distinct,
      concurrency: 8,
      seed: 7,
      maxSeqLen: 32768,
      maxResponseLen: 8192,
      modelName: 'model',
      trialTimeoutS: 1800,
      agentTimeoutS: 3600,
      titoModel: 'glm47',
      train,
      keepRequestMessages: true,
    },
    { signal: new AbortController().signal, progress: { write: () => true } },
  );
  const tokens = run.outcomes
    .flatMap((o) => o.groups.filter((g) => g.dropped === null))
    .flatMap((g) => g.rollouts.flatMap((r) => r.samples))
    .reduce((n, s) => n + s.tokens.length, 0);
  const input = milesDumpInput(run.outcomes, { ...train, n_samples_per_prompt: 8, rollout_batch_size: 4 });
  await writeMilesDumps({
    python,
    milesRoot,
    input: { ...(input as object), repeat: Math.ceil(steps / distinct) },
    workDir: out,
    details: join(out, 'details'),
    log: join(out, 'launcher.log'),
  });
  const facts: DumpFacts = {
    distinct_replay_steps: distinct,
    tokens_per_step: Math.round(tokens / distinct),
  };
  await writeFile(join(out, 'dump-facts.json'), `${JSON.stringify(facts)}\n`);
  return facts;
}

interface Measured {
  readonly code: number;
  readonly wall: number;
  readonly cpu: number;
  readonly stepGaps: number[];
  readonly processes: ProcessUsage[];
}

/** `harness check-run` on the folder, under /usr/bin/time, its process tree polled from /proc. */
async function measureCheckRun(out: string, python: string, milesRoot: string): Promise<Measured> {
  const child = spawn(
    '/usr/bin/time',
    [
      '-f',
      'TIME %e %U %S',
      process.execPath,
      ...HARNESS_NODE_FLAGS, // what the harness binary's shebang runs it with
      join(ROOT, 'bin/harness.ts'),
      'check-run',
      join(out, 'details'),
      '--log',
      join(out, 'launcher.log'),
      '--python',
      python,
      '--json-file',
      join(out, 'check-run.json'),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, MILES_ROOT: milesRoot } },
  );
  const exited = new Promise<number>((r) => child.once('exit', (code) => r(code ?? -1)));
  const usage = sampleProcessTree(child.pid!, exited);
  const stepAt: number[] = [];
  let time = '';
  for await (const line of createInterface({ input: child.stderr })) {
    if (line.startsWith('check-run: step ')) stepAt.push(performance.now());
    if (line.startsWith('TIME ')) time = line;
  }
  const code = await exited;
  const [wall = 0, user = 0, sys = 0] = time.split(' ').slice(1).map(Number);
  const stepGaps = stepAt.slice(1).map((t, i) => (t - stepAt[i]!) / 1000);
  return { code, wall, cpu: user + sys, stepGaps, processes: await usage };
}

const round = (x: number, digits = 2): number => Math.round(x * 10 ** digits) / 10 ** digits;

function result(
  m: Measured,
  report: { totals: Record<string, number>; verdict: string },
  facts: DumpFacts | null,
  context: { dir: string; generated: boolean; before: number[]; started: string },
  machine: CheckRunBenchResult['machine'],
): CheckRunBenchResult {
  const steps = report.totals.steps ?? 0;
  const converter = m.processes.find((p) => p.command.includes('convert_dumps.py'));
  const node = m.processes.find(
    (p) => p.command.startsWith(process.execPath) && p.command.includes('harness.ts'),
  );
  const converterCpu = converter?.cpu_s ?? 0;
  // /usr/bin/time counts the whole tree; the converter idles before it exits, so its last reading is whole.
  const nodeCpu = m.cpu - converterCpu;
  const figures = (cpu: number, rss: number) => ({
    cpu_s: round(cpu),
    cpu_s_per_step: round(cpu / Math.max(1, steps), 3),
    peak_rss_mb: Math.round(rss),
  });
  return CheckRunBenchResultSchema.parse({
    format: 'harness-bench-check-run/1',
    started_at: context.started,
    machine,
    load_average: { before: context.before, after: loadavg().map((x) => round(x)) },
    dumps: {
      dir: context.dir,
      steps,
      samples: report.totals.samples ?? 0,
      tokens_per_step: facts?.tokens_per_step ?? null,
      distinct_replay_steps: facts?.distinct_replay_steps ?? null,
      generated: context.generated,
    },
    exit_code: m.code,
    verdict: report.verdict,
    wall_s: m.wall,
    step_wall_s: {
      median: m.stepGaps.length ? round(median(m.stepGaps)) : null,
      max: m.stepGaps.length ? round(m.stepGaps.reduce((a, b) => Math.max(a, b))) : null,
    },
    cpu_s: round(m.cpu),
    cpu_s_per_step: round(m.cpu / Math.max(1, steps), 3),
    node: figures(nodeCpu, node?.peak_rss_mb ?? 0),
    converter: figures(converterCpu, converter?.peak_rss_mb ?? 0),
    peak_rss_mb_sum: Math.round((node?.peak_rss_mb ?? 0) + (converter?.peak_rss_mb ?? 0)),
    totals: report.totals,
  });
}

function table(r: CheckRunBenchResult): string {
  const row = (name: string, cpu: number, perStep: number, rss: number | string) => [
    name,
    cpu.toFixed(1),
    perStep.toFixed(2),
    String(rss),
  ];
  return [
    `check-run: ${r.dumps.steps} steps, ${r.dumps.samples} samples, exit ${r.exit_code} (${r.verdict}); load average ${r.load_average.before.join(' ')} before, ${r.load_average.after.join(' ')} after; ${r.machine.nproc} CPUs`,
    renderTable(
      ['process', 'CPU s', 'CPU s/step', 'peak RSS MB'],
      [
        row('node (check-run)', r.node.cpu_s, r.node.cpu_s_per_step, r.node.peak_rss_mb),
        row('python (converter)', r.converter.cpu_s, r.converter.cpu_s_per_step, r.converter.peak_rss_mb),
        row('both', r.cpu_s, r.cpu_s_per_step, r.peak_rss_mb_sum),
      ],
      { align: ['left', 'right', 'right', 'right'], rule: true },
    ),
    `wall: ${r.wall_s} s; per step median ${r.step_wall_s.median} s, max ${r.step_wall_s.max} s`,
  ].join('\n');
}

async function main(): Promise<number> {
  const flags = parseScriptFlags(process.argv.slice(2), SPEC, process);
  if (typeof flags === 'number') return flags;
  const milesRoot = process.env.MILES_ROOT;
  if (!milesRoot) {
    process.stderr.write('check-run-bench: MILES_ROOT is not set (a radixark/miles checkout)\n');
    return 3;
  }
  const out = resolve(flags.out);
  const generated = !flags.reuse;
  if (flags.reuse && !(await stat(join(out, 'details')).catch(() => null))) {
    process.stderr.write(`check-run-bench: --reuse: no dumps under ${join(out, 'details')}\n`);
    return 2;
  }
  const facts = flags.reuse
    ? await readFile(join(out, 'dump-facts.json'), 'utf8').then(
        (text) => DumpFactsSchema.parse(JSON.parse(text)),
        () => null,
      )
    : await writeDumps(out, flags.steps ?? 100, flags.distinct ?? 4, flags.python, milesRoot);
  const machine = await machineInfo();
  const before = loadavg().map((x) => round(x));
  const started = new Date().toISOString();
  const measured = await measureCheckRun(out, flags.python, milesRoot);
  const report = JSON.parse(await readFile(join(out, 'check-run.json'), 'utf8'));
  const r = result(measured, report, facts, { dir: out, generated, before, started }, machine);
  const file = resolve(flags.result);
  await mkdir(dirname(file), { recursive: true });
  await writeFile(file, `${JSON.stringify(r, null, 2)}\n`);
  process.stdout.write(`${table(r)}\nwrote ${file}\n`);
  return 0;
}

process.exitCode = await main();
