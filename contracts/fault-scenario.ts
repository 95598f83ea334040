import { z } from 'zod';
import { TraceTurnSchema } from './trace.ts';

/**
 * `fault-scenario/1`: one row of the field-failure catalogue (docs/field-failures.md). A fault another team
 * reported upstream, replayed as what the agent sends and what the policy emits (exact ids where the fault
 * lives in them), grouped into rollouts as GRPO sees them, with the verdicts recorded when it was run: the
 * harness's checks on the fakes, and Miles' own code per Miles profile (contracts/miles-profile.ts).
 */

/** The catalogue's fault kinds; `harness fuzz --faults` mixes the same kinds into generated episodes. */
export const FaultKindSchema = z.enum([
  'resent_first_turn',
  'retry_after_rollback',
  'rollback_then_longer',
  'concurrent_requests',
  'upstream_abort',
  'infra_abort_scored_zero',
  'infra_abort_group_dropped',
  'length_recover',
  'length_abort',
  'endoftext_turn_end',
  'empty_think_rerendered',
  'newline_after_im_end',
  'thinking_stripped',
  'retokenized_text',
  'tool_call_zero_args',
  'tool_call_literal_end',
  'tool_call_split_markers',
  'tool_call_numbers_as_strings',
  'group_rows_differ_grpo',
  'group_rows_differ_metrics',
  'group_rows_differ_pass_at_k',
  'sibling_rewards_differ',
]);
export type FaultKind = z.infer<typeof FaultKindSchema>;

/** An upstream issue or pull request: `owner/repo#N` and its address. */
const UpstreamSchema = z.strictObject({
  ref: z.string().regex(/^[\w.-]+\/[\w.-]+#\d+$/),
  url: z.url(),
});

/** One agent run against one session: its turns, as a session trace's, and the reward it was scored. */
export const FaultRolloutSchema = z.strictObject({
  /** The prompt group (GRPO normalises within it). */
  group: z.number().int().nonnegative(),
  /** The agent's reward (the `/run` result's `reward`, sent as the samples op's metadata). */
  reward: z.number(),
  turns: z.array(TraceTurnSchema).min(1),
  /** Turn indices sent at the same moment as the turn before them (two requests in one session at once). */
  concurrent: z.array(z.number().int().positive()).default([]),
  /**
   * Rewards a custom reward function gave the rollout's samples one by one, in the samples op's order,
   * over the agent's reward (miles #2378: siblings of one rollout scored differently).
   */
  sample_rewards: z.array(z.number()).optional(),
  max_seq_len: z.number().int().positive().nullable().default(null),
});
export type FaultRollout = z.infer<typeof FaultRolloutSchema>;

/** A check's outcome on the row; `skipped` when the row's data lacks what the check needs. */
export const RowCheckVerdictSchema = z.enum(['pass', 'fail', 'finding', 'skipped']);

/** What the harness said when the row was played through the fakes. */
export const HarnessRowVerdictSchema = z.strictObject({
  /** Per rollout, the status of each chat turn as the fake session server answered it. */
  turn_statuses: z.array(z.array(z.number().int())),
  /** Per rollout, the statuses of the samples the fake's samples op returned (empty for none). */
  sample_statuses: z.array(z.array(z.string())),
  /** `tito_session_mismatch` types on the fake's samples, sorted, without repeats. */
  mismatch_types: z.array(z.string()),
  /** Every check by name. */
  checks: z.record(z.string(), RowCheckVerdictSchema),
  /** The error Miles' conversion would raise as the harness models it (`code: message`), or null. */
  conversion_error: z.string().nullable(),
  /** `caught`: a check failed or found something; `not_caught`: every check passed. */
  outcome: z.enum(['caught', 'not_caught']),
});
export type HarnessRowVerdict = z.infer<typeof HarnessRowVerdictSchema>;

/** What Miles' own code did with the row (one profile), read from its answers. */
export const MilesRowVerdictSchema = z.strictObject({
  /** Per rollout, the status of each chat turn as Miles' session server answered it. */
  turn_statuses: z.array(z.array(z.number().int())),
  /** Per rollout, the statuses of the samples Miles' samples op returned (empty for no samples). */
  sample_statuses: z.array(z.array(z.string())),
  /** `tito_session_mismatch` types on the samples, sorted, without repeats. */
  mismatch_types: z.array(z.string()),
  /** What Miles' `_post_process_rewards` gave: the advantages, or the exception it raised. */
  rewards: z.union([
    z.strictObject({ advantages: z.array(z.number()) }),
    z.strictObject({ raised: z.string() }),
  ]),
  /** Miles' `_compute_passrate_from_samples` on the rows (`{}` when it logs none). */
  passrate: z.record(z.string(), z.number()),
  /** Groups its pass@k left out as incomplete. */
  passrate_excluded_groups: z.number().int().nonnegative(),
  /** Whether the fake session server answered every exchange as Miles did (statuses and bodies, masked). */
  fake_agrees: z.boolean(),
  /** The exchanges where the fake differed (`rollout N: step`), empty when it agrees. */
  differences: z.array(z.string()),
});
export type MilesRowVerdict = z.infer<typeof MilesRowVerdictSchema>;

export const FaultScenarioSchema = z.strictObject({
  format: z.literal('fault-scenario/1'),
  id: z.string().regex(/^[a-z0-9][a-z0-9-]*$/),
  title: z.string().min(1),
  kind: FaultKindSchema,
  upstream: z.array(UpstreamSchema).min(1),
  /** What goes wrong in the field, one paragraph. */
  fault: z.string().min(1),
  tokenizer: z.enum(['toy', 'qwen3']),
  n_samples_per_prompt: z.number().int().positive(),
  rollouts: z.array(FaultRolloutSchema).min(1),
  /** Why no harness check can catch it, when none does (required for a `not_caught` row). */
  not_caught_why: z.string().min(1).optional(),
  /** The verdicts recorded when the row was last run (`harness catalogue --record`), per Miles profile. */
  recorded: z
    .strictObject({
      /** Per Miles profile name, what the harness said with the fakes answering as that Miles. */
      harness: z.record(z.string(), HarnessRowVerdictSchema),
      /** Per Miles profile name (contracts/miles-profile.ts), what Miles' own code did. */
      miles: z.record(z.string(), MilesRowVerdictSchema),
    })
    .optional(),
});
export type FaultScenario = z.infer<typeof FaultScenarioSchema>;
