import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';
import { parseFlags, switchFlag, valueFlag } from '../../common/cli-flags.ts';
import { HarnessError, isHarnessError } from '../../common/errors.ts';
import { EXIT } from '../../common/exit-codes.ts';
import { checkOutputFile } from '../../common/output-path.ts';
import { renderTable } from '../../common/text-table.ts';
import { checkoutMilesProfileFlag } from '../../contracts/miles-profile-flag.ts';
import { qwen3Tokenizer } from '../../fakes/tokenizer/qwen3-tokenizer.ts';
import { DEFAULT_PYTHON } from '../../replay/conformance/miles-server.ts';
import {
  type CatalogueRow,
  catalogueFiles,
  compareWithRecorded,
  type RowComparison,
  readCatalogue,
  recordVerdicts,
} from '../../replay/faults/catalogue.ts';
import { type RowResult, runCatalogue } from '../../replay/faults/run-catalogue.ts';
import { type CataloguePageInput, renderCatalogueHtml } from '../../replay/report/catalogue-html.ts';
import type { CliCommand, CliIo } from '../io.ts';

const SPEC = {
  command: 'catalogue',
  operands: '[SCENARIO...]',
  about: `Plays the field-failure catalogue (default: every fixtures/field-failures/*.json row; docs/field-failures.md)
through the fakes: each row's rollouts against a scripted policy and the fake session server, then one
GRPO step and every harness check, under each Miles profile (--miles-profile: that one only). With
--miles-root, under the checkout's profile only: the same rollouts through Miles' own session server and
reward post-processing (miles-bridge/reward_rows.py) on CPU, compared exchange by exchange with the fake.
Each row's verdicts are compared with those it recorded under the profile; --record writes them instead.`,
  flags: {
    'miles-profile': checkoutMilesProfileFlag(
      "the Miles profile to play the rows under (default: every profile;\nwith --miles-root, the checkout's, and a contradicting name is refused)",
    ),
    'miles-root': valueFlag(
      'PATH',
      z.string().min(1).optional(),
      "a radixark/miles checkout: run Miles' side too (omitted: the fakes only)",
    ),
    python: valueFlag(
      'BIN',
      z.string().min(1).default(DEFAULT_PYTHON),
      `the Python with Debian's fastapi, uvicorn, httpx, pydantic, numpy, torch, regex, jinja2\n(default: ${DEFAULT_PYTHON})`,
    ),
    record: switchFlag("write each row's fresh verdicts into its file under the profile's name"),
    json: switchFlag(
      'one JSON document: {"rows": [{"id", "profile", "harness", "miles", "recorded"}], "totals": {PROFILE: {…}}}',
    ),
    html: valueFlag(
      'FILE.html',
      z.string().min(1).optional(),
      "write a self-contained HTML page: each row's verdicts per profile and the ids around its\nfault, decoded (the path is checked before the rows run; written after the table)",
    ),
  },
  footer: `Exit status: 0 every row's verdicts are as recorded (or --record), 1 a row's differ from its record, 2
usage or a scenario refused (a fault its tokenizer cannot express, ids it cannot decode; a --miles-profile
that contradicts the checkout), 3 unmet
precondition (with --miles-root). Docs: docs/field-failures.md`,
};

interface Totals {
  readonly rows: number;
  readonly caught: number;
  readonly not_caught: number;
  readonly miles_run: number;
  readonly fake_agrees: number;
  readonly miles_raised: number;
  readonly differ_from_record: number;
}

function totalsOf(results: readonly RowResult[], comparisons: readonly RowComparison[]): Totals {
  const miles = results.flatMap((r) => (r.miles === null ? [] : [r.miles]));
  return {
    rows: results.length,
    caught: results.filter((r) => r.harness.outcome === 'caught').length,
    not_caught: results.filter((r) => r.harness.outcome === 'not_caught').length,
    miles_run: miles.length,
    fake_agrees: miles.filter((m) => m.fake_agrees).length,
    miles_raised: miles.filter((m) => 'raised' in m.rewards).length,
    differ_from_record: comparisons.filter((c) => c.harness === 'differs' || c.miles === 'differs').length,
  };
}

function flagged(result: RowResult): string {
  const hits = Object.entries(result.harness.checks).filter(([, v]) => v === 'fail' || v === 'finding');
  return hits.length === 0 ? '-' : hits.map(([name, v]) => `${name}:${v}`).join(' ');
}

function milesCell(result: RowResult): string {
  if (result.miles === null) return 'not run';
  const m = result.miles;
  const turns = m.turn_statuses.map((t) => t.join('/')).join(' ');
  const rewards = 'raised' in m.rewards ? m.rewards.raised.split(':')[0]! : 'ok';
  return `turns ${turns}; rewards ${rewards}; fake ${m.fake_agrees ? 'agrees' : 'differs'}`;
}

