import type { CheckRunBenchResult } from '../check-run-result.ts';
import { count, machineLine, mb, met } from './format.ts';

/**
 * docs/check-run.md "Scale" (issue 36): benchmarks/results/check-run.json against the targets, ≤ 2 s a
 * step (wall, median) and ≤ 1 GB peak RSS for the Node process and the converter together.
 */

const STEP_TARGET_S = 2;
const RSS_TARGET_MB = 1024;

const s = (v: number | null) => (v === null ? 'not measured' : `${v.toFixed(2)} s`);

export function checkRunFigures(r: CheckRunBenchResult): string {
  const load = (l: readonly number[]) => l.map((v) => v.toFixed(2)).join(' / ');
  const median = r.step_wall_s.median;
  const ok = median !== null && median <= STEP_TARGET_S && r.peak_rss_mb_sum <= RSS_TARGET_MB;
  return [
    `\`MILES_ROOT=… npm run -s bench:check-run\`: ${machineLine(r.machine, r.started_at)}; load average (1, 5, 15 min) ${load(r.load_average.before)} before and ${load(r.load_average.after)} after. ${r.dumps.steps} steps, ${count(r.dumps.samples)} samples${r.dumps.tokens_per_step === null ? '' : `, ${count(r.dumps.tokens_per_step)} tokens a step`}; exit ${r.exit_code} (verdict \`${r.verdict}\`).`,
    '',
    '| process | CPU s | CPU s a step | peak RSS |',
    '| --- | --- | --- | --- |',
    `| node (check-run) | ${r.node.cpu_s.toFixed(1)} | ${r.node.cpu_s_per_step.toFixed(2)} | ${mb(r.node.peak_rss_mb)} |`,
    `| python (converter) | ${r.converter.cpu_s.toFixed(1)} | ${r.converter.cpu_s_per_step.toFixed(2)} | ${mb(r.converter.peak_rss_mb)} |`,
    `| both | ${r.cpu_s.toFixed(1)} | ${r.cpu_s_per_step.toFixed(2)} | ${mb(r.peak_rss_mb_sum)} |`,
    '',
    `Wall ${r.wall_s.toFixed(1)} s; a step: median ${s(median)}, max ${s(r.step_wall_s.max)}. Targets ≤ ${STEP_TARGET_S} s a step (median) and ≤ 1 GB for both processes: ${met(ok)}.`,
  ].join('\n');
}
