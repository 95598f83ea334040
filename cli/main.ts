import { errorText, exitCodeFor } from '../common/errors.ts';
import type { CliCommand, CliIo } from './io.ts';

/** Every top-level command, loaded lazily so `harness recipe` does not pay for the servers' imports. */
const COMMANDS: Record<string, () => Promise<{ command: CliCommand }>> = {
  recipe: () => import('./commands/recipe.ts'),
  serve: () => import('./commands/serve.ts'),
  smoke: () => import('./commands/smoke.ts'),
  trace: () => import('./commands/trace.ts'),
  surface: () => import('./commands/surface.ts'),
  replay: () => import('./commands/replay.ts'),
  conformance: () => import('./commands/conformance.ts'),
  differential: () => import('./commands/differential.ts'),
  episodes: () => import('./commands/episodes.ts'),
  fuzz: () => import('./commands/fuzz.ts'),
  'check-run': () => import('./commands/check-run.ts'),
  catalogue: () => import('./commands/catalogue.ts'),
};

/** The top-level help: every command with its one-line summary (loading each command only here). */
async function usage(): Promise<string> {
  const names = Object.keys(COMMANDS).sort();
  const summaries = await Promise.all(names.map(async (n) => (await COMMANDS[n]!()).command.summary));
  // bounded-spread: one entry per harness command
  const width = Math.max(...names.map((n) => n.length));
  return [
    'usage: harness <command> [options]',
    '',
    'commands:',
    ...names.map((n, i) => `  ${n.padEnd(width)}  ${summaries[i]}`),
    '',
    "Run 'harness <command> --help' for a command's options. Exit codes and the --json convention:",
    'docs/cli.md.',
    '',
  ].join('\n');
}

/** Dispatches to a command and turns thrown errors into a message and an exit code. */
export async function main(argv: readonly string[], io: CliIo): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.stdout.write(await usage());
    return name === undefined ? 2 : 0;
  }
  const load = COMMANDS[name];
  if (!load) {
    const known = Object.keys(COMMANDS).sort().join(', ');
    io.stderr.write(`[harness] ${name}: unknown command; expected one of ${known} (see harness --help)\n`);
    return 2;
  }
  try {
    const { command } = await load();
    return await command.run(rest, io);
  } catch (error) {
    io.stderr.write(errorText(error));
    return exitCodeFor(error);
  }
}
