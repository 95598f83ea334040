import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';
import { commandHelp, parseFlags, valueFlag } from '../../common/cli-flags.ts';
import { HarnessError } from '../../common/errors.ts';
import { fsReason } from '../../common/fs-reason.ts';
import { parseJson } from '../../common/python-json/loads.ts';
import { wholeNumber } from '../../common/whole-number.ts';
import { readTb2Tasks } from '../../fakes/harbor/episode-catalog.ts';
import { generateEpisodes } from '../../fakes/harbor/generator/generate.ts';
import { parseGeneratorParams, selectTasks } from '../../fakes/harbor/generator/task-selection.ts';
import { writeEpisodeScripts } from '../../fakes/harbor/generator/write-scripts.ts';
import type { CliCommand, CliIo } from '../io.ts';

const SPEC = {
  command: 'episodes generate',
  about: `Writes seeded, generated Terminus-2 episode scripts (docs/replay.md "Generated episodes"), one per
Terminal-Bench 2 task, each with one variant per GRPO sample. Play them with
  harness replay --episodes DIR`,
  flags: {
    out: valueFlag(
      'DIR',
      z.string().min(1, '--out must not be empty').optional(),
      'where the scripts go (created if missing)',
    ),
    seed: valueFlag(
      'S',
      wholeNumber('--seed', 0, 2 ** 32 - 1).default(42),
      'the generator seed [default: 42]',
    ),
    count: valueFlag(
      'N',
      wholeNumber('--count', 1, 2 ** 32 - 1).optional(),
      'how many tasks (a seeded choice of the 89 TB2 names) [default: 89]',
    ),
    params: valueFlag(
      'FILE',
      z.string().min(1).optional(),
      'generator parameters as JSON (unset keys keep their defaults)',
    ),
  },
};

async function readParams(io: CliIo, file: string | undefined) {
  if (file === undefined) return parseGeneratorParams({}, '(defaults)');
  const path = resolve(io.cwd, file);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new HarnessError(
      'config.generator_params',
      `--params ${path}: ${fsReason(error)}; expected a JSON file of generator parameters`,
      { details: { source: path }, cause: error },
    );
  }
  let value: unknown;
  try {
    value = parseJson(text);
  } catch (error) {
    throw new HarnessError(
      'config.generator_params',
      `--params ${path}: not valid JSON (${error instanceof Error ? error.message : String(error)}); expected a JSON object of generator parameters`,
      { details: { source: path }, cause: error },
    );
  }
  return parseGeneratorParams(value, path);
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === '--help' || sub === '-h') {
    io.stdout.write(commandHelp(SPEC));
    return 0;
  }
  if (sub !== 'generate')
    throw new HarnessError(
      'usage.unknown_subcommand',
      `episodes: ${sub === undefined ? 'missing subcommand' : `unknown subcommand '${sub}'`}; expected 'generate' (harness episodes --help)`,
      { details: { command: 'episodes', subcommand: sub ?? '' } },
    );
  const parsed = parseFlags(rest, SPEC, io);
  if (parsed === undefined) return 0;
  const flags = parsed.values;
  if (flags.out === undefined)
    throw new HarnessError(
      'usage.missing_argument',
      'episodes generate: --out DIR is missing; expected the folder to write the scripts to',
      {
        details: { command: 'episodes generate', expected: '--out DIR' },
      },
    );
  const params = await readParams(io, flags.params);
  const names = await readTb2Tasks();
  const tasks = selectTasks(names, flags.seed, flags.count ?? names.length);
  const generated = generateEpisodes({ seed: flags.seed, tasks, params });
  const dir = resolve(io.cwd, flags.out);
  const paths = await writeEpisodeScripts(
    dir,
    generated.map((g) => g.script),
  );
  io.stdout.write(
    `wrote ${paths.length} episode scripts (${params.samples_per_task} variants each, seed ${flags.seed}) to ${dir}\nplay them: harness replay --episodes ${flags.out}\n`,
  );
  return 0;
}

export const command: CliCommand = {
  summary: 'write seeded, generated Terminus-2 episode scripts',
  run,
};
