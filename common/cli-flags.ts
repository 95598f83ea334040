import type { ParseArgsOptionsConfig } from 'node:util';
import { z } from 'zod';
import { errorText, exitCodeFor, HarnessError } from './errors.ts';
import { EXIT } from './exit-codes.ts';
import { jsonSwitchValueError } from './json-switch.ts';
import { parseCliArgs } from './parse-args.ts';

/**
 * A command-line flag, declared once: its `parseArgs` shape, its zod schema and its `--help` line all
 * come from this one object, so a flag cannot be accepted by the parser and missing from the help or
 * the schema (docs/cli.md).
 */
export interface Flag<S extends z.ZodType = z.ZodType> {
  readonly type: 'string' | 'boolean';
  readonly multiple?: boolean;
  /** The value's name in the help (`N`, `FILE`); a switch has none. */
  readonly meta?: string;
  /** Validates and converts what `parseArgs` read (a string, a list of strings, or a boolean). */
  readonly schema: S;
  /** The help text; `\n` starts a continuation line. */
  readonly help: string;
}

/** `--name`: true when given. */
export function switchFlag(help: string): Flag<z.ZodDefault<z.ZodBoolean>> {
  return { type: 'boolean', schema: z.boolean().default(false), help };
}

/** `--name VALUE`, once. */
export function valueFlag<S extends z.ZodType>(meta: string, schema: S, help: string): Flag<S> {
  return { type: 'string', meta, schema, help };
}

/** `--name VALUE`, repeatable: every value, in order. */
export function repeatedFlag<S extends z.ZodType>(
  meta: string,
  item: S,
  help: string,
): Flag<z.ZodDefault<z.ZodArray<S>>> {
  return { type: 'string', multiple: true, meta, schema: z.array(item).default([]), help };
}

export type FlagSet = Readonly<Record<string, Flag>>;

type SnakeCase<K extends string> = K extends `${infer Head}-${infer Tail}` ? `${Head}_${SnakeCase<Tail>}` : K;

/** The parsed values: each flag under its snake_case name, typed by its schema. */
export type FlagValues<F extends FlagSet> = {
  -readonly [K in keyof F & string as SnakeCase<K>]: z.output<F[K]['schema']>;
};

const HELP_FLAG = { type: 'boolean', short: 'h' } as const;

/** The `node:util` parseArgs options of a flag set, `-h, --help` included. */
export function parseArgsOptions(flags: FlagSet): ParseArgsOptionsConfig {
  const options: ParseArgsOptionsConfig = { help: HELP_FLAG };
  for (const [name, flag] of Object.entries(flags))
    options[name] = flag.multiple === true ? { type: flag.type, multiple: true } : { type: flag.type };
  return options;
}

/** The zod object of a flag set, keyed by snake_case name. */
function flagSchema<F extends FlagSet>(flags: F): z.ZodType<FlagValues<F>> {
  const shape: Record<string, z.ZodType> = {};
  for (const [name, flag] of Object.entries(flags)) shape[name.replaceAll('-', '_')] = flag.schema;
  return z.object(shape) as unknown as z.ZodType<FlagValues<F>>;
}

/**
 * The options block of a `--help`: one line a flag (continuations indented), then `-h, --help`.
 * `others` are options parsed elsewhere (a recipe field a command gives a meaning of its own), listed
 * first in the same columns.
 */
export function flagHelp(flags: FlagSet, others: readonly (readonly [string, string])[] = []): string {
  const rows = [
    ...others.map(([head, help]) => ({ head, lines: help.split('\n') })),
    ...Object.entries(flags).map(([name, flag]) => ({
      head: `--${name}${flag.meta === undefined ? '' : ` ${flag.meta}`}`,
      lines: flag.help.split('\n'),
    })),
  ];
  rows.push({ head: '-h, --help', lines: ['this help'] });
  const width = rows.reduce((most, r) => Math.max(most, r.head.length), 0) + 2;
  const indent = ' '.repeat(2 + width);
  return rows
    .map(({ head, lines }) =>
      [`  ${head.padEnd(width)}${lines[0]}`, ...lines.slice(1).map((l) => `${indent}${l}`)].join('\n'),
    )
    .join('\n');
}

/** How a command is run, as its usage line and hints spell it: `harness <command>` unless it says. */
function invocationOf(spec: { readonly command: string; readonly invocation?: string }): string {
  return spec.invocation ?? `harness ${spec.command}`;
}

/** The usage line: every flag in declaration order, wrapped under the invocation. */
function synopsis(invocation: string, flags: FlagSet, operands: string | undefined): string {
  const lead = `usage: ${invocation}`;
  const words = Object.entries(flags).map(
    ([name, flag]) =>
      `[--${name}${flag.meta === undefined ? '' : ` ${flag.meta}`}]${flag.multiple === true ? '...' : ''}`,
  );
  if (operands !== undefined) words.push(operands);
  const lines: string[] = [];
  let line = lead;
  for (const word of words) {
    if (line.length + 1 + word.length > 104 && line.trim() !== '') {
      lines.push(line);
      line = ' '.repeat(lead.length);
    }
    line += ` ${word}`;
  }
  lines.push(line);
  return lines.join('\n');
}

/**
 * A command's whole `--help`: the usage line and the options block come from `flags`; `about` says what
 * the command does, `footer` (exit status, docs) closes it.
 */
