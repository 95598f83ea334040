import type { TokenizerResult } from '../result-schema.ts';
import { count, machineLine, mb, seconds, times } from './format.ts';

/** docs/tokenizers.md "Measured": benchmarks/results/tokenizer.json (`npm run bench:tokenizer`). */

type Run = TokenizerResult['replay']['runs'][number];
type Ratios = TokenizerResult['replay']['qwen3_over_toy'][number];

const EPISODES = {
  default: "each flag's default episodes (user-facing: qwen3 turns tool calls on)",
  same: 'the same written episodes on both (like for like)',
} as const;

const TREE = { this: 'after', baseline: 'before' } as const;

function ratioRow(r: Ratios, runs: readonly Run[], several: boolean): string {
  const of = (name: 'toy' | 'qwen3') =>
    runs.filter((x) => x.tree === r.tree && x.episodes === r.episodes && x.tokenizer === name);
  // `unit` takes the value only (`seconds`' second parameter is its digits, not map's index).
  const list = (xs: readonly number[], unit: (v: number) => string) => xs.map((x) => unit(x)).join(', ');
  const cpu = (s: number) => `${s.toFixed(1)} s`;
  const label = `${several ? `${TREE[r.tree]}, ` : ''}${EPISODES[r.episodes]}`;
  return [
    `| ${label}: step time, toy / qwen3 runs | ${list(
      of('toy').map((x) => x.step_ms),
      seconds,
    )} / ${list(
      of('qwen3').map((x) => x.step_ms),
      seconds,
    )} |`,
    `| ${label}: CPU (user + sys, whole process), toy / qwen3 runs | ${list(
      of('toy').map((x) => x.cpu_s),
      cpu,
    )} / ${list(
      of('qwen3').map((x) => x.cpu_s),
      cpu,
    )} |`,
    `| ${label}: qwen3 over toy per pair, step / CPU | ${r.step_per_pair.map(times).join(', ')} / ${r.cpu_per_pair.map(times).join(', ')} |`,
    `| ${label}: qwen3 over toy, median of the pairs | **step ${times(r.step)}**, CPU ${times(r.cpu)}, wall ${times(r.wall)}, peak RSS ${times(r.peak_rss)} (peak RSS ${list(
      of('toy').map((x) => x.peak_rss_mb),
      mb,
    )} / ${list(
      of('qwen3').map((x) => x.peak_rss_mb),
      mb,
    )}) |`,
  ].join('\n');
}

export function tokenizerFigures(r: TokenizerResult): string {
  const t = r.tokenizer;
  const several = r.replay.baseline !== null;
  const flags = `--pairs ${r.replay.pairs}${several ? ' --baseline DIR' : ''}`;
  return [
    `\`npm run -s bench:tokenizer -- ${flags} --out benchmarks/results/tokenizer.json\`: ${machineLine(r.machine, r.started_at)}.`,
    ...(several
      ? [
          '',
          '"before" is the checkout given as `--baseline` (its replay), "after" this tree; every pair runs both, alternated.',
        ]
      : []),
    '',
    '| what | figure |',
    '| --- | --- |',
    `| Qwen3 tokenizer load, fresh process (read, sha256, parse, build; median of 3) | ${seconds(t.load_ms)} |`,
    `| heap / RSS it adds | +${t.heap_added_mb} MB live heap, +${t.rss_added_mb} MB RSS |`,
    `| encode rate (Terminus-like JSON and shell output) | ${count(Math.round(t.encode_tokens_per_s / 1000))}k tokens/s |`,
    `| \`harness replay\` | ${r.replay.rollouts} rollouts, one step |`,
    ...r.replay.qwen3_over_toy.map((ratios) => ratioRow(ratios, r.replay.runs, several)),
  ].join('\n');
}
