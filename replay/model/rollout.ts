import { z } from 'zod';
import { TreeMetadataSchema } from '../../contracts/wire-sample.ts';
import { GroupIndexSchema, RolloutIdSchema, SampleIndexSchema } from './ids.ts';
import { ReplaySampleSchema } from './sample.ts';

/**
 * One request the policy answered, as far as the checks need it: joined to a tree node by
 * `response_id` (docs/architecture.md "Policy request log"), it tells a re-sent request (a superseded
 * retry) from a different one (a lost completion). The prompt is kept as digests and lengths
 * (contracts/request-digest.ts), not as the arrays: that is all the comparison needs.
 */
export const PolicyRequestSchema = z.object({
  response_id: z.string().nullable(),
  /** sha256 of the messages' canonical JSON (`messagesDigest`). */
  messages_digest: z.string(),
  /** The opening of the last message's text (`lastMessageHead`), to recognise the summary prompt. */
  last_message_head: z.string(),
  /** How many ids the prompt had and their digest (`tokenIdsDigest`), when the log has them. */
  input_ids_length: z.number().int().nullable(),
  input_ids_digest: z.string().nullable(),
  /** The messages themselves, only when the replay was told to keep them (`keepRequestMessages`). */
  messages: z.array(z.unknown()).optional(),
  /** The reply's message, kept with `messages`. */
  reply: z.unknown().optional(),
  /** The completion ids the backend returned, when the log has them. */
  output_ids: z.array(z.number().int()).nullable(),
});
export type PolicyRequest = z.infer<typeof PolicyRequestSchema>;

/**
 * The episode script a trial played, as Harbor's mock says in its `/run` result
 * (`agent_metrics.harness`, fakes/harbor/run-protocol.ts): the script's instance id, the variant, and
 * whether the pool stood in because no script has the prompt's instance id (docs/episodes.md).
 */
export const PlayedEpisodeSchema = z.object({
  script: z.string(),
  variant: z.number().int().nonnegative(),
  pool_fallback: z.boolean(),
});
export type PlayedEpisode = z.infer<typeof PlayedEpisodeSchema>;

/**
 * One rollout (episode): one execution of the agent on one prompt copy, and the samples it produced.
 * `tree` and `requests` are null when the source does not have them (a Miles dump has neither).
 */
export const RolloutSchema = z.object({
  group_index: GroupIndexSchema,
  index: SampleIndexSchema,
  /** As stamped by `agentic_tool_call.generate`: shared by siblings, null for a single-leaf rollout. */
  rollout_id: RolloutIdSchema.nullable(),
  samples: z.array(ReplaySampleSchema),
  aborted: z.boolean(),
  /**
   * Why the driver put an ABORTED placeholder here (`no_records`, `all_truncated`, `collect_failed`,
   * `session_server_worker_gone`).
   */
  abort_reason: z.string().nullable(),
  /** Null when `/run` gave no result (timeout, error, cancel) or the source has none (a Miles dump). */
  episode: PlayedEpisodeSchema.nullable(),
  tree: TreeMetadataSchema.nullable(),
  requests: z.array(PolicyRequestSchema).nullable(),
  /** `host:port` of the session-server worker that owned the session (absent where the source has none). */
  session_server_id: z.string().nullable().optional(),
});
export type Rollout = z.infer<typeof RolloutSchema>;

/** Why a whole prompt group left the batch. */
export const DropReasonSchema = z.enum(['group_has_aborted', 'task_raised']);
export type DropReason = z.infer<typeof DropReasonSchema>;

/** One prompt group: `n_samples_per_prompt` rollouts of one prompt. */
export const GroupSchema = z.object({
  group_index: GroupIndexSchema,
  rollouts: z.array(RolloutSchema),
  /** Null when the group is kept; otherwise the dynamic filter (or a raised task) dropped it. */
  dropped: DropReasonSchema.nullable(),
});
export type Group = z.infer<typeof GroupSchema>;
