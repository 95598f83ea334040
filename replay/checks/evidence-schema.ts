import { z } from 'zod';
import { TokenAccountingSchema } from '../accounting/schema.ts';

const SeveritySchema = z.enum(['fail', 'finding', 'info']);
export type Severity = z.infer<typeof SeveritySchema>;

/**
 * What every piece of evidence carries besides its kind and data. Every locator is null when it does not
 * apply. `token_range` is half-open and indexes the sample's `tokens` (the same absolute coordinates as a
 * tree node's `completion_span`).
 */
const EvidenceBaseSchema = z.object({
  severity: SeveritySchema,
  step: z.number().int().nullable(),
  group_index: z.number().int().nullable(),
  /** The rollout's effective id: `rollout_id`, else `index`. */
  rollout: z.number().int().nullable(),
  /** The sample's position in its rollout (the order the samples op returned). */
  sample: z.number().int().nullable(),
  leaf_node_id: z.number().int().nullable(),
  node: z.number().int().nullable(),
  token_range: z.tuple([z.number().int(), z.number().int()]).nullable(),
  detail: z.string(),
});

/** One kind: its stable name and the facts (`data`) every item of that kind carries. */
function kind<const K extends string, const D extends z.ZodRawShape>(name: K, data: D) {
  return EvidenceBaseSchema.extend({ kind: z.literal(name), data: z.strictObject(data) });
}

const ids = z.array(z.number().int());
const advantages = { advantage: z.number(), per_rollout: z.number(), per_sample: z.number() };
/** Why a branch no kept sample contains is lost (docs/replay.md, check 1). */
const LostBranchCauseSchema = z.enum(['unclassified', 'unjoined_request', 'trimmed_branch', 'dropped_leaf']);
const branch = { branch_node_ids: ids, later_sibling_ids: ids };

/**
 * Every kind of evidence the checks produce, each declared once with its data (docs/replay.md, "The
 * checks", lists them all; a test keeps the two equal). The report, the HTML page and the GPU suite's
 * dump validation key on these names.
 */
export const EvidenceSchema = z.discriminatedUnion('kind', [
  // 1 exactly_once
  kind('double_trained', {
    trained_in_samples: ids,
    trained_in_leaves: ids,
    /** Set when found by the tree-less proxy (shared token prefix of two siblings). */
    proxy: z.literal(true).optional(),
  }),
  kind('untrained_completion', {}),
  kind('lost_completion', {
    cause: z.union([z.enum(['owner_cut', 'beyond_sample_end']), LostBranchCauseSchema]),
    branch_node_ids: ids.optional(),
    later_sibling_ids: ids.optional(),
  }),
  kind('superseded_retry', { ...branch, resent_by: z.number().int() }),
  // 2 only_generated_tokens_trained
  kind('path_node_missing', { missing_node_ids: ids }),
  kind('trained_not_generated', {}),
  kind('trained_token_not_policy_output', {}),
  // 3 siblings_share_rollout_id_and_reward
  kind('reward_missing', { rewards: z.array(z.number().nullable()) }),
  kind('reward_mismatch', { rewards: z.array(z.number().nullable()) }),
  kind('rollout_id_unset', { rollout_ids: z.array(z.number().int().nullable()) }),
  kind('rollout_id_mismatch', { rollout_ids: z.array(z.number().int().nullable()) }),
  kind('rollout_id_not_index', { rollout_id: z.number().int().nullable(), index: z.number().int() }),
  kind('sibling_identity_mismatch', {
    group_indices: z.array(z.number().int().nullable()),
    indices: z.array(z.number().int().nullable()),
  }),
  kind('rollout_id_collision', { groups: ids }),
  // 4 every_sample_trainable
  kind('removed_sample', {}),
  kind('no_trainable_token', { cut: z.boolean() }),
  // 5 segmentation_invariance
  kind('not_normalizable', { code: z.string().nullable() }),
  kind('partly_trained', {}),
  kind('not_trained', {}),
  kind('per_sample_normalization', advantages),
  kind('advantage_mismatch', advantages),
  kind('per_sample_would_differ', { ...advantages, samples: z.number().int() }),
  // 6 group_accounting
  kind('duplicate_group_index', {}),
  kind('short_group', { rollouts: z.number().int(), expected: z.number().int(), samples: ids }),
  kind('oversized_group', { rollouts: z.number().int(), expected: z.number().int(), samples: ids }),
  kind('aborted_in_kept_group', {}),
  kind('dropped_without_abort', {}),
  kind('dropped_aborted_group', { reason: z.string().nullable() }),
  kind('dropped_raised_group', {}),
  kind('batch_short', { kept: z.number().int(), expected: z.number().int() }),
  // 7 token_accounting
  kind('accounting_identity', { accounting: TokenAccountingSchema }),
  kind('unexplained_loss', { accounting: TokenAccountingSchema }),
  // 8 agent_metrics_logged
  kind('agent_metrics_not_logged_v2', {
    keys: z.array(z.string()),
    would_log: z.record(z.string(), z.number()),
    logged: z.record(z.string(), z.number()),
  }),
  // 9 tito_session_consistent
  kind('tito_strict_mismatch', { types: z.array(z.string()) }),
  kind('tito_assistant_text_mismatch', { types: z.array(z.string()) }),
  // 10 pass_at_k_counts_every_group
  kind('pass_at_k_group_excluded', {
    rows: z.number().int(),
    rollouts: z.number().int(),
    expected: z.number().int(),
  }),
  // 11 session_affinity
  kind('session_split_across_workers', { session_id: z.string(), workers: z.array(z.string()) }),
]);
export type Evidence = z.infer<typeof EvidenceSchema>;
export type EvidenceKind = Evidence['kind'];
/** The facts an item of kind `K` carries. */
export type EvidenceData<K extends EvidenceKind> = Extract<Evidence, { kind: K }>['data'];

/** Every kind, in declaration order (docs and tests). */
export const EVIDENCE_KINDS: readonly EvidenceKind[] = EvidenceSchema.options.map((o) => o.shape.kind.value);

/** The kind alone, for reports that name a kind without its data (the GPU suite's dump checks). */
export const EvidenceKindSchema = z.enum(EVIDENCE_KINDS as [EvidenceKind, ...EvidenceKind[]]);