export function commandHelp(spec: {
  readonly command: string;
  /** How it is run when not as `harness <command>` (a script: `npm run bench --`). */
  readonly invocation?: string;
  readonly flags: FlagSet;
  readonly about: string;
  /** Operands after the flags, as the usage line shows them (`FILE...`). */
  readonly operands?: string;
  readonly footer?: string;
}): string {
  const parts = [
    synopsis(invocationOf(spec), spec.flags, spec.operands),
    spec.about.trimEnd(),
    flagHelp(spec.flags),
  ];
  if (spec.footer !== undefined) parts.push(spec.footer.trimEnd());
  return `${parts.join('\n\n')}\n`;
}

/**
 * Validates raw values with `schema` and turns the first issue into a `usage.invalid_option_value`
 * error naming the flag (exit 2).
 */
function validateFlags<T>(schema: z.ZodType<T>, raw: unknown, command: string): T {
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue?.path.length ? `--${String(issue.path[0]).replaceAll('_', '-')}` : 'options';
  const message = issue?.message ?? 'invalid';
  throw new HarnessError(
    'usage.invalid_option_value',
    `${command}: ${message.startsWith(`${where} `) || message.startsWith(`${where}:`) ? message : `${where}: ${message}`}`,
    { details: { command, option: where } },
  );
}

/** The flags' values out of what `parseArgs` read (kebab-case names), validated (exit 2 on a bad value). */
export function readFlags<F extends FlagSet>(
  flags: F,
  parsed: Readonly<Record<string, unknown>>,
  command: string,
): FlagValues<F> {
  const raw: Record<string, unknown> = {};
  for (const name of Object.keys(flags)) raw[name.replaceAll('-', '_')] = parsed[name];
  return validateFlags(flagSchema(flags), raw, command);
}

export interface ParsedFlags<F extends FlagSet> {
  readonly values: FlagValues<F>;
  readonly positionals: string[];
}

/** A command's flags and what its help says around them. */
export interface CommandSpec<F extends FlagSet> {
  readonly command: string;
  /** How it is run when not as `harness <command>` (a script: `npm run bench --`). */
  readonly invocation?: string;
  readonly flags: F;
  readonly about: string;
  /** Operands after the flags, as the usage line shows them (`FILE...`); without it none are taken. */
  readonly operands?: string;
  /** A repeatable flag whose values may follow it as separate words: `--episodes a b`. */
  readonly trailing?: keyof F & string;
  readonly footer?: string;
}

/**
 * Parses a command's argv against its flags. `--help` writes the command's help and gives `undefined`;
 * otherwise the validated values and the operands. A word no flag takes is an operand when the spec has
 * operands, a value of the `trailing` flag right after it, and otherwise a usage error; after `--json`
 * it says that the switch takes no value (docs/cli.md).
 */
export function parseFlags<F extends FlagSet>(
  argv: readonly string[],
  spec: CommandSpec<F>,
  io: { stdout: { write(chunk: string): unknown } },
): ParsedFlags<F> | undefined {
  const parsed = parseCliArgs(
    {
      args: [...argv],
      options: parseArgsOptions(spec.flags),
      strict: true,
      allowPositionals: true,
      tokens: true,
    },
    { command: spec.command, invocation: invocationOf(spec) },
  );
  const read: Record<string, unknown> = { ...parsed.values };
  if (read.help === true) {
    io.stdout.write(commandHelp(spec));
    return undefined;
  }
  const positionals: string[] = [];
  const trailing: string[] = [];
  let after: string | undefined;
  for (const token of parsed.tokens ?? []) {
    if (token.kind === 'option') after = token.name;
    else if (token.kind === 'option-terminator') after = undefined;
    else if (spec.trailing !== undefined && after === spec.trailing) trailing.push(token.value);
    else if (spec.operands !== undefined) positionals.push(token.value);
    else if (after === 'json' && spec.flags.json?.type === 'boolean')
      throw jsonSwitchValueError(spec.command, token.value);
    else
      throw new HarnessError(
        'usage.unexpected_argument',
        `${spec.command}: unexpected argument '${token.value}'; expected options only (${invocationOf(spec)} --help)`,
        { details: { command: spec.command, argument: token.value } },
      );
  }
  if (spec.trailing !== undefined && trailing.length > 0)
    read[spec.trailing] = [...((read[spec.trailing] as string[] | undefined) ?? []), ...trailing];
  return { values: readFlags(spec.flags, read, spec.command), positionals };
}

/**
 * `parseFlags` for a script run outside the `harness` binary (`npm run bench`, …): the values, or the
 * exit code to end with, reported as cli/main.ts reports a command's errors: 0 once `--help` is written,
 * 2 once a usage error's line is on stderr.
 */
export function parseScriptFlags<F extends FlagSet>(
  argv: readonly string[],
  spec: CommandSpec<F>,
  io: { stdout: { write(chunk: string): unknown }; stderr: { write(chunk: string): unknown } },
): FlagValues<F> | number {
  try {
    const parsed = parseFlags(argv, spec, io);
    return parsed === undefined ? EXIT.ok : parsed.values;
  } catch (error) {
    io.stderr.write(errorText(error));
    return exitCodeFor(error);
  }
}
