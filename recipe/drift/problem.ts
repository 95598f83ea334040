import { z } from 'zod';

/** Stable rule codes of the surface check; tests and CI assert on these, never on messages. */
export const PROBLEM_RULES = [
  /** The option string is not registered (and no prefix family or applied overlay has it). */
  'unknown-flag',
  /** A switch (store_true/store_false/boolean_optional) was given a value, as `--x v` or `--x=v`. */
  'switch-given-value',
  /** A flag that needs at least one value got none. */
  'missing-value',
  /** A flag got a number of values its `nargs` does not allow (too few but not zero, or too many). */
  'nargs',
  /** A value outside the flag's `choices` (or outside the values Miles' validation accepts). */
  'not-in-choices',
  /** A value that the flag's `type=int`/`type=float` converter rejects. */
  'invalid-type',
  /** A second occurrence of a non-append flag (or of another name for the same `dest`) with another value: the last silently wins. */
  'repeated',
  /** The same switch, or the same flag with the same values, given twice: harmless, a warning (Miles' own example scripts do it). */
  'repeated-same',
  /** A flag that exists only under a condition this argv does not meet (generate hook, FSDP backend). */
  'out-of-scope',
  /** A bare value that no flag takes (before the first flag, or after `--`). */
  'unexpected-positional',
  /** A flag the checked Miles no longer has under this name: it was renamed (the hint names the new one). */
  'renamed',
] as const;
export const ProblemRule = z.enum(PROBLEM_RULES);

/** Rules that warn without failing the check (exit 0). */
export const WARNING_RULES: readonly ProblemRule[] = ['repeated-same'];
export type ProblemRule = z.infer<typeof ProblemRule>;

export const Problem = z.object({
  /** The option string as written (or the stray token, for `unexpected-positional`). */
  flag: z.string(),
  rule: ProblemRule,
  /** The file:line where Miles (or Megatron, SGLang) defines the flag; null when nothing defines it. */
  where: z.string().nullable(),
  message: z.string(),
  /** Index of the offending token in the argv. */
  index: z.number().int().nonnegative(),
  /** The values involved, when the rule is about values. */
  values: z.array(z.string()).optional(),
  /** Near names, for `unknown-flag`. */
  suggestions: z.array(z.string()).optional(),
  /** What would make it pass, when known (an overlay that has the flag, a condition to meet). */
  hint: z.string().optional(),
});
export type Problem = z.infer<typeof Problem>;

export const SURFACE_VERDICT_FORMAT = 'harness-surface-verdict/1';

/** The machine verdict of `harness surface check --json`. */
export const SurfaceVerdict = z.object({
  format: z.literal(SURFACE_VERDICT_FORMAT),
  ok: z.boolean(),
  surface: z.object({
    path: z.string(),
    miles_commit: z.string(),
    /** Which Miles: `31f1ca96`, or `newer` (31f1ca96's surface with a newer Miles' session arguments). */
    miles: z.string().optional(),
    /** The newer Miles the surface follows, `owner/repo@commit`, when it is not 31f1ca96. */
    newer_source: z.string().optional(),
  }),
  overlays: z.array(z.string()),
  argv: z.array(z.string()),
  flags_checked: z.number().int().nonnegative(),
  problems: z.array(Problem),
  /** Flags the argv leaves unset whose default the checked (newer) Miles changed. */
  defaults_changed: z
    .array(z.object({ flag: z.string(), was: z.unknown(), now: z.unknown(), where: z.string() }))
    .optional(),
  /** Findings that do not fail the check (rules in WARNING_RULES). */
  warnings: z.array(Problem),
});
export type SurfaceVerdict = z.infer<typeof SurfaceVerdict>;
