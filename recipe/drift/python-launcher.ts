import { execa } from 'execa';
import { z } from 'zod';
import { HarnessError } from '../../common/errors.ts';
import { parseJson } from '../../common/python-json/loads.ts';
/** The reader that imports a launcher the way Miles' launcher tests do and prints its recipe as JSON. */
import { LAUNCHER_READER } from '../../miles-bridge/entry-points.ts';
import type { Invocation } from './invocation.ts';

const Success = z.object({
  ok: z.literal(true),
  module: z.string(),
  argv: z.array(z.string()),
  env: z.record(z.string(), z.string()),
  fields: z.record(z.string(), z.unknown()),
});
const Failure = z.object({
  ok: z.literal(false),
  error: z.looseObject({
    kind: z.enum(['module-not-found', 'import-error', 'launcher-raised', 'launcher-shape', 'bad-option']),
    message: z.string(),
    module: z.string().nullable().optional(),
    trace: z.string().optional(),
  }),
});
const ReaderOutput = z.discriminatedUnion('ok', [Success, Failure]);

/** Stable codes per failure kind; a bad option is the user's usage error, the rest are the launcher's. */
export const LAUNCHER_ERROR_CODES = {
  'module-not-found': 'config.python_import',
  'import-error': 'config.launcher_import',
  'launcher-raised': 'config.launcher_raised',
  'launcher-shape': 'config.launcher_shape',
  'bad-option': 'usage.launcher_option',
} as const;

export interface LauncherOptions {
  /** The Python interpreter to run (default `python3`). */
  readonly python?: string;
  /** Options for the launcher's ScriptArgs, in `dataclass_cli` form (`--run-id X`, `--no-use-prometheus`). */
  readonly options?: readonly string[];
  /** The environment the launcher sees: its default factories read it (AGENT_SERVER_URL, MILES_HOST_IP, …). */
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly signal?: AbortSignal;
}

export interface LauncherRecipe extends Invocation {
  /** The synthetic module name the launcher was imported under. */
  readonly module: string;
  /** Every ScriptArgs field after construction (defaults and derived paths filled in). */
  readonly fields: Readonly<Record<string, unknown>>;
}

/**
 * Reads the recipe a Miles-style Python launcher builds: `_build_train_args` split into argv and
 * `_extra_env_vars`, through `python3` (argument arrays, no shell). Failures name what is missing:
 * the interpreter, or the exact Python module an import needs.
 */
export async function readLauncherRecipe(
  launcher: string,
  options: LauncherOptions,
): Promise<LauncherRecipe> {
  const python = options.python ?? 'python3';
  const result = await execa(
    python,
    ['-B', LAUNCHER_READER, '--launcher', launcher, '--', ...(options.options ?? [])],
    {
      env: { ...options.env },
      extendEnv: false,
      cwd: options.cwd,
      reject: false,
      timeout: 60_000,
      ...(options.signal ? { cancelSignal: options.signal } : {}),
    },
  );
  if ('code' in result && result.code === 'ENOENT') {
    throw new HarnessError(
      'config.python_missing',
      `cannot run '${python}': it is not installed or not on PATH (python:PATH sides need Python 3.10 or newer)`,
      { details: { python } },
    );
  }
  if (result.isCanceled)
    throw new HarnessError('run.cancelled', `reading the launcher ${launcher} was cancelled`);
  const parsed = ReaderOutput.safeParse(lastJsonLine(result.stdout));
  if (!parsed.success) {
    throw new HarnessError(
      'config.launcher_reader_failed',
      `reading the launcher ${launcher} with ${python} failed (exit ${result.exitCode ?? result.signal}): ${tail(result.stderr)}`,
      { details: { launcher, python, exitCode: result.exitCode, stderr: tail(result.stderr) } },
    );
  }
  const output = parsed.data;
  if (!output.ok) {
    const { kind, message, ...facts } = output.error;
    throw new HarnessError(LAUNCHER_ERROR_CODES[kind], `${launcher}: ${message}`, {
      details: { launcher, kind, ...facts },
    });
  }
  return { module: output.module, argv: output.argv, env: output.env, fields: output.fields };
}

function lastJsonLine(stdout: string): unknown {
  const line = stdout.trim().split('\n').at(-1) ?? '';
  try {
    return parseJson(line);
  } catch {
    return undefined;
  }
}

function tail(text: string): string {
  const lines = text.trim().split('\n');
  return lines.slice(-5).join('\n') || '(no output)';
}
