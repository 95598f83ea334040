import type { HarnessRowVerdict, MilesRowVerdict } from '../../contracts/fault-scenario.ts';
import { MILES_PROFILES, type MilesProfile, milesProfileLine } from '../../contracts/miles-profile.ts';
import { disagreements } from '../faults/agreement.ts';
import type { CatalogueRow, RowComparison } from '../faults/catalogue.ts';
import { type FaultSite, faultSites, type SiteRule } from '../faults/fault-sites.ts';
import type { RowResult } from '../faults/run-catalogue.ts';
import { REPORT_STYLE, verdictBadge } from './html.ts';
import { escapeHtml } from './html-tree.ts';
import { type TokenDecoder, tokenLine } from './token-window.ts';

/**
 * `harness catalogue --html FILE`: one self-contained page (no scripts, no external resources) with, per
 * row, its upstream references, fault kind, every check's verdict and Miles' own verdict per profile,
 * whether they agree, and the ids around the fault decoded (docs/field-failures.md "The HTML page").
 * A verdict comes from this run where the run played it, else from what the row recorded (marked so).
 */

export interface CataloguePageInput {
  readonly rows: readonly CatalogueRow[];
  readonly results: readonly RowResult[];
  readonly comparisons: readonly RowComparison[];
  /** Why Miles' own code did not run in this invocation (null: it ran, on `milesProfile`'s checkout). */
  readonly milesNotRun: string | null;
  readonly decoder: TokenDecoder;
}

const CATALOGUE_STYLE = `
.row{background:#fff;border:1px solid #dde3e7;border-radius:6px;padding:10px 14px;margin:14px 0}
.row h2{margin:0 0 4px}.kind{font:12px monospace;background:#eef2f5;padding:1px 6px;border-radius:4px}
.checks{display:flex;flex-wrap:wrap;gap:3px 10px;max-width:640px}.check{font-size:12px;white-space:nowrap}
.check .verdict{padding:0 6px;font-size:11px}.source{font-size:11px;color:#55616b;display:block}
.harness .verdict{white-space:nowrap}.o-caught{background:#ef6c00}.o-not_caught{background:#78909c}.o-none{background:#b0bec5}
.a-yes{color:#2e7d32;font-weight:600}.a-no{color:#c62828;font-weight:600}.a-unknown{color:#78909c}
.site{margin:8px 0}.site .caption{font-size:12px;color:#37474f}
.line{display:flex;align-items:baseline;gap:6px;margin:2px 0}.line .label{width:72px;font-size:12px;color:#55616b}
.ids{display:flex;flex-wrap:wrap;gap:2px;font:12px/1.6 ui-monospace,monospace}
.tok{border:1px solid #cfd8dc;border-radius:3px;padding:0 3px;white-space:pre;background:#fff}
.tok.added{background:#e3f2fd;border-color:#64b5f6;font-weight:600}.tok.special{background:#bbdefb;border-color:#1565c0}
.tok.fault{background:#ffcdd2;border-color:#c62828;box-shadow:0 0 0 1px #c62828}
.ws{color:#90a4ae;font-weight:400}.caret{color:#c62828;font-weight:700}.more,.elided{color:#78909c;font-size:11px;padding:0 4px}
.no-window{color:#55616b;font-style:italic}
`;

type Sourced<T> = { readonly value: T; readonly source: 'this run' | 'recorded' } | null;

function harnessFor(
  row: CatalogueRow,
  result: RowResult | undefined,
  profile: string,
): Sourced<HarnessRowVerdict> {
  if (result !== undefined) return { value: result.harness, source: 'this run' };
  const recorded = row.scenario.recorded?.harness[profile];
  return recorded === undefined ? null : { value: recorded, source: 'recorded' };
}

function milesFor(
  row: CatalogueRow,
  result: RowResult | undefined,
  profile: string,
): Sourced<MilesRowVerdict> {
  if (result?.miles != null) return { value: result.miles, source: 'this run' };
  const recorded = row.scenario.recorded?.miles[profile];
  return recorded === undefined ? null : { value: recorded, source: 'recorded' };
}

