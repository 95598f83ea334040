/**
 * Every error the harness raises on purpose. `code` is stable and is what tests assert on; `message` is
 * one `[harness]` line for people; facts about the failure go in `details`, typed per code.
 *
 * Codes follow one scheme, `<area>.<snake_case>`: the area says where the failure lives (`usage` the
 * command line, `config` an input file or setting, `replay`, `grpo`, `wire`, `dumps`, `threshold`, `run`,
 * `conformance`, `precondition` what a gated command needs from the machine),
 * the rest what is wrong. The area alone decides how a command ends (`AREA_KIND` below): a new area does
 * not compile until it is given a kind there. docs/cli.md lists every code with its exit code.
 */

import { EXIT } from './exit-codes.ts';

/** Carries a code's details type for the compiler; the value itself is never read. */
function facts<T>(): T {
  return undefined as T;
}

/**
 * Every code the harness raises, each declared once with the facts it carries. Fields are what the
 * raising code knows; all are optional to read.
 */
const ERROR_DETAILS = {
  // The command line (exit 2).
  'usage.unknown_option': facts<{ command?: string; option?: string }>(),
  'usage.unexpected_argument': facts<{ command?: string; argument?: string }>(),
  'usage.invalid_option_value': facts<{
    command?: string;
    option?: string;
    value?: string;
    issues?: unknown;
  }>(),
  'usage.missing_argument': facts<{ command?: string; expected?: string }>(),
  'usage.conflicting_options': facts<{ options: readonly string[] }>(),
  'usage.unknown_subcommand': facts<{ command: string; subcommand: string }>(),
  'usage.option_owned_by_smoke': facts<{ option: string }>(),
  'usage.unknown_overlay': facts<{ unknown: readonly string[]; known: readonly string[] }>(),
  'usage.launcher_option': facts<Record<string, unknown>>(),
  'usage.recipe_side': facts<{ side?: string }>(),
  'config.recipe_file_unreadable': facts<{ path: string; reason?: string }>(),
  'usage.shell_unsupported': facts<{ construct: string; text?: string }>(),
  'usage.no_stdin': facts<Record<string, never>>(),
  'usage.bad_runtime_env': facts<Record<string, never>>(),
  'usage.empty_recipe': facts<Record<string, never>>(),
  'usage.bad_json': facts<Record<string, never>>(),
  'usage.bad_argv': facts<Record<string, never>>(),
  'usage.command_too_long': facts<{ bytes: number; limit: number }>(),
  'usage.miles_profile_contradicts_checkout': facts<{ flag: string; checkout: string }>(),
  // Inputs, settings and the environment they name (exit 2).
  'config.invalid': facts<{ issues?: unknown; field?: string }>(),
  'config.input_unreadable': facts<{ option?: string; path: string; reason: string }>(),
  'config.output_unwritable': facts<{ option: string; path: string }>(),
  'config.listen_failed': facts<{ host: string; port: number; reason: string }>(),
  'config.target_unreachable': facts<{ url: string; reason: string }>(),
  'config.episode_invalid': facts<{ source?: string; issues?: unknown }>(),
  'config.episodes_dir': facts<{ dir: string }>(),
  'config.episodes_empty': facts<Record<string, never>>(),
  'config.episodes_missing': facts<{ path?: string }>(),
  'config.episode_duplicate': facts<{ instance_id: string }>(),
  'config.session_async_hook': facts<Record<string, never>>(),
  'config.trace_invalid': facts<{ source?: string; path?: string }>(),
  'config.trace_unreadable': facts<{ path: string }>(),
  'config.trace_no_expected': facts<{ path: string }>(),
  'config.master_addr_required': facts<Record<string, never>>(),
  'config.no_tasks': facts<Record<string, never>>(),
  'config.run_dir_exists': facts<{ run_dir: string }>(),
  'config.threshold_syntax': facts<{ expression: string; column?: number; file?: string; line?: number }>(),
  'config.thresholds_empty': facts<{ file: string }>(),
  'config.thresholds_unreadable': facts<{ file: string }>(),
  'config.surface_invalid': facts<{ path?: string; issues?: unknown }>(),
  'config.surface_unreadable': facts<{ path: string }>(),
  'config.python_missing': facts<{ python: string }>(),
  'config.launcher_reader_failed': facts<{
    launcher: string;
    python: string;
    exitCode?: number | undefined;
    stderr: string;
  }>(),
  'config.python_import': facts<Record<string, unknown>>(),
  'config.launcher_import': facts<Record<string, unknown>>(),
  'config.launcher_raised': facts<Record<string, unknown>>(),
  'config.launcher_shape': facts<Record<string, unknown>>(),
  'config.dump_row_unkeyed': facts<{ row: number }>(),
  'config.prompts_invalid': facts<{ source: string; line: number }>(),
  'config.prompts_empty': facts<{ source: string }>(),
  'config.prompts_unreadable': facts<{ path?: string }>(),
  // Failures found while running (exit 1).
  'wire.invalid': facts<{ reason: string }>(),
  'dumps.unreadable': facts<{ file: string }>(),
  'dumps.invalid': facts<{ file?: string; path?: string }>(),
  'dumps.missing': facts<{ dir: string }>(),
  'threshold.missing_step': facts<{ expression: string }>(),
  'threshold.not_boolean': facts<{ expression: string }>(),
  'threshold.type': facts<{ expression: string }>(),
  'threshold.unknown_name': facts<{ expression: string }>(),
  'threshold.unknown_function': facts<{ expression: string }>(),
  'replay.reward_not_numeric': facts<Record<string, never>>(),
  'replay.rollout_id_unset': facts<Record<string, never>>(),
  'replay.interrupted': facts<Record<string, never>>(),
  'replay.metric_reward_none': facts<Record<string, never>>(),
  'grpo.null_reward': facts<{ row: number }>(),
  'grpo.sibling_reward_mismatch': facts<{ rollout_key: string; rows: unknown; rewards: unknown }>(),
  'session.request_failed': facts<Record<string, unknown>>(),
  'run.failed': facts<Record<string, unknown>>(),
  'run.cancelled': facts<Record<string, never>>(),
  'threshold.metric_missing': facts<{ expression: string }>(),
  'conformance.miles_failed': facts<Record<string, never>>(),
  'differential.miles_failed': facts<Record<string, never>>(),
  'config.max_sessions': facts<Record<string, never>>(),
  'config.generator_params': facts<{ source?: string; issues?: unknown }>(),
  'config.tokenizer_file': facts<{ path: string; reason: string }>(),
  // Unmet preconditions of a gated command (exit 3): what the machine lacks, not a bad input.
  'precondition.miles_no_checkout': facts<{ reason: string }>(),
  'precondition.miles_python': facts<{ reason: string }>(),
};

