import { z } from 'zod';
import type { NormalizationConfig } from '../grpo/config.ts';
import type { Group } from '../model/rollout.ts';
import type { SessionRouting } from '../model/session-routing.ts';
import { EvidenceSchema } from './evidence-schema.ts';

/**
 * The six invariant checks of issue 6, the token accounting of issue 11, the agent metrics' logging
 * (issue 25), the session's TITO consistency (issue 26), pass@k's group coverage and the session-server
 * workers' per-session affinity (issue 33), by stable name.
 */
export const CheckNameSchema = z.enum([
  'exactly_once',
  'only_generated_tokens_trained',
  'siblings_share_rollout_id_and_reward',
  'every_sample_trainable',
  'segmentation_invariance',
  'group_accounting',
  'token_accounting',
  'agent_metrics_logged',
  'tito_session_consistent',
  'pass_at_k_counts_every_group',
  'session_affinity',
]);
export type CheckName = z.infer<typeof CheckNameSchema>;

/**
 * `fail`: the harness's own machinery (or the data under test) broke an invariant. `finding`: behaviour
 * Miles itself exhibits (e.g. a completion its default picker trims and trains nowhere), reported so a
 * person can judge it. `pass`: neither.
 */
export const VerdictSchema = z.enum(['pass', 'fail', 'finding']);
export type Verdict = z.infer<typeof VerdictSchema>;

export const CheckResultSchema = z.object({
  name: CheckNameSchema,
  title: z.string(),
  verdict: VerdictSchema,
  /** How the check ran when it has more than one way (`exact` with trees, `proxy` without). */
  mode: z.string(),
  counts: z.object({ fail: z.number().int(), finding: z.number().int(), info: z.number().int() }),
  evidence: z.array(EvidenceSchema),
});
export type CheckResult = z.infer<typeof CheckResultSchema>;

/** A check the data could not support, and what it lacked. */
export const SkippedCheckSchema = z.object({
  name: CheckNameSchema,
  missing: z.array(z.string()),
});
export type SkippedCheck = z.infer<typeof SkippedCheckSchema>;

/**
 * What a check may need. A converted Miles dump typically has samples with leaf refs and raw rewards but
 * no `trees` or `request_logs`; train shards add `advantages`.
 */
export const CheckInputSchema = z.enum([
  /** `metadata.leaf` on every retained sample. */
  'leaf_refs',
  /** The session's tree metadata for every retained rollout. */
  'trees',
  /** The policy's request log for every retained rollout (joined to nodes by `response_id`). */
  'request_logs',
  /** The normalised reward each retained row trained with, and the normalisation flags. */
  'advantages',
  /** `n_samples_per_prompt` (and optionally `rollout_batch_size`). */
  'group_shape',
]);
export type CheckInput = z.infer<typeof CheckInputSchema>;

/** One step's data: its prompt groups (dropped ones included, so accounting can see them). */
export interface CheckStep {
  readonly step: number | null;
  readonly groups: readonly Group[];
  /**
   * The advantage each retained row trained with, aligned with `retainedRows(groups)` (Miles' flattened
   * order), or null when unknown. A null entry is a row no optimizer step trained (Miles' train schedule
   * dropped its rollout), so it has no advantage to check.
   */
  readonly advantages: readonly (number | null)[] | null;
  /**
   * Which session-server workers each of the step's sessions reached (the replay's fake workers report
   * it); absent where the source cannot say (a Miles dump, Miles' own session server).
   */
  readonly session_routing?: readonly SessionRouting[];
}

export interface CheckData {
  readonly steps: readonly CheckStep[];
  readonly n_samples_per_prompt: number | null;
  readonly rollout_batch_size: number | null;
  readonly normalization: NormalizationConfig | null;
}

export interface InvariantCheck {
  readonly name: CheckName;
  readonly title: string;
  /** Inputs without which the check cannot say anything. */
  readonly requires: readonly CheckInput[];
  /** Inputs that make it more precise when present. */
  readonly uses: readonly CheckInput[];
  run(data: CheckData): CheckResult;
}