const source = (s: NonNullable<Sourced<unknown>>, note = '') =>
  `<span class="source">${s.source}${note}</span>`;

/** How this run's harness verdicts compare with the row's record under the profile. */
function recordNote(comparison: RowComparison | undefined): string {
  if (comparison === undefined) return '';
  return { same: ', as recorded', differs: ', differs from its record', unrecorded: ', nothing recorded' }[
    comparison.harness
  ];
}

function checksCell(h: HarnessRowVerdict): string {
  const checks = Object.entries(h.checks).map(
    ([name, v]) =>
      `<span class="check" data-check="${escapeHtml(name)}" data-verdict="${escapeHtml(v)}">${escapeHtml(name)} ${verdictBadge(v)}</span>`,
  );
  return `<div class="checks">${checks.join('')}</div>`;
}

function milesText(m: MilesRowVerdict): string {
  const turns = m.turn_statuses.map((t) => t.join('/')).join(' ');
  const samples = m.sample_statuses.map((s) => (s.length === 0 ? '∅' : s.join('/'))).join(' ');
  const mismatch = m.mismatch_types.length === 0 ? 'none' : m.mismatch_types.join(', ');
  const rewards = 'raised' in m.rewards ? `raised ${m.rewards.raised}` : 'ok';
  const passrate = Object.entries(m.passrate).map(([k, v]) => `${k} ${v}`);
  const left = m.passrate_excluded_groups > 0 ? ` (${m.passrate_excluded_groups} group left out)` : '';
  return `turns ${turns} · samples ${samples} · mismatch ${mismatch} · rewards ${rewards} · pass@k ${passrate.length === 0 ? '{}' : passrate.join(', ')}${left} · fake ${m.fake_agrees ? 'answered as Miles' : 'differs'}`;
}

function agreeCell(h: Sourced<HarnessRowVerdict>, m: Sourced<MilesRowVerdict>): string {
  if (h === null || m === null)
    return '<td class="agree" data-agree="unknown"><span class="a-unknown">—</span></td>';
  const differ = disagreements(h.value, m.value);
  return differ.length === 0
    ? '<td class="agree" data-agree="yes"><span class="a-yes">yes</span></td>'
    : `<td class="agree" data-agree="no"><span class="a-no">no</span>: ${escapeHtml(differ.join('; '))}</td>`;
}

function profileRow(row: CatalogueRow, profile: MilesProfile, input: CataloguePageInput): string {
  const result = input.results.find((r) => r.id === row.scenario.id && r.profile === profile.name);
  const h = harnessFor(row, result, profile.name);
  const m = milesFor(row, result, profile.name);
  const comparison = input.comparisons.find((c) => c.id === row.scenario.id && c.profile === profile.name);
  const outcome = h?.value.outcome ?? 'none';
  const harness =
    h === null
      ? '<td class="harness" data-outcome="none">not played in this run, nothing recorded</td><td></td>'
      : `<td class="harness" data-outcome="${outcome}"><span class="verdict o-${outcome}">${escapeHtml(outcome.replace('_', ' '))}</span>${source(h, recordNote(comparison))}</td><td>${checksCell(h.value)}</td>`;
  const why = input.milesNotRun ?? `the checkout plays its own profile, not ${profile.name}`;
  const miles =
    m === null
      ? `<td class="miles" data-miles="not_run">not run: ${escapeHtml(why)}; nothing recorded under ${escapeHtml(profile.name)}</td>`
      : `<td class="miles" data-miles="${m.source === 'this run' ? 'run' : 'recorded'}">${escapeHtml(milesText(m.value))}${source(m)}</td>`;
  return `<tr data-profile="${escapeHtml(profile.name)}"><td title="${escapeHtml(milesProfileLine(profile))}">${escapeHtml(profile.name)}</td>${harness}${miles}${agreeCell(h, m)}</tr>`;
}