export type HarnessErrorDetails = typeof ERROR_DETAILS;

export type HarnessErrorCode = keyof HarnessErrorDetails;

/**
 * How a code ends a command: `usage` exits 2 (nothing was run), `failure` exits 1 (something failed),
 * `precondition` exits 3 (the machine lacks what a gated command needs: a Miles checkout, a module).
 */
export type ErrorKind = 'usage' | 'failure' | 'precondition';

/** The part of a code before its dot: where the failure lives. */
type ErrorArea = HarnessErrorCode extends `${infer Area}.${string}` ? Area : never;

/** Each area's kind. `satisfies` makes an area without a kind (or a kind for no area) a type error. */
const AREA_KIND = {
  usage: 'usage',
  config: 'usage',
  precondition: 'precondition',
  wire: 'failure',
  dumps: 'failure',
  threshold: 'failure',
  replay: 'failure',
  grpo: 'failure',
  session: 'failure',
  run: 'failure',
  conformance: 'failure',
  differential: 'failure',
} as const satisfies Record<ErrorArea, ErrorKind>;

/** The kind of a code, read off its area. */
export function errorKind(code: HarnessErrorCode): ErrorKind {
  return AREA_KIND[code.slice(0, code.indexOf('.')) as ErrorArea];
}

/** Every code, for docs and tests. */
export const ERROR_CODES = Object.keys(ERROR_DETAILS) as HarnessErrorCode[];

export class HarnessError<C extends HarnessErrorCode = HarnessErrorCode> extends Error {
  readonly code: C;
  /** Typed per code; any other key reads as `unknown`, so a general `HarnessError` can still be inspected. */
  readonly details: Readonly<Partial<HarnessErrorDetails[C]>> & Readonly<Record<string, unknown>>;
  /** The message without the `[harness] ` prefix, for a caller that adds its own context. */
  readonly reason: string;

  constructor(code: C, message: string, options: { details?: HarnessErrorDetails[C]; cause?: unknown } = {}) {
    super(`[harness] ${message}`, options.cause === undefined ? undefined : { cause: options.cause });
    Object.defineProperty(this, 'name', { value: 'HarnessError', enumerable: false });
    this.code = code;
    this.reason = message;
    this.details = Object.freeze({ ...(options.details ?? {}) }) as HarnessError<C>['details'];
  }
}

/** Duck-typed check, so errors from another realm (a worker, a second copy of this module) still count. */
export function isHarnessError(value: unknown): value is HarnessError {
  return (
    value instanceof Error &&
    value.name === 'HarnessError' &&
    typeof (value as { code?: unknown }).code === 'string' &&
    Object.hasOwn(ERROR_DETAILS, (value as unknown as { code: string }).code)
  );
}

/** The exit code for an error: 2 usage/config, 1 a failure, 4 anything the harness did not raise on purpose. */
export function exitCodeFor(error: unknown): number {
  if (!isHarnessError(error)) return EXIT.internal;
  const kind = errorKind(error.code);
  return kind === 'usage' ? EXIT.usage : kind === 'precondition' ? EXIT.precondition : EXIT.failed;
}

/**
 * What a CLI prints for an error: a HarnessError's one line; for anything else (a bug) a line saying so
 * and the stack, so the report can be acted on.
 */
export function errorText(error: unknown): string {
  if (isHarnessError(error)) return `${error.message}\n`;
  const stack = error instanceof Error ? (error.stack ?? error.message) : String(error);
  return `[harness] internal error (exit ${EXIT.internal}); please report it with this stack:\n${stack}\n`;
}
