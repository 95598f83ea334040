import { z } from 'zod';
import { LeafRefSchema, SampleStatusSchema } from '../../contracts/wire-sample.ts';

/**
 * The JSON that `miles-bridge/convert_dumps.py` writes from a Miles run's `--dump-details` folder
 * (radixark/miles@31f1ca96 miles/ray/rollout/debug_data.py, miles/utils/train_dump_utils.py;
 * docs/gpu-smoke.md). Objects are loose: Miles adds fields over time, and the validator
 * reads only what it checks. Containers were tensors, ndarrays or lists; the converter made them lists.
 */

/** `metadata` of a dumped sample: the server's `leaf` reference is all the validator relies on. */
const DumpSampleMetadataSchema = z.looseObject({
  leaf: LeafRefSchema.optional(),
});

/** One `Sample.to_dict()` from `rollout_data/<step>.pt`: raw reward, server loss mask, no normalisation. */
const DumpSampleSchema = z.looseObject({
  group_index: z.number().int().nullable(),
  index: z.number().int().nullable(),
  /** Shared by the siblings of a compacted rollout; null for a single-leaf rollout (falls back to `index`). */
  rollout_id: z.number().int().nullable().default(null),
  tokens: z.array(z.number().int()),
  response_length: z.number().int().nonnegative(),
  /** Per response token; null means "all ones" to Miles' conversion. */
  loss_mask: z.array(z.number().int().min(0).max(1)).nullable(),
  /** Raw reward: a number, a dict read through `--reward-key`, or null for an aborted row. */
  reward: z.union([z.number(), z.record(z.string(), z.unknown())]).nullable(),
  status: SampleStatusSchema,
  remove_sample: z.boolean().default(false),
  metadata: DumpSampleMetadataSchema.default({}),
});
export type DumpSample = z.infer<typeof DumpSampleSchema>;

export const RolloutDumpSchema = z.object({
  kind: z.literal('rollout_data'),
  source: z.string(),
  /**
   * The step (Miles calls it rollout_id). Eval dumps (`eval_<n>.pt`) carry the same plain integer, so the
   * loader tells them apart by file name; a string is accepted but a training dump must hold a number.
   */
  rollout_id: z.union([z.number().int().nonnegative(), z.string()]),
  metadata: z.record(z.string(), z.unknown()),
  samples: z.array(DumpSampleSchema),
});
export type RolloutDump = z.infer<typeof RolloutDumpSchema>;

const numberList = z.array(z.number().nullable());

/** One rank's shard of `train_data/<step>_<rank>.pt`, after training. */
const TrainShardColumnsSchema = z.looseObject({
  tokens: z.array(z.array(z.number().int())),
  loss_masks: z.array(z.array(z.number())),
  response_lengths: z.array(z.number().int()),
  /** Normalised (GRPO) rewards, one per row. */
  rewards: numberList,
  /** Batch-global raw rewards (every row of the step, not just this shard's). */
  raw_reward: numberList.optional(),
  sample_indices: z.array(z.number().int()).optional(),
  rollout_ids: z.array(z.number().int()).optional(),
  rollout_mask_sums: numberList.optional(),
  truncated: numberList.optional(),
});

export const TrainDumpSchema = z.object({
  kind: z.literal('train_data'),
  source: z.string(),
  rollout_id: z.number().int().nonnegative(),
  rank: z.number().int().nonnegative(),
  cp_rank: z.number().int().nonnegative().default(0),
  cp_size: z.number().int().positive().default(1),
  qkv_format: z.string().nullable().default(null),
  rollout_data: TrainShardColumnsSchema,
});
export type TrainDump = z.infer<typeof TrainDumpSchema>;

/** Everything converted from one run, by step. */
export interface ConvertedDumps {
  readonly rollout: readonly RolloutDump[];
  readonly train: readonly TrainDump[];
}

/**
 * One line of `trajectory/<step>.jsonl`: a sample's raw conversation, written before the `.pt` and
 * removed from the sample's metadata there (radixark/miles@31f1ca96 miles/ray/rollout/debug_data.py
 * `trajectory_rows`, `save_debug_trajectory_data`). Only samples with `metadata["messages"]` have a row.
 */
export const TrajectoryRowSchema = z.looseObject({
  sample_index: z.number().int().nullable(),
  /**
   * The newer writer only (sii-avalanche/miles@4d412b5a miles/ray/rollout/debug_data.py `trajectory_rows`):
   * the sample's place among the step's samples with its `index`, counted over every sample, with or
   * without messages. 31f1ca96's rows lack it: the k-th row of an index is then its k-th sample with messages.
   */
  sample_occurrence: z.number().int().nonnegative().optional(),
  group_index: z.number().int().nullable(),
  status: z.string(),
  reward: z.number().nullable(),
  prompt: z.unknown(),
  messages: z.array(z.looseObject({ role: z.string(), content: z.unknown().optional() })),
});
export type TrajectoryRow = z.infer<typeof TrajectoryRowSchema>;

/**
 * Which Miles wrote a dump, read off its samples' `weight_versions`: radixark/miles@31f1ca96 keeps a list
 * of version strings (miles/utils/types.py `Sample.weight_versions: list[str]`); the newer Miles one list
 * of span dicts `{version, abs_start, abs_end}` per call (sii-avalanche/miles@4d412b5a miles/utils/types.py
 * `Sample.to_dict`: `[call.to_dicts() for call in self.weight_versions]`, as its samples/codec.py sends
 * them). A dump whose samples carry no versions (or only calls without spans) says neither.
 */
export const DumpFormatSchema = z.enum(['miles-31f1ca96', 'miles-next-spans', 'undetermined']);
export type DumpFormat = z.infer<typeof DumpFormatSchema>;

const isSpan = (span: unknown): boolean => span !== null && typeof span === 'object' && 'version' in span;

export function dumpFormatOf(samples: readonly Record<string, unknown>[]): DumpFormat {
  for (const s of samples) {
    const versions = s.weight_versions;
    if (!Array.isArray(versions) || versions.length === 0) continue;
    const first = versions[0];
    if (typeof first === 'string' || typeof first === 'number') return 'miles-31f1ca96';
    if (versions.some((call) => Array.isArray(call) && call.some(isSpan))) return 'miles-next-spans';
  }
  return 'undetermined';
}
