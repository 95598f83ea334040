import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { commandHelp, parseFlags, switchFlag, valueFlag } from '../../common/cli-flags.ts';
import { HarnessError } from '../../common/errors.ts';
import { EXIT } from '../../common/exit-codes.ts';
import { parseJson } from '../../common/python-json/loads.ts';
import { DEFAULT_MILES_PROFILE, milesProfileLine } from '../../contracts/miles-profile.ts';
import { optionalMilesProfileFlag } from '../../contracts/miles-profile-flag.ts';
import { readSessionTrace } from '../../contracts/trace.ts';
import { familyModel } from '../../fakes/tokenizer/tito.ts';
import { VECTORS_MILES_PROFILE } from '../../replay/conformance/bundled-vectors.ts';
import { importTrajectories } from '../../replay/trace/import-folder.ts';
import {
  type ReplayResult,
  replayTrace,
  replayTraceFresh,
  traceIdForPath,
} from '../../replay/trace/replay.ts';
import { replayStructure } from '../../replay/trace/structure.ts';
import { renderReplay } from '../../replay/trace/view.ts';
import type { CliCommand, CliIo } from '../io.ts';
import { titoModelFlag, tokenizerFlag, UrlSchema } from './serve/options.ts';

const SPEC = {
  command: 'trace replay',
  operands: 'FILE...',
  about: `Replays session traces (session-trace/1) through a fresh fake session server and a scripted fake
policy over HTTP, then prints the tree and the samples.`,
  flags: {
    json: switchFlag(
      'one JSON object per line per trace:\n{"trace", "turns", "tree", "samples", "empty_reason"[, "samples_error"]}',
    ),
    target: valueFlag(
      'URL',
      UrlSchema.optional(),
      "replay against a running session server instead (its backend must be\n'harness serve policy --script FILE...' with the same files)",
    ),
    check: switchFlag(
      "compare each result with FILE's sibling .expected.json, structurally (statuses,\ntree shape, sample order, which completion spans are trained); exit 1 on a difference",
    ),
    'tito-model': titoModelFlag('toy TITO family of the fresh fake server: default or glm47'),
    tokenizer: tokenizerFlag(
      "toy (default) or qwen3: the fresh fake server and policy on Qwen3's real tokenizer",
    ),
    'miles-profile': optionalMilesProfileFlag(
      `the fresh fake server answers as (default ${DEFAULT_MILES_PROFILE.name}, the newest checked against\nreal Miles code; with --check ${VECTORS_MILES_PROFILE.name}, the Miles that made the bundled expected files)`,
    ),
  },
};

async function expectedFor(file: string): Promise<ReplayResult> {
  const path = file.replace(/\.json$/, '.expected.json');
  try {
    return parseJson(await readFile(path, 'utf8')) as ReplayResult;
  } catch (error) {
    throw new HarnessError(
      'config.trace_no_expected',
      `--check: cannot read ${path}: ${(error as Error).message}`,
      {
        details: { path },
      },
    );
  }
}

/** A `fetch` that never reached `--target` (refused, no such host): a config error naming the URL. */
function unreachable(url: string, error: unknown): unknown {
  if (!(error instanceof TypeError) || error.message !== 'fetch failed') return error;
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const reason = cause?.code ?? cause?.message ?? 'fetch failed';
  return new HarnessError(
    'config.target_unreachable',
    `--target ${url}: cannot connect (${reason}); expected a running session server`,
    {
      details: { url, reason },
      cause: error,
    },
  );
}

