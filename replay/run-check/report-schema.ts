import { z } from 'zod';
import { TokenAccountingSchema } from '../accounting/schema.ts';
import { SkippedCheckSchema, VerdictSchema } from '../checks/types.ts';
import { SmokeCheckSchema } from './check-result.ts';
import { DumpFormatSchema } from './dump-schema.ts';
import { GrpoComparisonSchema } from './grpo-vs-train.ts';
import { LostBranchSchema } from './lost-branches.ts';
import { MetricsComparisonSchema } from './metrics-vs-log.ts';

/**
 * Bad input, each named with its step and file; the rest of the run is still checked (issue 36 item 6).
 * `missing_step`: a step between the first and the last dumped one (or one the log names) has no
 * rollout file; `missing_rank_file`: a step lacks a rank other steps have; `unreadable_file`: torch
 * cannot load it (truncated, not a pickle); `invalid_file`: it loads but is not Miles' layout;
 * `trajectory_row_without_sample`: a trajectory row names a sample the step's rollout dump lacks.
 */
export const RunProblemKindSchema = z.enum([
  'missing_step',
  'missing_rollout_file',
  'missing_rank_file',
  'unreadable_file',
  'invalid_file',
  'invalid_trajectory_row',
  'trajectory_row_without_sample',
  'step_not_checkable',
]);

export const RunProblemSchema = z.object({
  kind: RunProblemKindSchema,
  step: z.number().int().nullable(),
  file: z.string().nullable(),
  detail: z.string(),
});
export type RunProblem = z.infer<typeof RunProblemSchema>;

/** One step's figures (no token arrays: a 100-step run's report stays small; the HTML has the tokens). */
export const RunStepSchema = z.object({
  step: z.number().int(),
  samples: z.number().int(),
  rollouts: z.number().int(),
  groups: z.number().int(),
  train_ranks: z.array(z.number().int()),
  trajectory_rows: z.number().int(),
  non_finite_values: z.number().int(),
  accounting: TokenAccountingSchema,
  /** Null when the step has no train rows (a `debug_rollout_only` run, or its rank files are missing). */
  grpo: GrpoComparisonSchema.nullable(),
  /** Null without `--log`. */
  metrics: MetricsComparisonSchema.nullable(),
  normalization_error: z.string().nullable(),
  lost_branches: z.array(LostBranchSchema),
});
export type RunStep = z.infer<typeof RunStepSchema>;

export const CheckRunReportSchema = z.object({
  format: z.literal('harness-check-run/1'),
  dir: z.string(),
  log: z.string().nullable(),
  /** Which Miles wrote the dumps, read off the samples (dump-schema.ts `dumpFormatOf`). */
  dump_format: DumpFormatSchema,
  /** The Miles profile the format names, under which the checks and metrics ran (dump-profile.ts). */
  miles_profile: z.object({ name: z.string(), commits: z.array(z.string()) }),
  layout: z.array(z.string()),
  shape: z
    .object({
      n_samples_per_prompt: z.number().int(),
      rollout_batch_size: z.number().int(),
      global_batch_size: z.number().int(),
      dp_size: z.number().int(),
      /** Where each came from: a flag, or read off the first checkable step. */
      inferred: z.array(z.string()),
    })
    .nullable(),
  verdict: VerdictSchema,
  problems: z.array(RunProblemSchema),
  steps: z.array(RunStepSchema),
  /** The replay's invariant checks (`source: replay`) and the dump-only ones (`dumps`, `logs`). */
  checks: z.array(SmokeCheckSchema),
  skipped_checks: z.array(SkippedCheckSchema),
  totals: z.object({
    steps: z.number().int(),
    samples: z.number().int(),
    grpo_values_compared: z.number().int(),
    grpo_mismatches: z.number().int(),
    metrics_compared: z.number().int(),
    metric_mismatches: z.number().int(),
    lost_branches: z.number().int(),
  }),
});
export type CheckRunReport = z.infer<typeof CheckRunReportSchema>;
