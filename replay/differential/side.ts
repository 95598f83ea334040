import { z } from 'zod';

/**
 * What one side of the differential (Miles' rollout path, or the harness's driver) produced for one
 * step, in one shape: miles-bridge/rollout_driver.py writes it for Miles, `harnessSide` builds it
 * from the replay's step outcome. Samples are the flattened post-filter rows in the side's own order;
 * `train` is aligned with them (what `convert_samples_to_train_data` gives the trainer).
 */

export const SideSampleSchema = z.object({
  group_index: z.number().int().nullable(),
  index: z.number().int().nullable(),
  rollout_id: z.number().int().nullable(),
  instance_id: z.string().nullable(),
  /** The variant the Harbor mock played (`agent_metrics.harness.variant`); null without a `/run` result. */
  variant: z.number().int().nullable(),
  status: z.string(),
  reward: z.number().nullable(),
  /** How many ids `tokens` holds, and their sha256 (decimal ids joined by commas). */
  tokens: z.number().int().nonnegative(),
  tokens_digest: z.string(),
  response_length: z.number().int().nonnegative(),
  loss_mask: z.array(z.number().int()).nullable(),
  remove_sample: z.boolean(),
});
export type SideSample = z.infer<typeof SideSampleSchema>;

const numbers = z.array(z.number());

/** The train rows, position by position with the samples. */
export const SideTrainSchema = z.object({
  /** Miles' `rewards` (the GRPO-normalised reward: the advantage every token of the row gets). */
  rewards: numbers,
  raw_reward: numbers,
  truncated: numbers,
  sample_indices: numbers,
  rollout_ids: numbers,
  rollout_mask_sums: numbers,
  response_lengths: numbers,
  /** `len(tokens)` and `sum(loss_mask)` per row. */
  tokens: numbers,
  loss_mask_sums: numbers,
});

/** A logged value: numbers, and whatever else a tracker was handed (NaN and ±Infinity included). */
export const MetricValueSchema = z.union([z.number(), z.string(), z.boolean(), z.null()]);
export type MetricValue = z.infer<typeof MetricValueSchema>;

export const SideStepSchema = z.object({
  rollout_id: z.number().int().nonnegative(),
  samples: z.array(SideSampleSchema),
  /** Null when the conversion raised (the harness keeps the step and says why in `error`). */
  train: SideTrainSchema.nullable(),
  /** Every metric the side logs for the step, by key. */
  metrics: z.record(z.string(), MetricValueSchema),
  /** Groups drawn in the step beyond the guard (Miles' refill has no bound), when it tripped. */
  refill_exceeded: z.number().int().nonnegative().nullable().default(null),
  error: z.string().nullable().default(null),
  wall_s: z.number(),
});
export type SideStep = z.infer<typeof SideStepSchema>;

/** The digest both sides give `tokens` (the Python driver computes the same). */
export async function tokensDigest(tokens: readonly number[]): Promise<string> {
  const bytes = new TextEncoder().encode(tokens.join(','));
  const hash = await crypto.subtle.digest('SHA-256', bytes);
  return Buffer.from(hash).toString('hex');
}
