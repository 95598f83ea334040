import type { TokenizerResult } from '../result-schema.ts';
import { count, machineLine, mb, seconds, times } from './format.ts';

/** docs/tokenizers.md "Measured": benchmarks/results/tokenizer.json (`npm run bench:tokenizer`). */

export function tokenizerFigures(r: TokenizerResult): string {
  const t = r.tokenizer;
  const runs = r.replay.runs;
  const of = (name: 'toy' | 'qwen3') => runs.filter((x) => x.tokenizer === name);
  const range = (xs: readonly number[], unit: (v: number) => string) =>
    xs.length === 0 ? '—' : xs.map(unit).join(', ');
  const q = r.replay.qwen3_over_toy;
  return [
    `\`npm run -s bench:tokenizer -- --pairs ${runs.length / 2} --out benchmarks/results/tokenizer.json\`: ${machineLine(r.machine, r.started_at)}.`,
    '',
    '| what | figure |',
    '| --- | --- |',
    `| Qwen3 tokenizer load, fresh process (read, sha256, parse, build; median of 3) | ${seconds(t.load_ms)} |`,
    `| heap / RSS it adds | +${t.heap_added_mb} MB live heap, +${t.rss_added_mb} MB RSS |`,
    `| encode rate (Terminus-like JSON and shell output) | ${count(Math.round(t.encode_tokens_per_s / 1000))}k tokens/s |`,
    `| \`harness replay\` ${r.replay.rollouts} rollouts, step time, toy / qwen3 runs | ${range(
      of('toy').map((x) => x.step_ms),
      seconds,
    )} / ${range(
      of('qwen3').map((x) => x.step_ms),
      seconds,
    )} |`,
    `| qwen3 over toy, per alternated pair (step) | ${r.replay.step_ratio_per_pair.map(times).join(', ')} |`,
    `| qwen3 over toy, median of the pairs | step ${times(q.step)}, wall ${times(q.wall)}, peak RSS ${times(q.peak_rss)} |`,
    `| peak RSS of the replay, toy / qwen3 runs | ${range(
      of('toy').map((x) => x.peak_rss_mb),
      mb,
    )} / ${range(
      of('qwen3').map((x) => x.peak_rss_mb),
      mb,
    )} |`,
  ].join('\n');
}