async function runReplay(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseFlags(argv, SPEC, io);
  if (parsed === undefined) return 0;
  const options = { ...parsed.values, files: parsed.positionals };
  const titoModel = familyModel(options.tokenizer, options.tito_model);
  // The expected files were made by one Miles (fixtures/conformance/PROVENANCE.md): check against that one.
  const milesProfile =
    options.miles_profile ?? (options.check ? VECTORS_MILES_PROFILE : DEFAULT_MILES_PROFILE);
  if (options.files.length === 0)
    throw new HarnessError(
      'usage.missing_argument',
      'trace replay: no trace FILE given; expected one or more session-trace/1 files',
      {
        details: { command: 'trace replay', expected: 'FILE...' },
      },
    );
  let differences = 0;
  for (const file of options.files) {
    const trace = await readSessionTrace(resolve(io.cwd, file));
    const { result } =
      options.target === undefined
        ? await replayTraceFresh(trace, { titoModel, milesProfile })
        : await replayTrace(trace, options.target, { traceId: traceIdForPath(file) }).catch(
            (error: unknown) => {
              throw unreachable(options.target as string, error);
            },
          );
    if (options.json) io.stdout.write(`${JSON.stringify({ trace: file, ...result })}\n`);
    else io.stdout.write(renderReplay(file, result));
    if (options.check) {
      const expected = replayStructure(await expectedFor(resolve(io.cwd, file)));
      const got = replayStructure(result);
      const fields = (Object.keys(expected) as Array<keyof typeof expected>).filter(
        (k) => !isDeepStrictEqual(expected[k], got[k]),
      );
      if (fields.length > 0) {
        differences += 1;
        io.stderr.write(`${file}: differs from its expected file in ${fields.join(', ')}\n`);
      } else if (!options.json) {
        io.stdout.write(`  check: agrees with ${file.replace(/\.json$/, '.expected.json')}\n`);
      }
    }
  }
  if (options.check)
    io.stderr.write(
      `${options.files.length - differences}/${options.files.length} agree (${milesProfileLine(milesProfile)})\n`,
    );
  return differences === 0 ? 0 : 1;
}

const IMPORT_SPEC = {
  command: 'trace import',
  operands: 'DIR|FILE.jsonl',
  about: `Turns a recipe run's trajectory rows (trajectory/<step>.jsonl of a --dump-details folder: each kept
sample's conversation) into session-trace/1 files, one per row, for 'harness trace replay' and
'harness conformance'. Calls no kept sample holds (trimmed retries, summaries) are not in the rows.`,
  flags: {
    out: valueFlag(
      'DIR',
      z.string().min(1),
      'where the traces go (<step>-g<group>-s<sample index>-<k>.json)',
    ),
  },
};

async function runImport(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseFlags(argv, IMPORT_SPEC, io);
  if (parsed === undefined) return 0;
  if (parsed.positionals.length !== 1)
    throw new HarnessError('usage.missing_argument', 'trace import: expected one DIR or FILE.jsonl', {
      details: { command: 'trace import', expected: 'DIR|FILE.jsonl' },
    });
  const result = await importTrajectories(
    resolve(io.cwd, parsed.positionals[0]!),
    resolve(io.cwd, parsed.values.out),
  );
  for (const s of result.skipped) io.stderr.write(`trace import: skipped ${s.file}:${s.line}: ${s.reason}\n`);
  io.stdout.write(`${result.written.length} traces written to ${resolve(io.cwd, parsed.values.out)}\n`);
  return result.skipped.length === 0 ? EXIT.ok : EXIT.failed;
}

export const command: CliCommand = {
  summary: 'replay session traces through a (fake or real) session server; import them from a run',
  async run(argv: readonly string[], io: CliIo): Promise<number> {
    const [sub, ...rest] = argv;
    if (sub === 'replay') return runReplay(rest, io);
    if (sub === 'import') return runImport(rest, io);
    if (sub === undefined || sub === '--help' || sub === '-h') {
      io.stdout.write(`${commandHelp(SPEC)}\n${commandHelp(IMPORT_SPEC)}`);
      return sub === undefined ? EXIT.usage : EXIT.ok;
    }
    throw new HarnessError(
      'usage.unknown_subcommand',
      `trace ${sub}: unknown subcommand; expected 'trace replay FILE...' or 'trace import DIR --out DIR' (see harness trace --help)`,
      {
        details: { command: 'trace', subcommand: sub },
      },
    );
  },
};
