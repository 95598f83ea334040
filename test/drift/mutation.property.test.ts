import { execFileSync, spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { beforeAll, describe, expect, test } from 'vitest';
import { scanArgv } from '../../recipe/drift/argv-scan.ts';
import { checkArgv } from '../../recipe/drift/check-argv.ts';
import type { FlagIndex } from '../../recipe/drift/flag-index.ts';
import { DEFAULT_SURFACE_PATH } from '../../recipe/drift/load-surface.ts';
import type { Problem } from '../../recipe/drift/problem.ts';
import type { FlagRecord } from '../../recipe/drift/surface-schema.ts';
import { VALIDATED_VALUES } from '../../recipe/drift/validated-values.ts';
import { fixturePath, index, V2_DEFAULT_ARGV, WORKERS_OVERLAY } from './helpers.ts';

/**
 * The checker against Python's own argparse (miles-bridge/argparse_oracle.py builds a parser from the
 * same surface file). Argvs are drawn without asking the checker anything: each flag gets 0–3 values,
 * mostly of its type or among its choices, sometimes not, sometimes as `--flag=value`, and sometimes a
 * flag is repeated. argparse then says, for the whole batch in one Python run, which argvs it accepts,
 * what each dest binds, and where it stops; the checker must agree.
 */

const PYTHON = 'python3';
const ORACLE = fixturePath('miles-bridge/argparse_oracle.py');
const CASES = 400;
const pythonMissing = spawnSync(PYTHON, ['--version']).error !== undefined;

/** One flag occurrence: the spelling used, its value tokens, and `--name=value` or not. */
interface Entry {
  readonly record: FlagRecord;
  readonly name: string;
  readonly values: readonly string[];
  readonly eq: boolean;
}

type OracleAnswer =
  | { ok: false; error: string; option_strings: string[] }
  | { ok: true; values: Record<string, unknown>; extras: string[] };

const render = (entries: readonly Entry[]): string[] =>
  entries.flatMap((e) =>
    e.eq && e.values.length === 1 ? [`${e.name}=${e.values[0]}`] : [e.name, ...e.values],
  );

function oracle(argvs: readonly (readonly string[])[]): OracleAnswer[] {
  const out = execFileSync(PYTHON, [ORACLE], {
    input: JSON.stringify({ surface: DEFAULT_SURFACE_PATH, overlays: [WORKERS_OVERLAY], argvs }),
    maxBuffer: 64 * 1024 * 1024,
  });
  return JSON.parse(out.toString('utf8')) as OracleAnswer[];
}

const WORD = fc.stringMatching(/^[a-z][a-z0-9_./:]{0,12}$/);

/** A value token: usually one argparse accepts for the flag, sometimes a word it must refuse. */
function valueFor(record: FlagRecord): fc.Arbitrary<string> {
  const good: fc.Arbitrary<string>[] = [];
  if (record.choices) good.push(fc.constantFrom(...record.choices.map(String)));
  else if (record.type === 'int') good.push(fc.integer({ min: -1000, max: 100_000 }).map(String));
  else if (record.type === 'float')
    good.push(fc.integer({ min: -1000, max: 1000 }).map((n) => String(n / 8)));
  else good.push(WORD);
  return fc.oneof({ arbitrary: good[0]!, weight: 6 }, { arbitrary: WORD, weight: 1 });
}

function entryFor(record: FlagRecord): fc.Arbitrary<Entry> {
  return fc
    .record({
      name: fc.constantFrom(record.flag, ...record.aliases),
      count: fc.oneof(
        { arbitrary: fc.constant(-1), weight: 6 },
        { arbitrary: fc.integer({ min: 0, max: 3 }), weight: 4 },
      ),
      eq: fc.boolean(),
      values: fc.array(valueFor(record), { minLength: 3, maxLength: 3 }),
    })
    .map(({ name, count, eq, values }) => {
      // -1: the count the surface's nargs names (read from the record, not from the checker).
      const n = record.nargs;
      const natural =
        record.kind === 'store_true' || record.kind === 'store_false' || record.kind === 'boolean_optional'
          ? 0
          : typeof n === 'number'
            ? n
            : n === '+'
              ? 1
              : n === '*' || n === '?'
                ? 0
                : 1;
      return { record, name, values: values.slice(0, count < 0 ? natural : count), eq };
    });
}

/** A list of entries with distinct dests, then maybe one of them repeated somewhere. */
function argvEntries(records: readonly FlagRecord[]): fc.Arbitrary<Entry[]> {
  return fc
    .uniqueArray(fc.constantFrom(...records), { minLength: 1, maxLength: 8, selector: (r) => r.dest })
    .chain((rs) => fc.tuple(...rs.map(entryFor)))
    .chain((entries) =>
      fc.option(fc.tuple(fc.nat(entries.length - 1), fc.nat(entries.length)), { freq: 4 }).map((dup) => {
        if (dup === null) return entries;
        const copy = [...entries];
        copy.splice(dup[1], 0, entries[dup[0]]!);
        return copy;
      }),
    );
}

/** The checker's rules an argparse message stands for (the checker tells no value from too few). */
function rulesFor(message: string): readonly string[] {
  if (/: expected (one argument|at least one argument|\d+ arguments?)$/.test(message))
    return ['missing-value', 'nargs'];
  if (/: invalid choice: /.test(message)) return ['not-in-choices'];
  if (/: invalid (int|float) value: /.test(message)) return ['invalid-type'];
  if (/: ignored explicit argument /.test(message)) return ['switch-given-value'];
  throw new Error(`argparse message the test does not map: ${message}`);
}

/** What argparse binds for an occurrence: `int`/`float` values as numbers, anything else as text. */
function expectedBinding(e: Entry): unknown {
  const numeric = e.record.type === 'int' || e.record.type === 'float';
  const conv = (v: string | undefined) => (numeric && v !== undefined ? Number(v) : v);
  switch (e.record.kind) {
    case 'store_true':
      return true;
    case 'store_false':
      return false;
    case 'boolean_optional':
      return !e.name.startsWith('--no-');
    case 'value':
      return conv(e.values[0]);
    case 'nargs':
      return e.record.nargs === '?' ? (conv(e.values[0]) ?? null) : e.values.map(conv);
    case 'append':
      return [e.record.nargs === null ? conv(e.values[0]) : e.values.map(conv)];
  }
}

describe.skipIf(pythonMissing)(
  `the checker against Python's argparse (${pythonMissing ? `skipped: ${PYTHON} is missing` : 'argparse oracle'})`,
  () => {
    let idx: FlagIndex;
    let records: FlagRecord[];

    beforeAll(async () => {
      idx = await index([WORKERS_OVERLAY]);
      // Flags that change the rules for others (backend, hooks) stay out; so do the few whose values
      // Miles' own validation restricts beyond argparse (VALIDATED_VALUES: argparse cannot judge them).
      records = [...new Set([...idx.byName.values()].map((s) => s.record))].filter(
        (r) =>
          r.scope === 'always' &&
          r.flag !== '--train-backend' &&
          !r.flag.endsWith('-function-path') &&
          VALIDATED_VALUES[r.flag] === undefined,
      );
    });

    test('accepts what argparse accepts (binding the same values) and names what stops it', () => {
      const seed = Number(process.env.FC_SEED ?? Date.now() % 2 ** 31);
      const drawn = fc.sample(argvEntries(records), { numRuns: CASES, seed });
      const v2 = scanArgv(V2_DEFAULT_ARGV, (n) => idx.byName.has(n)).options.map((o) => ({
        record: idx.byName.get(o.name)!.record,
        name: o.name,
        values: o.values,
        eq: false,
      }));
      const cases = [v2, ...drawn];
      const argvs = cases.map(render);
      const answers = oracle(argvs);
      let rejected = 0;
      let accepted = 0;
      cases.forEach((entries, k) => {
        const argv = argvs[k]!;
        const answer = answers[k]!;
        const problems = checkArgv(argv, idx);
        const where = `seed ${seed}, case ${k}: ${JSON.stringify(argv)}\nargparse: ${JSON.stringify(answer)}\nchecker: ${JSON.stringify(problems.map(({ flag, rule }) => ({ flag, rule })))}`;
        const errors = problems.filter((p) => p.rule !== 'repeated-same' && p.rule !== 'repeated');
        if (!answer.ok) {
          rejected += 1;
          const rules = rulesFor(answer.error);
          const named = (p: Problem) => answer.option_strings.includes(p.flag) && rules.includes(p.rule);
          expect(problems.some(named), where).toBe(true);
          return;
        }
        if (answer.extras.length > 0) {
          rejected += 1;
          // Tokens no argument consumed: train.py's parse_args stops on them. The checker must name an
          // occurrence that was given more values than it takes.
          expect(
            errors.some((p) => p.rule === 'nargs' || p.rule === 'switch-given-value'),
            where,
          ).toBe(true);
          return;
        }
        accepted += 1;
        expect(errors, where).toEqual([]);
        // The last occurrence of each dest wins in argparse (an append flag collects every one).
        const last = new Map(entries.map((e) => [e.record.dest, e]));
        for (const [dest, e] of last) {
          const all = entries.filter((o) => o.record.dest === dest);
          const want =
            e.record.kind === 'append'
              ? all.flatMap((o) => expectedBinding(o) as unknown[])
              : expectedBinding(e);
          expect(answer.values[dest], `${where}\ndest ${dest}`).toEqual(want);
        }
        // A repeated occurrence of a non-append flag is a warning, and nothing else.
        const repeats =
          entries.filter((e) => e.record.kind !== 'append').length -
          [...last.values()].filter((e) => e.record.kind !== 'append').length;
        expect(problems.filter((p) => p.rule === 'repeated-same').length, where).toBe(repeats);
      });
      // The batch exercises both sides (a generator that never leaves the valid set proves nothing).
      expect(accepted).toBeGreaterThan(CASES / 10);
      expect(rejected).toBeGreaterThan(CASES / 10);
      // One Python run for the whole batch; a loaded machine may need more than the default 5 s.
    }, 60_000);
  },
);