/** Totals per profile, in the order the profiles ran. */
function totalsByProfile(
  results: readonly RowResult[],
  comparisons: readonly RowComparison[],
): Record<string, Totals> {
  const profiles = [...new Set(results.map((r) => r.profile))];
  return Object.fromEntries(
    profiles.map((p) => [
      p,
      totalsOf(
        results.filter((r) => r.profile === p),
        comparisons.filter((c) => c.profile === p),
      ),
    ]),
  );
}

function renderText(
  results: readonly RowResult[],
  comparisons: readonly RowComparison[],
  totals: Record<string, Totals>,
): string {
  const rows = results.map((r, k) => [
    r.id,
    r.profile,
    r.harness.outcome,
    flagged(r),
    milesCell(r),
    `${comparisons[k]!.harness}/${comparisons[k]!.miles}`,
  ]);
  const table = renderTable(['row', 'profile', 'harness', 'checks flagged', 'Miles', 'record'], rows, {
    rule: true,
  });
  const lines = Object.entries(totals).map(
    ([p, t]) =>
      `${p}: ${t.rows} rows: ${t.caught} caught, ${t.not_caught} not caught; Miles run on ${t.miles_run} (fake agrees on ${t.fake_agrees}, rewards raised on ${t.miles_raised}); ${t.differ_from_record} differ from their record`,
  );
  return `${table}\n${lines.join('\n')}\n`;
}

/** The page, after the table: a path that went bad during the run loses the page, not the table. */
async function writeHtml(file: string, input: CataloguePageInput): Promise<void> {
  try {
    await writeFile(file, renderCatalogueHtml(input));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'error';
    throw new HarnessError(
      'config.output_unwritable',
      `--html ${file}: cannot write it (${code}); expected a writable file path`,
      {
        details: { option: '--html', path: file },
        cause: error,
      },
    );
  }
}

async function rowsOf(positionals: readonly string[], cwd: string): Promise<CatalogueRow[]> {
  const files = positionals.length > 0 ? positionals.map((p) => resolve(cwd, p)) : await catalogueFiles();
  return readCatalogue(files);
}

export const command: CliCommand = {
  summary: "play the field-failure catalogue through the fakes (and Miles), checking each row's verdicts",
  async run(argv: readonly string[], io: CliIo): Promise<number> {
    const parsed = parseFlags(argv, SPEC, io);
    if (parsed === undefined) return EXIT.ok;
    const options = parsed.values;
    // Checked first: a bad path is a usage error before minutes of rows, not after them.
    const htmlFile =
      options.html === undefined ? undefined : await checkOutputFile(io.cwd, options.html, '--html');
    const rows = await rowsOf(parsed.positionals, io.cwd);
    const milesRoot = options.miles_root;
    const byId = new Map(rows.map((r) => [r.scenario.id, r]));
    try {
      const results = await runCatalogue(
        rows.map((r) => r.scenario),
        {
          signal: io.signal,
          ...(options.miles_profile === undefined ? {} : { milesProfile: options.miles_profile }),
          ...(milesRoot === undefined
            ? {}
            : { miles: { milesRoot: resolve(io.cwd, milesRoot), python: options.python } }),
          onRow: (r) => io.stderr.write(`[catalogue] ${r.profile} ${r.id}: ${r.harness.outcome}\n`),
        },
      );
      const comparisons = results.map((r) => compareWithRecorded(byId.get(r.id)!, r));
      if (options.record) for (const r of results) await recordVerdicts(byId.get(r.id)!, r);
      const totals = totalsByProfile(results, comparisons);
      if (options.json)
        io.stdout.write(
          `${JSON.stringify({ rows: results.map((r, k) => ({ ...r, recorded: comparisons[k] })), totals })}\n`,
        );
      else io.stdout.write(renderText(results, comparisons, totals));
      if (htmlFile !== undefined)
        await writeHtml(htmlFile, {
          rows,
          results,
          comparisons,
          milesNotRun: milesRoot === undefined ? 'no --miles-root given' : null,
          decoder: qwen3Tokenizer(),
        });
      const differ = Object.values(totals).some((t) => t.differ_from_record > 0);
      return options.record || !differ ? EXIT.ok : EXIT.failed;
    } catch (error) {
      if (isHarnessError(error) && error.code.startsWith('precondition.')) {
        io.stderr.write(`${error.message}\n`);
        return EXIT.precondition;
      }
      throw error;
    }
  },
};
