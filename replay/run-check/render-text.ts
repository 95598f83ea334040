import { renderTable } from '../../common/text-table.ts';
import type { CheckRunReport } from './report-schema.ts';

const num = (n: number | null | undefined): string => (n === null || n === undefined ? '-' : String(n));

/** `check-run`'s terminal report: a table of steps, the checks with their verdicts, then every problem. */
export function renderCheckRunText(report: CheckRunReport): string {
  const lines: string[] = [
    `check-run ${report.dir}${report.log ? ` (log ${report.log})` : ''}`,
    `dump format: ${report.dump_format}; Miles profile ${report.miles_profile.name} (${report.miles_profile.commits.join(', ')}); layout: ${report.layout.join(' ')}`,
  ];
  if (report.shape) {
    const s = report.shape;
    lines.push(
      `shape: ${s.rollout_batch_size} prompts x ${s.n_samples_per_prompt} samples, global batch ${s.global_batch_size}, dp ${s.dp_size}${s.inferred.length > 0 ? ` (read off the dumps: ${s.inferred.join(', ')})` : ''}`,
    );
  }
  lines.push(
    '',
    renderTable(
      [
        'step',
        'samples',
        'rollouts',
        'ranks',
        'trained',
        'shared',
        'grpo cmp/bad',
        'metrics cmp/bad',
        'lost br.',
      ],
      report.steps.map((s) => [
        String(s.step),
        String(s.samples),
        String(s.rollouts),
        s.train_ranks.join(',') || '-',
        String(s.accounting.trained_tokens),
        String(s.accounting.masked_shared_tokens),
        s.grpo ? `${s.grpo.values_compared}/${s.grpo.mismatch_count}` : '-',
        s.metrics ? `${s.metrics.compared}/${s.metrics.mismatches.length}` : '-',
        String(s.lost_branches.length),
      ]),
      { align: ['right', 'right', 'right', 'left', 'right', 'right', 'right', 'right', 'right'], rule: true },
    ),
    '',
    renderTable(
      ['check', 'verdict', 'summary'],
      report.checks.map((c) => ({
        cells: [c.name, c.verdict, c.summary],
        details:
          c.verdict === 'pass'
            ? []
            : c.evidence
                .slice(0, 5)
                .map((e) => `${e.step === undefined ? '' : `step ${e.step}: `}${e.detail}`),
      })),
      { rule: true },
    ),
  );
  if (report.problems.length > 0) {
    lines.push('', `${report.problems.length} problem(s) in the input (the rest was checked):`);
    for (const p of report.problems)
      lines.push(`  ${p.kind}: ${p.step === null ? '' : `step ${p.step}, `}${p.file ?? ''}: ${p.detail}`);
  }
  const t = report.totals;
  lines.push(
    '',
    `${t.steps} steps, ${t.samples} samples; GRPO: ${t.grpo_values_compared} values compared, ${t.grpo_mismatches} differ; metrics: ${num(t.metrics_compared)} compared, ${t.metric_mismatches} differ; ${t.lost_branches} lost branches`,
    `verdict: ${report.verdict}`,
  );
  return `${lines.join('\n')}\n`;
}
