import { z } from 'zod';
import { SmokeCheckSchema } from '../../replay/run-check/check-result.ts';
import { PreconditionSchema } from '../preconditions/precondition.ts';
import { ThresholdResultSchema } from '../thresholds/apply-thresholds.ts';

const SmokeStatusSchema = z.enum([
  /** Ran to the end; every check and threshold passed. */
  'passed',
  /** Ran to the end; a check or threshold failed. */
  'failed',
  'preconditions_unmet',
  'launch_failed',
  'timed_out',
  'interrupted',
  /** The launcher succeeded but its dumps could not be converted or read. */
  'dumps_unusable',
]);
export type SmokeStatus = z.infer<typeof SmokeStatusSchema>;

/**
 * `report.json`, written next to the launcher's log whatever the outcome (a failed run leaves a partial
 * one). `checks` follows the replay's check vocabulary; `thresholds` the thresholds file.
 */
export const SmokeReportSchema = z.object({
  run_id: z.string(),
  status: SmokeStatusSchema,
  exit_code: z.number().int(),
  started_at: z.string(),
  finished_at: z.string(),
  paths: z.object({
    run_dir: z.string(),
    log_file: z.string(),
    harbor_log: z.string(),
    report_file: z.string(),
  }),
  preconditions: z.array(PreconditionSchema),
  launcher: z
    .object({
      outcome: z.enum(['exited', 'timeout', 'aborted', 'spawn_failed']),
      exit_code: z.number().int().nullable(),
      signal: z.string().nullable(),
      duration_s: z.number(),
      forced_kill: z.boolean(),
    })
    .nullable(),
  harbor: z
    .object({
      trials: z.number().int(),
      exit_statuses: z.record(z.string(), z.number().int()),
      summarizations: z.number().int(),
      trials_without_summarization: z.number().int(),
    })
    .nullable(),
  conversion: z.object({ exit_code: z.number().int().nullable(), message: z.string() }).nullable(),
  /** The `train/step` values found in the launcher's log. */
  train_steps: z.array(z.number()),
  /** How many distinct metrics the log held. */
  metrics_found: z.number().int(),
  checks: z.array(SmokeCheckSchema),
  thresholds: z.array(ThresholdResultSchema),
  /** Why the run did not pass, one sentence each. */
  problems: z.array(z.string()),
});
export type SmokeReport = z.infer<typeof SmokeReportSchema>;
