/**
 * `npm run bench:tokenizer`: what `--tokenizer qwen3` costs (docs/tokenizers.md, benchmarks/README.md).
 *   1. the Qwen3 tokenizer's load time and memory in a fresh process, and its encode throughput
 *      (scripts/bench/tokenizer-probe.ts, three runs; the median);
 *   2. the realistic step, `harness replay` (the recipe's 4 prompts x 8 samples, generated episodes), on
 *      toy ids and on Qwen3 ids in the same run, alternated (toy, qwen3, toy, qwen3, … `--pairs` times),
 *      each a fresh process (scripts/bench/replay-probe.ts): wall time, step time, peak RSS, and the
 *      qwen3/toy ratios (each pair's, and their median).
 * Prints one JSON object (format harness-bench-tokenizer/1) on stdout; `--out FILE` also writes it.
 *
 *   node --max-semi-space-size=16 scripts/bench/tokenizer-bench.ts [--pairs N] [--batch N] [--samples M] [--out FILE]
 */
import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { z } from 'zod';
import { parseScriptFlags, valueFlag } from '../../common/cli-flags.ts';
import { HARNESS_NODE_FLAGS } from '../../common/node-flags.ts';
import { machineInfo } from './machine.ts';
import { median } from './stats.ts';

const TOKENIZER_PROBE = fileURLToPath(new URL('./tokenizer-probe.ts', import.meta.url));
const REPLAY_PROBE = fileURLToPath(new URL('./replay-probe.ts', import.meta.url));

const Count = z.coerce.number().int().positive();
const FLAGS = {
  pairs: valueFlag('N', Count.default(1), 'toy/qwen3 replay pairs, alternated [1]'),
  batch: valueFlag('N', Count.default(4), "replay --rollout-batch-size [the recipe's 4]"),
  samples: valueFlag('M', Count.default(8), "replay --n-samples-per-prompt [the recipe's 8]"),
  out: valueFlag('FILE', z.string().min(1).optional(), 'also write the result here'),
};
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
  readonly tokenizer: 'toy' | 'qwen3';
  readonly exit_code: number;
  readonly wall_ms: number;
  readonly step_ms: number;
  readonly peak_rss_mb: number;
}
const runs: StepRun[] = [];
for (let k = 0; k < pairs; k += 1) {
  for (const tokenizer of ['toy', 'qwen3'] as const) {
    process.stderr.write(
      `replay ${batch}x${samples}, --tokenizer ${tokenizer} (pair ${k + 1} of ${pairs})\n`,
    );
    const probe = await lastJson([
      REPLAY_PROBE,
      '--rollout-batch-size',
      batch,
      '--n-samples-per-prompt',
      samples,
      '--tokenizer',
      tokenizer,
    ]);
    const steps = probe.steps as Array<{ duration_ms: number }>;
    runs.push({
      tokenizer,
      exit_code: num(probe, 'exit_code'),
      wall_ms: num(probe, 'wall_ms'),
      step_ms: steps[0]?.duration_ms ?? Number.NaN,
      peak_rss_mb: num(probe, 'peak_rss_mb'),
    });
  }
}
// Each pair's own ratio (its two runs are neighbours in time, so they share the machine's load), then
// the median over pairs: on a shared machine a ratio of medians mixes different loads.
const pairRatios = (key: 'wall_ms' | 'step_ms' | 'peak_rss_mb') =>
  Array.from({ length: pairs }, (_, k) => runs[2 * k + 1]![key] / runs[2 * k]![key]);
const ratio = (key: 'wall_ms' | 'step_ms' | 'peak_rss_mb') => Math.round(median(pairRatios(key)) * 100) / 100;
const result = {
  format: 'harness-bench-tokenizer/1',
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
    runs,
    qwen3_over_toy: { wall: ratio('wall_ms'), step: ratio('step_ms'), peak_rss: ratio('peak_rss_mb') },
    step_ratio_per_pair: pairRatios('step_ms').map((r) => Math.round(r * 100) / 100),
  },
};
const text = `${JSON.stringify(result, null, 2)}\n`;
if (values.out !== undefined) await writeFile(values.out, text);
process.stdout.write(text);
