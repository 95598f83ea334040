import { plural } from '../../common/plural.ts';
import type { Evidence } from '../checks/evidence-schema.ts';
import { accountingTable } from './accounting-view.ts';
import type { ReportFrame } from './build-report.ts';
import { fmtNumber, fmtRange, fmtSigned } from './format.ts';
import { profileText } from './profile-text.ts';
import { episodeCell, poolFallbackNote, stateCell } from './rollout-text.ts';
import { scheduleText, trainStepCell } from './schedule-text.ts';
import type { ReplayReport, ReportStep } from './schema.ts';
import { renderTable } from './table.ts';

/** How many findings/failures per check the summary lists before "… N more". */
const EVIDENCE_LINES_PER_CHECK = 8;

function locator(e: Evidence): string {
  const parts: string[] = [];
  if (e.step !== null) parts.push(`step ${e.step}`);
  if (e.group_index !== null) parts.push(`g${e.group_index}`);
  if (e.rollout !== null) parts.push(`rollout ${e.rollout}`);
  if (e.sample !== null) parts.push(`sample ${e.sample}`);
  if (e.leaf_node_id !== null) parts.push(`leaf ${e.leaf_node_id}`);
  if (e.node !== null) parts.push(`node ${e.node}`);
  if (e.token_range !== null) parts.push(`tokens ${fmtRange(e.token_range)}`);
  return parts.join(' ');
}

function countsText(counts: { fail: number; finding: number; info: number }): string {
  const parts: string[] = [];
  if (counts.fail > 0) parts.push(`${counts.fail} failed`);
  if (counts.finding > 0) parts.push(plural(counts.finding, 'finding'));
  if (counts.info > 0) parts.push(plural(counts.info, 'note'));
  return parts.join(', ');
}

/**
 * The terminal summary: per step the metrics and a row per rollout (samples, trained and masked
 * tokens, reward, advantage), then every check's verdict and its failures and findings.
 */
export function renderSummary(report: ReplayReport): string {
  return [summaryHead(report.config), ...report.steps.map(summaryStep), ...summaryTailLines(report)].join(
    '\n',
  );
}

/** The summary's first lines: the run's shape, then the Miles it ran as. */
export function summaryHead(c: ReportFrame['config']): string {
  return `replay: ${plural(c.steps, 'step')} x ${plural(c.rollout_batch_size, 'prompt')} x ${plural(c.n_samples_per_prompt, 'sample')} per prompt, seed ${c.seed}\n${profileText(c.miles_profile)}`;
}

/** One step's part of the summary (lines joined; the summary joins the parts with newlines). */
export function summaryStep(step: ReportStep): string {
  const out: string[] = [];
  out.push(
    '',
    `step ${step.step}: ${plural(step.num_rollouts, 'rollout')} trained, ${(step.duration_ms / 1000).toFixed(2)} s`,
  );
  if (step.normalization_error)
    out.push(
      `  Miles' conversion would raise (${step.normalization_error.code}): ${step.normalization_error.message}`,
    );
  out.push(
    renderTable(
      ['metric', 'value'],
      Object.entries(step.metrics).flatMap(([k, v]) => (v === undefined ? [] : [[k, fmtNumber(v)]])),
      ['left', 'right'],
    ),
    `  ${scheduleText(step)}`,
  );
  const rows = step.groups.flatMap((g) =>
    g.rollouts.map((r) => [
      String(g.group_index),
      String(r.rollout_key),
      r.instance_id ?? '-',
      String(r.samples.length),
      String(r.trainable_tokens),
      String(r.masked_shared_tokens),
      fmtNumber(r.reward),
      fmtSigned(r.advantage),
      trainStepCell(r.loss_weight),
      stateCell(g, r),
      episodeCell(r.episode),
    ]),
  );
  out.push(
    '',
    renderTable(
      [
        'group',
        'rollout',
        'instance',
        'samples',
        'trained',
        'masked',
        'reward',
        'advantage',
        'train step',
        'status',
        'episode',
      ],
      rows,
      ['right', 'right', 'left', 'right', 'right', 'right', 'right', 'right', 'right', 'left', 'left'],
    ),
  );
  const note = poolFallbackNote(step);
  if (note !== null) out.push(`  ${note}`);
  out.push('', accountingTable(step.accounting));
  return out.join('\n');
}

/** The summary after the steps: the checks, their evidence and the verdict. */
export function summaryTailLines(report: ReportFrame): string[] {
  const out: string[] = [];
  out.push('', `checks (they hold under Miles profile ${report.config.miles_profile.name}):`);
  out.push(
    renderTable(
      ['check', 'verdict', 'mode', 'evidence'],
      [
        ...report.checks.map((r) => [r.name, r.verdict.toUpperCase(), r.mode, countsText(r.counts)]),
        ...report.skipped_checks.map((s) => [s.name, 'SKIPPED', '-', `needs ${s.missing.join(', ')}`]),
      ],
    ),
  );
  for (const check of report.checks) {
    const notable = check.evidence.filter((e) => e.severity !== 'info');
    if (notable.length === 0) continue;
    out.push('', `${check.name}:`);
    for (const e of notable.slice(0, EVIDENCE_LINES_PER_CHECK))
      out.push(`  ${e.severity.toUpperCase()} ${e.kind} (${locator(e)}): ${e.detail}`);
    if (notable.length > EVIDENCE_LINES_PER_CHECK)
      out.push(`  ... ${notable.length - EVIDENCE_LINES_PER_CHECK} more (see --json)`);
  }
  const strictNote =
    report.checks_verdict === 'finding'
      ? report.config.strict
        ? ' (--strict: findings fail)'
        : ' (findings only; --strict fails them)'
      : '';
  out.push('', `verdict: ${report.verdict.toUpperCase()}${strictNote}`, '');
  return out;
}
