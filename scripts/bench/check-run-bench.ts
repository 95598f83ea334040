import { spawn } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { parseScriptFlags, valueFlag } from '../../common/cli-flags.ts';
import { wholeNumber } from '../../common/whole-number.ts';
import { DEFAULT_PYTHON } from '../../replay/conformance/miles-server.ts';
import { runReplay } from '../../replay/run-replay.ts';
import { milesDumpInput, writeMilesDumps } from '../../replay/testing/miles-dumps.ts';

/**
 * Issue 36 item 5: `harness check-run` at the recipe's scale. A few distinct replay steps of 4 prompts x
 * 8 generated episodes (contexts to 32k) are written by Miles' own writers (write_dumps.py, its input's
 * `repeat` making a `--steps`-step run of them) with Miles' log_rollout_data log; then `harness
 * check-run` runs as a child under /usr/bin/time. Prints wall and CPU seconds, seconds per step (from
 * its progress lines) and the peak RSS of the command and of its converter. Needs MILES_ROOT and torch.
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
  },
};

/** Peak RSS (VmHWM) of a process and its children, polled from /proc until it exits. */
async function peakRss(pid: number, done: Promise<unknown>): Promise<Map<string, number>> {
  const peaks = new Map<string, number>();
  const read = async (p: number) => {
    try {
      const status = await readFile(`/proc/${p}/status`, 'utf8');
      const name = /Name:\s+(\S+)/.exec(status)?.[1] ?? String(p);
      const hwm = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
      peaks.set(name, Math.max(peaks.get(name) ?? 0, hwm));
      const children = await readFile(`/proc/${p}/task/${p}/children`, 'utf8').catch(() => '');
      for (const c of children.trim().split(/\s+/).filter(Boolean)) await read(Number(c));
    } catch {}
  };
  let finished = false;
  void done.then(() => {
    finished = true;
  });
  while (!finished) {
    await read(pid);
    await new Promise((r) => setTimeout(r, 250));
  }
  return peaks;
}

async function main(): Promise<number> {
  const flags = parseScriptFlags(process.argv.slice(2), SPEC, process);
  if (typeof flags === 'number') return flags;
  const milesRoot = process.env.MILES_ROOT;
  if (!milesRoot) {
    process.stderr.write('check-run-bench: MILES_ROOT is not set (a radixark/miles checkout)\n');
    return 3;
  }
  const steps = flags.steps ?? 100;
  const distinct = flags.distinct ?? 4;
  const out = resolve(flags.out);
  await rm(out, { recursive: true, force: true });
  await mkdir(out, { recursive: true });
  const train = { global_batch_size: 32, dp_size: 2, allow_partial_train_step: false };
  const t0 = performance.now();
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
  const replayS = (performance.now() - t0) / 1000;
  const input = milesDumpInput(run.outcomes, { ...train, n_samples_per_prompt: 8, rollout_batch_size: 4 });
  const t1 = performance.now();
  await writeMilesDumps({
    python: flags.python,
    milesRoot,
    input: { ...(input as object), repeat: Math.ceil(steps / distinct) },
    workDir: out,
    details: join(out, 'details'),
    log: join(out, 'launcher.log'),
  });
  const writeS = (performance.now() - t1) / 1000;
  const child = spawn(
    '/usr/bin/time',
    [
      '-f',
      'TIME %e %U %S %M',
      process.execPath,
      join(ROOT, 'bin/harness.ts'),
      'check-run',
      join(out, 'details'),
      '--log',
      join(out, 'launcher.log'),
      '--python',
      flags.python,
      '--json-file',
      join(out, 'check-run.json'),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, MILES_ROOT: milesRoot } },
  );
  const exited = new Promise<number>((r) => child.once('exit', (code) => r(code ?? -1)));
  const peaks = peakRss(child.pid!, exited);
  const stepAt: number[] = [];
  let time = '';
  for await (const line of createInterface({ input: child.stderr })) {
    if (line.startsWith('check-run: step ')) stepAt.push(performance.now());
    if (line.startsWith('TIME ')) time = line;
  }
  const code = await exited;
  const [wall, user, sys, maxKb] = time.split(' ').slice(1).map(Number);
  const gaps = stepAt.slice(1).map((t, i) => (t - stepAt[i]!) / 1000);
  const sorted = [...gaps].sort((a, b) => a - b);
  const report = JSON.parse(await readFile(join(out, 'check-run.json'), 'utf8'));
  const result = {
    exit_code: code,
    steps: report.totals.steps,
    samples: report.totals.samples,
    distinct_replay_steps: distinct,
    replay_s: Math.round(replayS),
    miles_write_s: Math.round(writeS),
    check_run: {
      wall_s: wall,
      cpu_s: (user ?? 0) + (sys ?? 0),
      max_rss_mb_largest_process: Math.round((maxKb ?? 0) / 1024),
    },
    seconds_per_step: { median: sorted[Math.floor(sorted.length / 2)] ?? null, max: sorted.at(-1) ?? null },
    peak_rss_mb: Object.fromEntries([...(await peaks)].map(([k, v]) => [k, Math.round(v)])),
    totals: report.totals,
    verdict: report.verdict,
  };
  await writeFile(join(out, 'bench.json'), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  return 0;
}

process.exitCode = await main();
