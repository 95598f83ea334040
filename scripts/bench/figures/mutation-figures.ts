import type { MutationResult } from '../result-schema.ts';
import { machineLine } from './format.ts';

/**
 * docs/testing.md "Issue 35: before and after": Stryker's counts per module set and file, each tree, from
 * benchmarks/results/mutation-issue35.json. The score is Stryker's: (killed + timeout) over every mutant
 * that ran or had no test (errors left out).
 */

type Counts = NonNullable<MutationResult['sets'][number]['before']>[number];

function sum(files: readonly Counts[]): Omit<Counts, 'file'> {
  const total = { killed: 0, survived: 0, timeout: 0, no_coverage: 0, errors: 0 };
  for (const f of files) for (const key of Object.keys(total) as (keyof typeof total)[]) total[key] += f[key];
  return total;
}

function score(c: Omit<Counts, 'file'>): string {
  const detected = c.killed + c.timeout;
  const all = detected + c.survived + c.no_coverage;
  return all === 0 ? '—' : `${((100 * detected) / all).toFixed(2)} %`;
}

const cells = (c: Omit<Counts, 'file'>) =>
  `${c.killed + c.timeout + c.survived + c.no_coverage} | ${c.killed} | ${c.survived} | ${c.timeout} | ${c.no_coverage} | ${score(c)}`;

const bold = (row: string) => `**${row.split(' | ').join('** | **')}**`;

function rows(set: MutationResult['sets'][number], tree: 'before' | 'after'): string[] {
  const files = set[tree];
  if (files === null) return [`| ${set.name} | ${tree} | not run | | | | | |`];
  return [
    `| **${set.name}** | **${tree}** | ${bold(cells(sum(files)))} |`,
    ...files.map((f) => `| | \`${f.file}\` | ${cells(f)} |`),
  ];
}

export function mutationFigures(r: MutationResult): string {
  // Totals over the sets run on both trees only, so before and after count the same modules.
  const both = r.sets.filter((s) => s.before !== null && s.after !== null);
  const all = (tree: 'before' | 'after') => sum(both.flatMap((s) => s[tree] ?? []));
  const names = both.map((s) => s.name).join(', ') || 'none';
  return [
    `${r.configuration}; before = \`${r.trees.before}\`, after = \`${r.trees.after}\`: ${machineLine(r.machine, r.started_at)}.`,
    '',
    '| set | tree / file | mutants | killed | survived | timeout | no coverage | score |',
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
    ...r.sets.flatMap((set) => [...rows(set, 'before'), ...rows(set, 'after')]),
    `| **sets run on both trees (${names})** | **before** | ${bold(cells(all('before')))} |`,
    `| **sets run on both trees (${names})** | **after** | ${bold(cells(all('after')))} |`,
    '',
    `Tests per set (\`--testFiles\`): ${r.sets.map((s) => `${s.name}: \`${s.tests}\``).join('; ')}.`,
  ].join('\n');
}
