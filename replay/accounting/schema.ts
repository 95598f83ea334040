import { z } from 'zod';

/**
 * Why a generated completion token is trained in no sample. The causes are Miles' own rules (picker,
 * truncation, dynamic filter) except `untrained_in_sample` and `unexplained`, which mean the machinery
 * is wrong (check 1 fails them too).
 */
const LostCauseSchema = z.enum([
  /** A twin the client threw away and re-sent; `drop_retries` trims the earlier one. */
  'retry_trimmed',
  /** A summary call whose answers call re-rooted as its later sibling (reasoning models). */
  'summary_branch_trimmed',
  /** The real last turn before a reactive summarization that unwound one pair: S is its later sibling. */
  'tail_turn_trimmed',
  /** Cut from every sample that carries its node by `--max-seq-len` (or the merge stop after it). */
  'beyond_max_seq_len',
  /** A leaf whose sample the session server returned nothing for. */
  'leaf_without_sample',
  /** The rollout gave an ABORTED placeholder (`check_no_aborted` then drops its group). */
  'aborted_rollout',
  /** Another rollout of its group was aborted, or the group's task raised: the whole group is dropped. */
  'dropped_group',
  /** A branch trimmed for a reason the request log cannot tell (no log, or no joined request). */
  'trimmed_unclassified',
  /** Carried by a sample but trained in none: a masking defect. */
  'untrained_in_sample',
  /** Carried by no sample for no reason above: a defect. */
  'unexplained',
]);
export type LostCause = z.infer<typeof LostCauseSchema>;

/**
 * Where the completion tokens of a step (or a rollout) went. Occurrences: a generated token counts
 * once per kept sample that carries it (a shared prefix once per sibling, as
 * `episode_total_response_length` counts it) and once if no kept sample carries it.
 * `completion_tokens = trained_tokens + masked_shared_tokens + Σ lost_tokens` (check 7).
 */
export const TokenAccountingSchema = z.object({
  completion_tokens: z.number().int().nonnegative(),
  trained_tokens: z.number().int().nonnegative(),
  masked_shared_tokens: z.number().int().nonnegative(),
  lost_tokens: z.partialRecord(LostCauseSchema, z.number().int().nonnegative()),
  /** Distinct tokens the policy generated (each completion once, whatever its number of carriers). */
  generated_tokens: z.number().int().nonnegative(),
});
export type TokenAccounting = z.infer<typeof TokenAccountingSchema>;

export function emptyAccounting(): TokenAccounting {
  return {
    completion_tokens: 0,
    trained_tokens: 0,
    masked_shared_tokens: 0,
    lost_tokens: {},
    generated_tokens: 0,
  };
}

export function lostTotal(a: TokenAccounting): number {
  let sum = 0;
  for (const n of Object.values(a.lost_tokens)) sum += n ?? 0;
  return sum;
}

/** The identity check 7 enforces. */
export function identityHolds(a: TokenAccounting): boolean {
  return a.completion_tokens === a.trained_tokens + a.masked_shared_tokens + lostTotal(a);
}

export function addAccounting(into: TokenAccounting, from: TokenAccounting): TokenAccounting {
  into.completion_tokens += from.completion_tokens;
  into.trained_tokens += from.trained_tokens;
  into.masked_shared_tokens += from.masked_shared_tokens;
  into.generated_tokens += from.generated_tokens;
  for (const [cause, n] of Object.entries(from.lost_tokens) as [LostCause, number][])
    into.lost_tokens[cause] = (into.lost_tokens[cause] ?? 0) + n;
  return into;
}
