import { type ParseArgsConfig, parseArgs } from 'node:util';
import { HarnessError, type HarnessErrorCode } from './errors.ts';

/** The usage code for each of `node:util` parseArgs' own errors. */
const USAGE_CODES: Record<string, HarnessErrorCode> = {
  ERR_PARSE_ARGS_UNKNOWN_OPTION: 'usage.unknown_option',
  ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL: 'usage.unexpected_argument',
  ERR_PARSE_ARGS_INVALID_OPTION_VALUE: 'usage.invalid_option_value',
};

/** A number written with a leading minus: `-1`, `-5`, `-0.5`. */
const NEGATIVE_NUMBER = /^-(\d|\.\d)/;

/**
 * `--name -1` for a string option becomes `--name=-1`, so a negative number reaches the option's own
 * check ("expected a whole number from 1 to 1000") instead of parseArgs' "argument is ambiguous".
 */
function joinNegativeValues(args: readonly string[], options: ParseArgsConfig['options']): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] as string;
    const next = args[i + 1];
    if (arg === '--') {
      for (let k = i; k < args.length; k += 1) out.push(args[k] as string);
      break;
    }
    const name = arg.startsWith('--') && !arg.includes('=') ? arg.slice(2) : undefined;
    if (
      name !== undefined &&
      options?.[name]?.type === 'string' &&
      next !== undefined &&
      NEGATIVE_NUMBER.test(next)
    ) {
      out.push(`${arg}=${next}`);
      i += 1;
    } else out.push(arg);
  }
  return out;
}

/** One line for each of parseArgs' errors: the option or argument, what is wrong, what is expected. */
function describe(nodeCode: string, message: string, hint: string): string {
  const quoted = /'([^']+)'/.exec(message)?.[1] ?? '';
  switch (nodeCode) {
    case 'ERR_PARSE_ARGS_UNKNOWN_OPTION':
      return `${quoted}: unknown option; expected one of the options in ${hint}`;
    case 'ERR_PARSE_ARGS_UNEXPECTED_POSITIONAL':
      return `unexpected argument '${quoted}'; expected options only (see ${hint})`;
    default: {
      const option = quoted.replace(/ <value>$/, '');
      if (/ambiguous/.test(message))
        return `${option}: its value starts with '-'; expected ${option}=VALUE for such a value`;
      if (/missing/.test(message)) return `${option}: missing its value; expected ${option} VALUE`;
      return `${option}: ${message.split('\n')[0]}`;
    }
  }
}

/**
 * `node:util` parseArgs whose own errors (unknown option, stray argument, missing value) become one-line
 * `usage.*` HarnessErrors, so every command exits 2 on them with the same codes. `context.command` names
 * the command in the message and points at its `--help`. A negative number after a string option is
 * taken as its value.
 */
export function parseCliArgs<T extends ParseArgsConfig>(
  config: T,
  context: { command?: string; invocation?: string } = {},
): ReturnType<typeof parseArgs<T>> {
  const args = config.args === undefined ? undefined : joinNegativeValues(config.args, config.options);
  try {
    return parseArgs({ ...config, ...(args ? { args } : {}) } as T);
  } catch (error) {
    const nodeCode = String((error as { code?: unknown }).code);
    const code = USAGE_CODES[nodeCode];
    if (code === undefined) throw error;
    const prefix = context.command ? `${context.command}: ` : '';
    const run = context.invocation ?? (context.command ? `harness ${context.command}` : undefined);
    const hint = run === undefined ? '--help' : `${run} --help`;
    throw new HarnessError(code, `${prefix}${describe(nodeCode, (error as Error).message, hint)}`, {
      cause: error,
      ...(context.command ? { details: { command: context.command } } : {}),
    });
  }
}
