import { resolve } from 'node:path';
import { z } from 'zod';
import { parseFlags, repeatedFlag, switchFlag, valueFlag } from '../../common/cli-flags.ts';
import { HarnessError } from '../../common/errors.ts';
import { EXIT } from '../../common/exit-codes.ts';
import { buildFlagIndex } from '../../recipe/drift/flag-index.ts';
import { type Invocation, parseInvocationText, trainInvocation } from '../../recipe/drift/invocation.ts';
import { DEFAULT_SURFACE_PATH, loadSurface } from '../../recipe/drift/load-surface.ts';
import { loadNewerMiles, newerSurface } from '../../recipe/drift/newer-surface.ts';
import { secretValues } from '../../recipe/drift/secret-values.ts';
import { redactVerdict, renderVerdict, surfaceVerdict } from '../../recipe/drift/surface-verdict.ts';
import type { CliCommand, CliIo } from '../io.ts';
import { readAll, splitAtDoubleDash } from './command-input.ts';

const SPEC = {
  command: 'surface check',
  operands: '(-- ARGV... | --stdin)',
  about: `Checks a train.py argv against Miles' CLI surface: every flag known, the right number of values,
values inside their choices, no flag repeated. Exit 0 clean, 1 problems, 2 usage or config error.`,
  flags: {
    surface: valueFlag(
      'FILE',
      z.string().min(1).optional(),
      'a miles-cli-surface/1 file (default: the copy under fixtures/miles-cli/)',
    ),
    overlay: repeatedFlag(
      'ID',
      z.string().min(1),
      "also accept an overlay's flags: the first 8 characters of its evidence commit,\nor 'all'; repeatable",
    ),
    miles: valueFlag(
      '31f1ca96|newer',
      z.enum(['31f1ca96', 'newer'], { error: '--miles must be 31f1ca96 or newer' }).default('31f1ca96'),
      "which Miles to check against: the surface's own (31f1ca96), or newer: its flags with\nsii-avalanche/miles@379af027's session arguments (renamed and refused flags, and\nthe newer default of each changed flag the argv leaves unset) [default: 31f1ca96]",
    ),
    json: switchFlag('print the machine verdict (format harness-surface-verdict/1)'),
    stdin: switchFlag(
      'read one shell command or a JSON argv array (or {"argv": [...], "env": {...}})\nfrom standard input instead of ARGV',
    ),
  },
};

export const command: CliCommand = {
  summary: "check a train.py argv against Miles' CLI surface",
  async run(argv, io) {
    const { head, tail } = splitAtDoubleDash(argv);
    const parsed = parseFlags(head, SPEC, io);
    if (parsed === undefined) return EXIT.ok;
    const { values: options, positionals } = parsed;
    const [subcommand, ...extra] = positionals;
    if (subcommand === undefined)
      throw new HarnessError(
        'usage.missing_argument',
        "surface: no subcommand; expected 'surface check' (see harness surface --help)",
        {
          details: { command: 'surface', expected: 'check' },
        },
      );
    if (subcommand !== 'check')
      throw new HarnessError(
        'usage.unknown_subcommand',
        `surface ${subcommand}: unknown subcommand; expected 'check'`,
        {
          details: { command: 'surface', subcommand },
        },
      );
    if (extra.length > 0)
      throw new HarnessError(
        'usage.unexpected_argument',
        `surface check: unexpected argument '${extra[0]}'; expected the argv after -- (or --stdin)`,
        { details: { command: 'surface check', argument: extra[0] as string } },
      );
    const invocation = await readInvocation(options.stdin, tail, io);
    const surfacePath = options.surface ? resolve(io.cwd, options.surface) : DEFAULT_SURFACE_PATH;
    const base = await loadSurface(surfacePath);
    const newer = options.miles === 'newer' ? loadNewerMiles() : undefined;
    const chosen = newer === undefined ? { surface: base, overlay: null } : newerSurface(base, newer);
    const overlays = chosen.overlay === null ? options.overlay : [...options.overlay, chosen.overlay];
    const index = buildFlagIndex(chosen.surface, overlays);
    const verdict = redactVerdict(
      surfaceVerdict(
        invocation,
        index,
        surfacePath,
        newer === undefined ? undefined : { miles: newer, base },
      ),
      secretValues(io.env, [invocation]),
    );
    io.stdout.write(options.json ? `${JSON.stringify(verdict, null, 2)}\n` : renderVerdict(verdict));
    return verdict.ok ? 0 : 1;
  },
};

async function readInvocation(
  fromStdin: boolean,
  tail: readonly string[] | undefined,
  io: CliIo,
): Promise<Invocation> {
  if (fromStdin && tail !== undefined)
    throw new HarnessError(
      'usage.conflicting_options',
      'surface check: an argv after -- and --stdin conflict; expected one of them',
      {
        details: { options: ['--', '--stdin'] },
      },
    );
  if (fromStdin) return parseInvocationText(await readAll(io), 'standard input');
  if (tail === undefined)
    throw new HarnessError(
      'usage.missing_argument',
      'surface check: no argv; expected the train.py flags after -- (or --stdin)',
      {
        details: { command: 'surface check', expected: 'ARGV' },
      },
    );
  if (tail.length === 0)
    throw new HarnessError(
      'usage.missing_argument',
      'surface check: nothing after --; expected the train.py flags to check',
      {
        details: { command: 'surface check', expected: 'ARGV' },
      },
    );
  return trainInvocation(tail);
}
