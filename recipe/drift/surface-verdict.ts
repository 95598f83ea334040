import { parseJson } from '../../common/python-json/loads.ts';
import { redactSecrets } from '../../common/redact.ts';
import { renderTable } from '../../common/text-table.ts';
import { scanArgv } from './argv-scan.ts';
import { checkArgv } from './check-argv.ts';
import type { FlagIndex } from './flag-index.ts';
import type { Invocation } from './invocation.ts';
import { type Problem, SURFACE_VERDICT_FORMAT, type SurfaceVerdict, WARNING_RULES } from './problem.ts';
import { jsonStringForms } from './secret-values.ts';

/** Checks an invocation and packages the result as the machine verdict of `harness surface check`. */
export function surfaceVerdict(
  invocation: Invocation,
  index: FlagIndex,
  surfacePath: string,
): SurfaceVerdict {
  const found = checkArgv(invocation.argv, index, { env: invocation.env });
  const problems = found.filter((p) => !WARNING_RULES.includes(p.rule));
  const warnings = found.filter((p) => WARNING_RULES.includes(p.rule));
  return {
    format: SURFACE_VERDICT_FORMAT,
    ok: problems.length === 0,
    surface: { path: surfacePath, miles_commit: index.surface.sources.miles.commit },
    overlays: [...index.overlays],
    argv: [...invocation.argv],
    flags_checked: scanArgv(invocation.argv, (n) => index.byName.has(n)).options.length,
    problems,
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
  const head = `surface check: ${flags} against Miles ${verdict.surface.miles_commit.slice(0, 8)} (overlays: ${overlays})`;
  const warned = verdict.warnings.length;
  const warnings =
    warned === 0 ? '' : `\n${warned} warning${warned === 1 ? '' : 's'}\n\n${table(verdict.warnings)}\n`;
  if (verdict.ok) return `${head}\nok: no problems\n${warnings}`;
  const count = verdict.problems.length;
  return `${head}\n${count} problem${count === 1 ? '' : 's'}\n\n${table(verdict.problems)}\n${warnings}`;
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
