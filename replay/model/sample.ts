import { z } from 'zod';
import { bitArray, finiteArray, intArray } from '../../common/number-arrays.ts';
import { type LeafRef, LeafRefSchema, SampleStatusSchema } from '../../contracts/wire-sample.ts';
import { GroupIndexSchema, RolloutIdSchema, SampleIndexSchema } from './ids.ts';

/**
 * The part of Miles' `Sample` (radixark/miles@31f1ca96 miles/utils/types.py: Sample) that grouping,
 * normalisation, the metrics and the checks read. The driver builds it by overlaying a decoded wire sample
 * on the input sample; the GPU smoke suite builds it from a converted `rollout_data/<step>.pt` dump.
 */
export const ReplaySampleSchema = z.object({
  group_index: GroupIndexSchema.nullable(),
  index: SampleIndexSchema.nullable(),
  rollout_id: RolloutIdSchema.nullable(),
  /** Prompt + response ids; the response is the last `response_length` tokens. */
  tokens: intArray(),
  response_length: z.number().int().nonnegative(),
  /** One entry per response token; `null` means all ones (filled in conversion). */
  loss_mask: bitArray().nullable(),
  rollout_log_probs: finiteArray().nullable(),
  status: SampleStatusSchema,
  /** Raw reward; `null` until the RM (or the session server's reward broadcast) sets it. */
  reward: z.number().nullable(),
  remove_sample: z.boolean(),
  metadata: z.record(z.string(), z.unknown()),
  /**
   * What only the rollout-side metrics read (replay/metrics/rollout-log.ts), absent where the source
   * does not have it: the response text, the policy's prefix-cache counts summed over the turns, the
   * weight versions the turns reported, `agent_metrics.total_tool_time` of the rollout, and the Python
   * type of `reward` (absent: float, what Harbor's agent server and `reward_func`'s default give).
   */
  response: z.string().optional(),
  prefix_cache_info: z
    .object({ cached_tokens: z.number().int(), total_prompt_tokens: z.number().int() })
    .optional(),
  weight_versions: z.array(z.unknown()).optional(),
  non_generation_time: z.number().optional(),
  reward_type: z.enum(['int', 'float']).optional(),
  /**
   * The LoRA adapter identity newer Miles scopes episode metrics by (Multi-LoRA data sources, PR #2778);
   * absent in the recipe, which trains no adapter.
   */
  adapter: z.string().nullable().optional(),
});
export type ReplaySample = z.infer<typeof ReplaySampleSchema>;

/** `metadata.leaf` when the session server put a well-formed one there, else null. */
export function leafOf(sample: Pick<ReplaySample, 'metadata'>): LeafRef | null {
  const parsed = LeafRefSchema.safeParse(sample.metadata.leaf);
  return parsed.success ? parsed.data : null;
}

/** Index of the first response token in `tokens`. */
export function responseStart(sample: Pick<ReplaySample, 'tokens' | 'response_length'>): number {
  return sample.tokens.length - sample.response_length;
}

/**
 * The loss mask as trained: a null mask is all ones and `remove_sample` zeroes it (radixark/miles@31f1ca96
 * miles/ray/rollout/train_data_conversion.py).
 */
export function effectiveLossMask(
  sample: Pick<ReplaySample, 'loss_mask' | 'response_length' | 'remove_sample'>,
): number[] {
  if (sample.remove_sample) return new Array<number>(sample.response_length).fill(0);
  return sample.loss_mask ?? new Array<number>(sample.response_length).fill(1);
}
