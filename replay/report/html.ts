import { plural } from '../../common/plural.ts';
import type { Evidence } from '../checks/evidence-schema.ts';
import { accountingBarHtml, accountingHtml } from './accounting-view.ts';
import type { ReportFrame } from './build-report.ts';
import { fmtNumber, fmtRange, fmtSigned } from './format.ts';
import { escapeHtml, treeSvg } from './html-tree.ts';
import { profileText } from './profile-text.ts';
import { episodeCell, poolFallbackNote, stateCell } from './rollout-text.ts';
import { scheduleText, trainStepCell } from './schedule-text.ts';
import type { ReplayReport, ReportGroup, ReportRollout, ReportStep } from './schema.ts';

/** The reports' stylesheet (the replay page's; the catalogue page adds its own rules after it). */
export const REPORT_STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;padding:24px;background:#fafafa;color:#1d2327}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px}h3{font-size:15px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0;background:#fff}th,td{border:1px solid #dde3e7;padding:3px 8px;text-align:left}
td.num{text-align:right;font-variant-numeric:tabular-nums}th{background:#eef2f5}
.why{font-size:12px;margin-top:4px;max-width:520px}
.verdict{display:inline-block;padding:2px 10px;border-radius:10px;font-weight:600;color:#fff}
.v-pass{background:#2e7d32}.v-fail{background:#c62828}.v-finding{background:#ef6c00}.v-skipped{background:#78909c}
.rollouts{display:grid;grid-template-columns:repeat(auto-fill,minmax(520px,1fr));gap:12px}
.rollout{background:#fff;border:1px solid #dde3e7;border-radius:6px;padding:10px 12px;overflow:hidden}
.rollout.dropped{opacity:.6}.rollout h4{margin:0 0 6px;font-size:14px}.meta{color:#55616b;font-size:12px}
.tree-wrap{overflow-x:auto;margin:6px 0}
.edge{stroke:#607d8b;stroke-width:1.5}.edge.trimmed{stroke:#b0bec5;stroke-dasharray:3 3}
.node{stroke:#37474f;stroke-width:1.5;fill:#fff}.node.kept{fill:#c8e6c9}.node.kept.leaf{fill:#2e7d32}
.node.trimmed{fill:#eceff1;stroke:#90a4ae;stroke-dasharray:2 2}.node.truncated{stroke:#c62828;stroke-width:2.5}
.label{font-size:10px;fill:#37474f}
.sample{margin:4px 0}.sample .caption{font-size:12px;color:#37474f}
.strip{display:flex;height:14px;border:1px solid #cfd8dc;border-radius:2px;overflow:hidden;background:#fff}
.strip span{display:block;min-width:1px}
.k-trained{background:#2e7d32}.k-masked_shared{background:#f9a825}.k-masked_lost{background:#c62828}
.k-masked{background:#9e9e9e}.k-not_generated{background:#cfd8dc}
.legend span{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle}
.pool-fallback{color:#b45309;font-weight:600}
details{margin:4px 0}.error{color:#c62828;font-weight:600}summary{cursor:pointer}
`;

export function verdictBadge(verdict: string): string {
  return `<span class="verdict v-${escapeHtml(verdict)}">${escapeHtml(verdict.toUpperCase())}</span>`;
}

/** The id of the rollout card an evidence item points at (`rolloutCard` uses the same), when it names one. */
function cardId(e: Evidence): string | null {
  return e.step === null || e.group_index === null || e.rollout === null
    ? null
    : `s${e.step}-g${e.group_index}-r${e.rollout}`;
}

/** A link to the evidence's rollout card, or the text alone. */
function toCard(e: Evidence, text: string): string {
  const id = cardId(e);
  return id === null ? escapeHtml(text) : `<a href="#${id}">${escapeHtml(text)}</a>`;
}

function evidenceRow(e: Evidence): string {
  const cells = [e.severity, e.kind, e.step, e.group_index];
  const after = [e.sample, e.leaf_node_id, e.node, fmtRange(e.token_range), e.detail];
  const td = (c: unknown) => `<td>${escapeHtml(c === null ? '' : String(c))}</td>`;
  return `<tr>${cells.map(td).join('')}<td>${e.rollout === null ? '' : toCard(e, String(e.rollout))}</td>${after.map(td).join('')}</tr>`;
}

/**
 * The reason shown beside a verdict without opening anything: the first failure (else finding) of the
 * check, with a link to its rollout card.
 */
function firstReason(evidence: readonly Evidence[]): string {
  const first = evidence.find((e) => e.severity === 'fail') ?? evidence.find((e) => e.severity === 'finding');
  if (first === undefined) return '';
  const where = [
    first.step === null ? '' : `step ${first.step}`,
    first.group_index === null ? '' : `g${first.group_index}`,
    first.rollout === null ? '' : `rollout ${first.rollout}`,
  ]
    .filter(Boolean)
    .join(' ');
  return `<div class="why">${escapeHtml(first.severity.toUpperCase())} ${escapeHtml(first.kind)}${where ? ` (${toCard(first, where)})` : ''}: ${escapeHtml(first.detail)}</div>`;
}

function checksSection(report: ReportFrame): string {
  const rows = report.checks.map((c) => {
    const evidence =
      c.evidence.length === 0
        ? ''
        : `<details><summary>${plural(c.evidence.length, 'evidence item')}</summary><table><tr><th>severity</th><th>kind</th><th>step</th><th>group</th><th>rollout</th><th>sample</th><th>leaf</th><th>node</th><th>tokens</th><th>detail</th></tr>${c.evidence.map(evidenceRow).join('')}</table></details>`;
    return `<tr data-check="${escapeHtml(c.name)}"><td>${escapeHtml(c.name)}</td><td>${verdictBadge(c.verdict)}${firstReason(c.evidence)}</td><td>${escapeHtml(c.title)}</td><td>${escapeHtml(c.mode)}</td><td>${evidence}</td></tr>`;
  });
  const skipped = report.skipped_checks.map(
    (s) =>
      `<tr data-check="${escapeHtml(s.name)}"><td>${escapeHtml(s.name)}</td><td>${verdictBadge('skipped')}</td><td>needs ${escapeHtml(s.missing.join(', '))}</td><td></td><td></td></tr>`,
  );
  return `<h2>Checks</h2><div class="meta" id="miles-profile">every check and finding holds under ${escapeHtml(profileText(report.config.miles_profile))}</div><table id="checks"><tr><th>check</th><th>verdict</th><th>invariant</th><th>mode</th><th>evidence</th></tr>${[...rows, ...skipped].join('')}</table>`;
}

function metricsTable(step: ReportStep): string {
  const rows = Object.entries(step.metrics).flatMap(([k, v]) =>
    v === undefined ? [] : [`<tr><td>${escapeHtml(k)}</td><td class="num">${fmtNumber(v)}</td></tr>`],
  );
  return `<table class="metrics"><tr><th>metric</th><th>value</th></tr>${rows.join('')}</table>`;
}

function grpoTable(step: ReportStep): string {
  const rows = step.groups.flatMap((g) =>
    g.rollouts.map((r, i) => {
      const first = i === 0;
      const groupCells = first
        ? `<td rowspan="${g.rollouts.length}">${g.group_index}${g.dropped ? ` (dropped: ${escapeHtml(g.dropped)})` : ''}</td><td rowspan="${g.rollouts.length}" class="num">${fmtNumber(g.reward_mean)}</td><td rowspan="${g.rollouts.length}" class="num">${fmtNumber(g.reward_std)}</td>`
        : '';
      const perSample = r.samples.map((s) => fmtSigned(s.per_sample_advantage)).join(' ');
      return `<tr>${groupCells}<td class="num"><a href="#s${step.step}-g${g.group_index}-r${r.rollout_key}">${r.rollout_key}</a></td><td class="instance">${escapeHtml(r.instance_id ?? '-')}</td><td class="state">${escapeHtml(stateCell(g, r))}</td><td class="episode">${escapeHtml(episodeCell(r.episode))}</td><td class="num">${r.samples.length}</td><td class="num">${fmtNumber(r.reward)}</td><td class="num">${fmtSigned(r.advantage)}</td><td class="num">${escapeHtml(perSample)}</td><td class="num">${r.trainable_tokens}</td><td class="num">${r.loss_weight ? r.loss_weight.per_token.toExponential(3) : '-'}</td><td class="num">${fmtSigned(r.loss_weight?.total ?? null)}</td><td class="num">${fmtSigned(r.loss_weight?.naive_total ?? null)}</td><td class="num">${trainStepCell(r.loss_weight)}</td></tr>`;
    }),
  );
  const poolNote = poolFallbackNote(step);
  const note = poolNote === null ? '' : `<div class="meta pool-note">${escapeHtml(poolNote)}</div>`;
  return `<table class="grpo"><tr><th>group</th><th>mean</th><th>std</th><th>rollout</th><th>instance</th><th>state</th><th>episode</th><th>samples</th><th>reward</th><th>advantage (per rollout)</th><th>per-sample normalisation would give</th><th>M (trainable)</th><th>weight / token</th><th>rollout weight</th><th>naive weight</th><th>train step</th></tr>${rows.join('')}</table>${note}`;
}

function stripHtml(sample: ReportRollout['samples'][number]): string {
  const spans = sample.strip.map(
    (run) =>
      `<span class="k-${run.kind}" style="flex:${run.end - run.start}" title="${run.kind} [${run.start}, ${run.end})"></span>`,
  );
  return `<div class="strip">${spans.join('')}</div>`;
}

function rolloutCard(step: ReportStep, group: ReportGroup, r: ReportRollout): string {
  const samples = r.samples.map(
    (s, i) =>
      `<div class="sample" data-sample="${i}"><div class="caption">s${i} leaf ${s.leaf_node_id ?? '-'} · ${escapeHtml(s.status)} · ${s.token_count} tokens, response ${s.response_length}, trained ${s.trainable_tokens}, masked shared ${s.masked_shared_tokens}</div>${stripHtml(s)}</div>`,
  );
  const episode =
    r.episode === null
      ? 'episode: - (no /run result)'
      : `episode: ${r.episode.script}, variant ${r.episode.variant}${r.episode.pool_fallback ? ' · pool fallback: no script has this instance_id' : ''}`;
  return `<section class="rollout${group.dropped ? ' dropped' : ''}" data-step="${step.step}" data-group="${group.group_index}" data-rollout-key="${r.rollout_key}" id="s${step.step}-g${group.group_index}-r${r.rollout_key}">
<h4>group ${group.group_index} · rollout ${r.rollout_key}${r.rollout_id === null ? ' (single leaf, id from index)' : ''} · ${escapeHtml(r.instance_id ?? '')}</h4>
<div class="meta">reward ${fmtNumber(r.reward)} · advantage ${fmtSigned(r.advantage)} · ${plural(r.samples.length, 'sample')} · <span class="state">${escapeHtml(stateCell(group, r))}</span></div>
<div class="meta episode${r.episode?.pool_fallback ? ' pool-fallback' : ''}">${escapeHtml(episode)}</div>
<div class="meta">tokens: ${r.accounting.completion_tokens} completion, ${r.accounting.trained_tokens} trained, ${r.accounting.masked_shared_tokens} masked shared, ${r.accounting.completion_tokens - r.accounting.trained_tokens - r.accounting.masked_shared_tokens} lost</div>${accountingBarHtml(r.accounting)}
${r.tree ? `<div class="tree-wrap">${treeSvg(r.tree)}</div>` : '<div class="meta">no tree (collect failed or empty)</div>'}
${samples.join('')}
</section>`;
}

const LEGEND = `<div class="legend">tokens:<span class="k-trained"></span>trained<span class="k-masked_shared"></span>masked (a sibling trains it)<span class="k-masked_lost"></span>masked, trained nowhere<span class="k-not_generated"></span>not generated (prompt, tool output)</div>
<div class="meta">trees: depth left to right; pale green = on a kept leaf's path, filled = kept leaf (→ its sample), dashed grey = trimmed or dropped (trained in no sample), diamond = a later root (the session re-rooted: compaction's questions or post-summary call, or a first-turn retry), red outline = truncated.</div>`;

/** The whole report as one self-contained HTML page (no external resources, no scripts). */
export function renderHtml(report: ReplayReport): string {
  return `${htmlBefore(report)}${report.steps.map(htmlStep).join('\n')}${HTML_AFTER}`;
}

/** One step's section of the page (the page joins the sections with newlines). */
export function htmlStep(step: ReportStep): string {
  return `<h2>Step ${step.step}</h2>
<div class="meta">${plural(step.num_rollouts, 'rollout')} trained · ${(step.duration_ms / 1000).toFixed(2)} s</div>
${step.normalization_error ? `<p class="error">Miles' conversion would raise (${escapeHtml(step.normalization_error.code)}): ${escapeHtml(step.normalization_error.message)}</p>` : ''}
<h3>Metrics</h3>${metricsTable(step)}
<h3>GRPO</h3><p class="schedule">${escapeHtml(scheduleText(step))}</p>${grpoTable(step)}
<h3>Token accounting</h3>${accountingHtml(step.accounting)}
<h3>Rollouts</h3>${LEGEND}
<div class="rollouts">${step.groups.flatMap((g) => g.rollouts.map((r) => rolloutCard(step, g, r))).join('\n')}</div>`;
}

/** The page up to the first step: head, title, verdict and the checks. */
export function htmlBefore(report: ReportFrame): string {
  const c = report.config;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>harness replay report</title><style>${REPORT_STYLE}</style></head>
<body>
<h1>Replay report ${verdictBadge(report.verdict)}</h1>
<div class="meta">${plural(c.steps, 'step')} · ${plural(c.rollout_batch_size, 'prompt')} × ${plural(c.n_samples_per_prompt, 'rollout')} · seed ${c.seed}${c.strict ? ' · --strict (findings fail)' : ''} · max_seq_len ${c.max_seq_len ?? 'none'} · prompts ${escapeHtml(c.prompts)}</div>
${checksSection(report)}
`;
}

/** The page after the last step. */
export const HTML_AFTER = `
</body></html>
`;

/**
 * The head of a partial page: what the HTML report file holds while the run is going, so a run that
 * fails or is interrupted leaves the steps it finished, readable in a browser (no checks yet).
 */
export function htmlPartialHead(c: ReportFrame['config']): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>harness replay report (partial)</title><style>${REPORT_STYLE}</style></head>
<body>
<h1>Replay report: partial</h1>
<div class="meta">the run had not finished when this was written: the steps it finished, no checks · ${plural(c.steps, 'step')} planned · seed ${c.seed} · prompts ${escapeHtml(c.prompts)}</div>
`;
}
