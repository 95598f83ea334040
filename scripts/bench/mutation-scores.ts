/**
 * Issue 35's mutation scores into benchmarks/results/mutation-issue35.json (format harness-mutation/1):
 * Stryker's JSON reports of each module set on each tree (scripts/bench/issue35-mutation.sh writes them as
 * DIR/SET-before.json and DIR/SET-after.json), counted per file. `--machine FILE` instead records the
 * machine and its load average when the runs start (the script does it first).
 *
 *   node scripts/bench/mutation-scores.ts --machine DIR/machine.json
 *   node scripts/bench/mutation-scores.ts --reports DIR --out benchmarks/results/mutation-issue35.json
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { parseScriptFlags, valueFlag } from '../../common/cli-flags.ts';
import { EXIT } from '../../common/exit-codes.ts';
import { machineInfo } from './machine.ts';
import { type MutationResult, MutationResultSchema } from './result-schema.ts';

const SPEC = {
  command: 'mutation-scores',
  invocation: 'node scripts/bench/mutation-scores.ts',
  flags: {
    machine: valueFlag('FILE', z.string().min(1).optional(), 'write the machine and its load average here'),
    reports: valueFlag(
      'DIR',
      z.string().min(1).optional(),
      "Stryker's reports, SET-before.json, SET-after.json",
    ),
    out: valueFlag('FILE', z.string().min(1).optional(), 'write the result here'),
  },
  about: "Count Stryker's mutants per file, before and after, into one result file.",
};

/** The sets, in the order issue35-mutation.sh runs them, and the tests each ran against. */
const SETS = [
  ['session', 'fakes/session/tree.test.ts, fast/*.test.ts, assembly*.test.ts, turn-sample.test.ts'],
  ['key', 'replay/{grpo,metrics,model,checks,differential}/**/*.test.ts'],
  ['harbor', 'fakes/harbor/engine/**/*.test.ts'],
  ['json', 'common/python-json*.test.ts, python-json/*.test.ts, json-elements, native-json-keys'],
] as const;

const StrykerReport = z.object({
  files: z.record(z.string(), z.object({ mutants: z.array(z.object({ status: z.string() })) })),
});

type FileCounts = NonNullable<MutationResult['sets'][number]['before']>[number];

function counts(path: string): FileCounts[] | null {
  if (!existsSync(path)) return null;
  const report = StrykerReport.parse(JSON.parse(readFileSync(path, 'utf8')));
  return Object.entries(report.files)
    .map(([file, { mutants }]) => {
      const n = (status: string) => mutants.filter((m) => m.status === status).length;
      return {
        file,
        killed: n('Killed'),
        survived: n('Survived'),
        timeout: n('Timeout'),
        no_coverage: n('NoCoverage'),
        errors: n('CompileError') + n('RuntimeError'),
      };
    })
    .sort((a, b) => a.file.localeCompare(b.file));
}

async function main(): Promise<number> {
  const values = parseScriptFlags(process.argv.slice(2), SPEC, process);
  if (typeof values === 'number') return values;
  if (values.machine !== undefined) {
    const at = { started_at: new Date().toISOString(), machine: await machineInfo() };
    writeFileSync(values.machine, `${JSON.stringify(at, null, 2)}\n`);
    return EXIT.ok;
  }
  if (values.reports === undefined || values.out === undefined) {
    process.stderr.write('mutation-scores: --reports DIR and --out FILE (or --machine FILE) are required\n');
    return EXIT.usage;
  }
  const dir = values.reports;
  const start = JSON.parse(readFileSync(join(dir, 'machine.json'), 'utf8'));
  const result = MutationResultSchema.parse({
    format: 'harness-mutation/1',
    ...start,
    configuration:
      'Stryker 10.1.1 (`stryker.house.config.mjs` over `stryker.config.mjs`: vitest runner, perTest coverage, ignoreStatic, concurrency 1; tests from `vitest.mutate-house.config.ts`), `scripts/bench/issue35-mutation.sh`',
    trees: { before: 'c776157', after: 'da66681' },
    sets: SETS.map(([name, tests]) => ({
      name,
      tests,
      before: counts(join(dir, `${name}-before.json`)),
      after: counts(join(dir, `${name}-after.json`)),
    })),
  });
  writeFileSync(values.out, `${JSON.stringify(result, null, 2)}\n`);
  return EXIT.ok;
}

process.exitCode = await main();
