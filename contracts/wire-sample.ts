import { z } from 'zod';

/**
 * Shapes shared by the fake session server, its clients, the replay and the GPU dump validator.
 * Facts: radixark/miles@31f1ca96 miles/rollout/session/v2/utils.py `tree_metadata` (tree metadata) and
 * miles/rollout/session/samples/codec.py `COMPUTED_FIELDS_V2` (wire fields).
 */

/** Sample status strings the wire accepts (radixark/miles@31f1ca96 miles/rollout/session/samples/codec.py). */
export const SampleStatusSchema = z.enum(['pending', 'completed', 'truncated', 'aborted', 'failed']);
export type SampleStatus = z.infer<typeof SampleStatusSchema>;

/** One node of the tree metadata (`metadata.tree.nodes[]`); `id == seq`. */
export const TreeNodeSchema = z.object({
  id: z.number().int().nonnegative(),
  parent: z.number().int().nonnegative().nullable(),
  seq: z.number().int().nonnegative(),
  truncated: z.boolean(),
  committed_at: z.number(),
  /** Half-open `[start, end)` indices into the node's token snapshot. */
  completion_span: z.tuple([z.number().int().nonnegative(), z.number().int().nonnegative()]),
  num_tokens: z.number().int().nonnegative(),
  response_id: z.string().nullable(),
  /** Newer Miles (profile switch `turnArgs`): the node's resolved request without `input_ids`, `messages`. */
  turn_args: z.record(z.string(), z.unknown()).optional(),
});
export type TreeNode = z.infer<typeof TreeNodeSchema>;

export const TreeLeafSchema = z.object({
  node_id: z.number().int().nonnegative(),
  path_node_ids: z.array(z.number().int().nonnegative()),
});

export const TreeMetadataSchema = z.object({
  nodes: z.array(TreeNodeSchema),
  leaves: z.array(TreeLeafSchema),
});
export type TreeMetadata = z.infer<typeof TreeMetadataSchema>;

/**
 * `metadata.leaf` on every sample the samples op returns (miles/rollout/session/v2/utils.py
 * `build_leaf_material`).
 */
export const LeafRefSchema = z.object({
  node_id: z.number().int().nonnegative(),
  parent: z.number().int().nonnegative().nullable(),
  path_node_ids: z.array(z.number().int().nonnegative()),
  response_id: z.string().nullable(),
});
export type LeafRef = z.infer<typeof LeafRefSchema>;

/** An N-d int32 tensor as decoded from the wire (routed experts, indexer top-k). */
export const Int32TensorSchema = z.object({
  shape: z.array(z.number().int().nonnegative()),
  data: z.array(z.number().int()),
});

/**
 * Newer Miles (profile switch `samplesWire: 'spans'`; sii-avalanche/miles@4d412b5a miles/utils/types.py
 * `WeightVersionSpan`): one span of a call's output generated under one weight version, absolute token
 * positions in the turn's `prompt + output`. A sample's `weight_versions` is then one list of spans per call
 * (31f1ca96: one version string per call).
 */
export const WeightVersionSpanSchema = z.object({
  version: z.unknown(),
  abs_start: z.number().int(),
  abs_end: z.number().int(),
});
export type WeightVersionSpan = z.infer<typeof WeightVersionSpanSchema>;

/** Newer Miles: `Sample.SpecInfo.to_dict()`, on every sample of the newer wire. */
export const SpecInfoSchema = z.object({
  spec_num_correct_drafts: z.number().int(),
  spec_num_proposed_drafts: z.number().int(),
  spec_verify_ct: z.number().int(),
  completion_tokens: z.number().int(),
});
export type SpecInfo = z.infer<typeof SpecInfoSchema>;

/** One sample as decoded from the samples op's safetensors reply (either profile's wire). */
export const WireSampleSchema = z.object({
  tokens: z.array(z.number().int()),
  response: z.string(),
  response_length: z.number().int().nonnegative(),
  loss_mask: z.array(z.number().int().min(0).max(255)).nullable(),
  rollout_log_probs: z.array(z.number()).nullable(),
  rollout_routed_experts: Int32TensorSchema.nullable(),
  rollout_indexer_topk: Int32TensorSchema.nullable(),
  status: SampleStatusSchema,
  /** 31f1ca96: a version per call; newer: a list of `WeightVersionSpan` per call. */
  weight_versions: z.array(z.unknown()),
  /** Newer wire only (after `weight_versions`); absent on 31f1ca96's. */
  spec_info: SpecInfoSchema.optional(),
  prefix_cache_info: z.object({ cached_tokens: z.number().int(), total_prompt_tokens: z.number().int() }),
  metadata: z.record(z.string(), z.unknown()),
  reward: z.unknown(),
});
export type WireSample = z.infer<typeof WireSampleSchema>;

export const EmptyReasonSchema = z.enum(['no_records', 'all_truncated']).nullable();
export type EmptyReason = z.infer<typeof EmptyReasonSchema>;

/** The whole decoded samples reply. */
export interface SamplesReply {
  readonly samples: WireSample[];
  /** GET-style session metadata (with `tree`, and `agent` when the request carried metadata). */
  readonly sessionMetadata: Record<string, unknown> & { tree: TreeMetadata };
  readonly emptyReason: EmptyReason;
}
