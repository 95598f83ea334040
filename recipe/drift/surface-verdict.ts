import { parseJson } from '../../common/python-json/loads.ts';
import { redactSecrets } from '../../common/redact.ts';
import { renderTable } from '../../common/text-table.ts';
import { scanArgv } from './argv-scan.ts';
import { checkArgv } from './check-argv.ts';
import type { FlagIndex } from './flag-index.ts';
import type { Invocation } from './invocation.ts';
import { changedDefaults, type NewerMiles } from './newer-surface.ts';
import { type Problem, SURFACE_VERDICT_FORMAT, type SurfaceVerdict, WARNING_RULES } from './problem.ts';
import { jsonStringForms } from './secret-values.ts';
import type { Surface } from './surface-schema.ts';

/** The newer Miles a check runs against: its record and 31f1ca96's surface it builds on. */
export interface NewerCheck {
  readonly miles: NewerMiles;
  readonly base: Surface;
}

/** An unknown flag the newer Miles renamed becomes a `renamed` problem naming the new flag. */
function markRenamed(problem: Problem, newer: NewerCheck | undefined): Problem {
  const renamed = newer?.miles.renamed.find((r) => r.flag === problem.flag);
  if (problem.rule !== 'unknown-flag' || renamed === undefined) return problem;
  const { suggestions: _unused, ...rest } = problem;
  return {
    ...rest,
    rule: 'renamed',
    message: `${problem.flag} is not an option of train.py in the newer Miles: it is ${renamed.now} there`,
    hint: renamed.evidence,
  };
}

/** Checks an invocation and packages the result as the machine verdict of `harness surface check`. */
export function surfaceVerdict(
  invocation: Invocation,
  index: FlagIndex,
  surfacePath: string,
  newer?: NewerCheck,
): SurfaceVerdict {
  const found = checkArgv(invocation.argv, index, { env: invocation.env }).map((p) => markRenamed(p, newer));
  const scanned = scanArgv(invocation.argv, (n) => index.byName.has(n)).options;
  const commit = index.surface.sources.miles.commit;
  const evidence = newer?.miles.overlay.evidence.split('@')[1] ?? '';
  const problems = found.filter((p) => !WARNING_RULES.includes(p.rule));
  const warnings = found.filter((p) => WARNING_RULES.includes(p.rule));
  return {
    format: SURFACE_VERDICT_FORMAT,
    ok: problems.length === 0,
    surface: {
      path: surfacePath,
      miles_commit: commit,
      miles: newer === undefined ? commit.slice(0, 8) : newer.miles.name,
      ...(newer === undefined ? {} : { newer_source: `${newer.miles.overlay.repo}@${evidence}` }),
    },
    overlays: [...index.overlays],
    argv: [...invocation.argv],
    flags_checked: scanned.length,
    problems,
    ...(newer === undefined
      ? {}
      : {
          defaults_changed: changedDefaults(newer.base, newer.miles, new Set(scanned.map((o) => o.name))),
        }),
    warnings,
  };
}

/** The verdict with every secret replaced by `***` (argv values and messages alike). */
export function redactVerdict(verdict: SurfaceVerdict, secrets: readonly string[]): SurfaceVerdict {
  if (secrets.length === 0) return verdict;
  return parseJson(redactSecrets(JSON.stringify(verdict), jsonStringForms(secrets))) as SurfaceVerdict;
}

/** `file:line` of a `where`, the part a reader needs in a table; `--json` keeps the whole text. */
function definedAt(where: string | null): string {
  return where === null ? '-' : (where.split(' ')[0] ?? where);
}

/** The readable report: one summary line, then a table of problems with message and hint under each. */
export function renderVerdict(verdict: SurfaceVerdict): string {
  const overlays = verdict.overlays.length > 0 ? verdict.overlays.join(', ') : 'none';
  const flags = `${verdict.flags_checked} flag${verdict.flags_checked === 1 ? '' : 's'}`;
  const against =
    verdict.surface.newer_source === undefined
      ? `Miles ${verdict.surface.miles_commit.slice(0, 8)}`
      : `the newer Miles (${verdict.surface.newer_source.slice(0, verdict.surface.newer_source.indexOf('@') + 9)} session arguments over ${verdict.surface.miles_commit.slice(0, 8)})`;
  const head = `surface check: ${flags} against ${against} (overlays: ${overlays})`;
  const changed = (verdict.defaults_changed ?? []).map(
    (d) => `  ${d.flag}: ${JSON.stringify(d.was)} -> ${JSON.stringify(d.now)}`,
  );
  const defaults = changed.length === 0 ? '' : `\nunset here, with a newer default:\n${changed.join('\n')}\n`;
  const warned = verdict.warnings.length;
  const warnings =
    warned === 0 ? '' : `\n${warned} warning${warned === 1 ? '' : 's'}\n\n${table(verdict.warnings)}\n`;
  if (verdict.ok) return `${head}\nok: no problems\n${warnings}${defaults}`;
  const count = verdict.problems.length;
  return `${head}\n${count} problem${count === 1 ? '' : 's'}\n\n${table(verdict.problems)}\n${warnings}${defaults}`;
}

function table(problems: readonly Problem[]): string {
  const rows = problems.map((p) => ({
    cells: [String(p.index), p.rule, p.flag, definedAt(p.where)],
    details: [
      p.message,
      ...(p.suggestions ? [`did you mean: ${p.suggestions.join(', ')}`] : []),
      ...(p.hint ? [`hint: ${p.hint}`] : []),
    ],
  }));
  return renderTable(['TOKEN', 'RULE', 'FLAG', 'DEFINED AT'], rows);
}
