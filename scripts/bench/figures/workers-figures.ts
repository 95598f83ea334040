import type { WorkersResult } from '../result-schema.ts';
import { machineLine, mb, met, seconds, times } from './format.ts';

/**
 * docs/performance.md "32 session-server workers against one" (issue 33): the pairs of
 * benchmarks/results/workers.json and the medians against the target (≤ 1.2× wall, ≤ +200 MB peak RSS).
 */

const WALL_TARGET = 1.2;
const RSS_TARGET_MB = 200;

export function workersFigures(r: WorkersResult): string {
  const pairs = Array.from(
    { length: r.runs.length / 2 },
    (_, i) => [r.runs[2 * i]!, r.runs[2 * i + 1]!] as const,
  );
  const step = (run: WorkersResult['runs'][number]) => run.step_ms[0] ?? Number.NaN;
  const rows = pairs.map(
    ([one, many], i) =>
      `| ${i + 1} | ${seconds(step(one))} / ${mb(one.peak_rss_mb)} | ${seconds(step(many))} / ${mb(many.peak_rss_mb)} | ${times(r.step_ratio_per_pair[i] ?? Number.NaN)} | +${mb(many.peak_rss_mb - one.peak_rss_mb)} |`,
  );
  const m = r.many_over_one;
  const ok = m.wall <= WALL_TARGET && m.peak_rss_added_mb <= RSS_TARGET_MB;
  return [
    `\`npm run -s bench:workers -- --pairs ${pairs.length} --out benchmarks/results/workers.json\`: ${machineLine(r.machine, r.started_at)}. The recipe's step (${r.runs[0]?.rollouts[0] ?? '?'} compacting rollouts, generated episodes, seed ${r.seed}) in a fresh process per run, 1 and ${r.workers} workers alternated.`,
    '',
    `| pair | 1 worker: step / peak RSS | ${r.workers} workers: step / peak RSS | step ratio | RSS added |`,
    '| --- | --- | --- | --- | --- |',
    ...rows,
    '',
    `Median over pairs: wall ${times(m.wall)}, step ${times(m.step)}, peak RSS +${mb(m.peak_rss_added_mb)} (target ≤ ${WALL_TARGET}× wall, ≤ +${RSS_TARGET_MB} MB): ${met(ok)}.`,
  ].join('\n');
}