const RULES: Readonly<Record<SiteRule, { text: string; actual: string; expected: string }>> = {
  emitted_vs_render: {
    text: 'the ids the policy emitted against the render of the message the agent got back',
    actual: 'emitted',
    expected: 'render',
  },
  not_an_extension: {
    text: "the request's prompt does not extend the tokens of the turn before it",
    actual: 'request',
    expected: 'before',
  },
  concurrent_diverge: {
    text: 'two requests sent at the same moment part here',
    actual: 'this one',
    expected: 'the other',
  },
  template_newline: {
    text: 'the template writes a \\n after <|im_end|> the model never emitted (assistant → tool)',
    actual: 'request',
    expected: 'emitted',
  },
  rerendered_think: {
    text: "the previous reply's think block, re-rendered in the request",
    actual: 'request',
    expected: 'emitted',
  },
};

function siteHtml(site: FaultSite, decoder: TokenDecoder): string {
  const rule = RULES[site.rule];
  const [a0, a1] = site.actualSpan;
  const caption = `rollout ${site.rollout} · turn ${site.turn} · ${rule.text} · in the ${site.where === 'sample' ? "turn's sample" : 'request'} at id ${a0} of ${site.actual.length}`;
  return `<div class="site" data-rollout="${site.rollout}" data-turn="${site.turn}" data-rule="${site.rule}" data-start="${a0}" data-end="${a1}">
<div class="caption">${escapeHtml(caption)}</div>
<div class="line actual"><span class="label">${rule.actual}</span>${tokenLine(decoder, site.actual, a0, a1)}</div>
<div class="line expected"><span class="label">${rule.expected}</span>${tokenLine(decoder, site.expected, site.expectedSpan[0], site.expectedSpan[1])}</div>
</div>`;
}

function rowSection(row: CatalogueRow, index: number, input: CataloguePageInput): string {
  const s = row.scenario;
  const upstream = s.upstream
    .map((u) => `<a href="${escapeHtml(u.url)}">${escapeHtml(u.ref)}</a>`)
    .join(', ');
  const { sites, none } = faultSites(s);
  const window =
    none !== null
      ? `<p class="no-window">no ids to show: ${escapeHtml(none)}</p>`
      : sites.map((site) => siteHtml(site, input.decoder)).join('\n');
  return `<section class="row" id="row-${escapeHtml(s.id)}" data-row="${escapeHtml(s.id)}" data-kind="${escapeHtml(s.kind)}">
<h2>${index + 1}. ${escapeHtml(s.id)} <span class="kind">${escapeHtml(s.kind)}</span></h2>
<div class="meta">${escapeHtml(s.title)} · upstream: ${upstream}</div>
<p class="fault">${escapeHtml(s.fault)}</p>
<table class="verdicts"><tr><th>Miles profile</th><th>harness</th><th>checks</th><th>Miles' own code</th><th>agree</th></tr>
${MILES_PROFILES.map((p) => profileRow(row, p, input)).join('\n')}</table>
${s.not_caught_why === undefined ? '' : `<div class="why not-caught">not caught: ${escapeHtml(s.not_caught_why)}</div>`}
<h3>Ids around the fault</h3>
${window}
</section>`;
}

/** The whole catalogue page. */
export function renderCatalogueHtml(input: CataloguePageInput): string {
  const played = [...new Set(input.results.map((r) => r.profile))];
  const miles =
    input.milesNotRun === null
      ? "Miles' own code run on the checkout"
      : `Miles' own code not run: ${input.milesNotRun}`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>harness catalogue</title><style>${REPORT_STYLE}${CATALOGUE_STYLE}</style></head>
<body>
<h1>Field-failure catalogue</h1>
<div class="meta">${input.rows.length} rows · played under ${escapeHtml(played.join(', '))} · ${escapeHtml(miles)} · ids: Qwen3, each decoded alone; <span class="ws">¶</span> newline, <span class="ws">·</span> space, <span class="ws">»</span> tab, <span class="ws">¤</span> carriage return; <span class="tok added">added token</span> <span class="tok added special">special token</span> <span class="tok fault">fault</span></div>
${input.rows.map((row, k) => rowSection(row, k, input)).join('\n')}
</body></html>
`;
}
