import { z } from 'zod';
import { EMIT_FAULTS } from '../../contracts/directive.ts';
import { SampleStatusSchema } from '../../contracts/wire-sample.ts';

/**
 * Episode scripts: what one mock Harbor trial plays against the session URL. The script owns
 * everything that does not depend on the model (observations, when the episode ends, the verifier's
 * reward) and steers the fake policy with directives; a real policy ignores the directives and the
 * episode still progresses. Documented field by field in docs/episodes.md.
 */

/** The mock's instance-id rule (docs/harbor.md "API": a Harbor task dir name, no `..`). */
export const INSTANCE_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

export const InstanceIdSchema = z
  .string()
  .max(200)
  .regex(INSTANCE_ID_PATTERN, 'must match ^[A-Za-z0-9][A-Za-z0-9._-]*$')
  .refine((id) => !id.includes('..'), 'must not contain ".."');

/** The four exit statuses of the miles agent server (docs/harbor.md "Exit statuses"). */
export const ExitStatusSchema = z.enum([
  'Submitted',
  'TimeLimitExceeded',
  'SequenceLengthLimitExceeded',
  'AgentError',
]);
export type ExitStatus = z.infer<typeof ExitStatusSchema>;

/** A non-200 answer the fake policy should give, on the first `attempts` attempts (all of them when absent). */
export const ForcedErrorSchema = z.strictObject({
  status: z.number().int().min(400).max(599),
  message: z.string().min(1),
  attempts: z.number().int().positive().optional(),
});

/** How one model call should go. Every key is optional; absent keys leave the policy alone. */
export const CallSpecSchema = z.strictObject({
  /** Exact reply text (sent as the `content` directive). Default: a generated reply for the call. */
  content: z.string().optional(),
  /** Pad the generated reply with filler words up to about this many words (above the response limit: truncation). */
  words: z.number().int().nonnegative().max(16_384).optional(),
  /** `reasoning_content` the policy should return (a reasoning model). */
  reasoning: z.string().optional(),
  /**
   * Tool calls the reply carries (`arguments` a JSON string), kept on the assistant message in history:
   * Terminus 2 calls no tools, but real templates special-case them (Qwen3's `<tool_call>` blocks).
   */
  tool_calls: z
    .array(z.strictObject({ name: z.string().min(1), arguments: z.string() }))
    .min(1)
    .max(16)
    .optional(),
  /** Force the finish reason; `length` on a main call ends the trial (response-length policy `abort`). */
  finish_reason: z.enum(['stop', 'length', 'abort']).optional(),
  /** Answer with this non-200 instead of a completion. */
  error: ForcedErrorSchema.optional(),
  /** The reply ends with `<|endoftext|>` instead of `<|im_end|>` (the `end_token` directive; qwen3 only). */
  end_token: z.enum(['endoftext']).optional(),
  /** Answer the first attempt with a context-length 400 (main calls: the reactive trigger). */
  context_error: z.boolean().optional(),
  /** Completed (200) replies the client throws away and re-sends, as a retry after a client-side failure. */
  discard: z.number().int().min(0).max(2).optional(),
  /**
   * The engine aborts the first attempt (a weight update, a preemption) and answers 200 with
   * `finish_reason: "abort"` and the reply's first half; the agent retries the turn (radixark/miles#3337).
   */
  upstream_abort: z.boolean().optional(),
  /**
   * The policy's ids and its parsed message disagree as the field reports (the directive's `fault`; qwen3
   * only): a think block left in the content, a per-character tokenization, a tool-call parser fault.
   */
  emit_fault: z.enum(EMIT_FAULTS).optional(),
});
export type CallSpec = z.infer<typeof CallSpecSchema>;

/** What the previous turn's last command prints: plain text, or text plus generated filler words. */
export const ObservationSchema = z.union([
  z.string(),
  z.strictObject({
    text: z.string().default(''),
    /** Deterministic filler words appended to `text` (ten per line), to grow the context. */
    filler_words: z.number().int().nonnegative().max(5000).default(0),
    /** `screen`: the program clears the screen first, so Terminus shows "Current Terminal Screen:" (nothing new isolated). */
    kind: z.enum(['new_output', 'screen']).default('new_output'),
  }),
]);
export type Observation = z.infer<typeof ObservationSchema>;

export const CommandSchema = z.strictObject({
  keystrokes: z.string(),
  duration: z.number().nonnegative().max(60),
});

/** One loop iteration of Terminus 2: the observation it starts from, then its main call. */
export const TurnSchema = CallSpecSchema.extend({
  /** The terminal output produced by the previous turn's commands. Required from turn 1 on; turn 0 starts from U0. */
  observation: ObservationSchema.optional(),
  /** Commands written into the generated reply (default: one `ls -la`). */
  commands: z.array(CommandSchema).max(20).optional(),
  /** The reply marks the task complete; the next prompt is the completion-confirmation message. */
  complete: z.boolean().optional(),
  /** Simulated command execution time after the reply, in milliseconds (aborted by timeout/flush). */
  exec_ms: z.number().int().nonnegative().max(3_600_000).optional(),
  /** The agent raises this error at the start of the turn (not an LLM error): the trial ends as AgentError. */
  crash: z.string().min(1).optional(),
  /**
   * The reply's last command is still running when Terminus reads the pane (it outlived its
   * `duration`): the next turn's observation appears only at the following read.
   */
  outlives_wait: z.boolean().optional(),
  /** Sending the reply's last command times out (the environment's exec raises TimeoutError): templates/timeout.txt. */
  send_timeout: z.boolean().optional(),
  /** This turn's commands run past `--agent-timeout` (simulated: no wall time): TimeLimitExceeded. */
  timeout: z.boolean().optional(),
  /**
   * The agent's framework restarts its conversation: this turn re-sends the episode's first request
   * (empty history, the first prompt) after replies were committed (radixark/miles#1826).
   */
  restart: z.boolean().optional(),
  /**
   * The agent rolls its history back to the first exchange and sends this turn's prompt after it; the
   * episode then continues past where it had been (PrimeIntellect-ai/prime-rl#2634).
   */
  rollback: z.boolean().optional(),
  /**
   * The main request goes out with a twin at the same moment into the session: the same history, a
   * parallel branch's observation as the last message (engine/parallel-branch.ts); the twin's reply is
   * dropped (radixark/miles#3258).
   */
  concurrent: z.boolean().optional(),
  /** The client drops `reasoning_content` from the assistant messages it re-sends from here on (prime-rl#1334, verl#6854). */
  strip_thinking: z.boolean().optional(),
  /**
   * Response-length policy `recover` (Harbor 6c9ba3f0 terminus_2.py `_query_llm`): a reply cut at the
   * length limit is kept as an assistant turn and the model asked to re-issue it (radixark/miles#2806).
   */
  recover: z.boolean().optional(),
  /**
   * The observation of this turn's commands goes back as a `tool` message answering the reply's tool call
   * (an assistant→tool boundary, volcengine/verl#3720) instead of a user message.
   */
  tool_response: z.boolean().optional(),
});
export type Turn = z.infer<typeof TurnSchema>;

/** Knobs for the k-th summarization (1-based in prose, index k-1 here). */
export const CompactionSpecSchema = z.strictObject({
  summary: CallSpecSchema.optional(),
  questions: CallSpecSchema.optional(),
  answers: CallSpecSchema.optional(),
  /** The reactive short-summary fallback call. */
  short_summary: CallSpecSchema.optional(),
  /** Merged over the first main call after this summarization (or its fallback). */
  handoff: CallSpecSchema.optional(),
});
export type CompactionSpec = z.infer<typeof CompactionSpecSchema>;

export const ContextSchema = z.strictObject({
  /** AGENT_MAX_INPUT_TOKENS: the context limit of the history token count. */
  limit: z.number().int().positive().default(32768),
  /** Proactive summarization when limit − count(history) < threshold (Terminus default 8000). */
  threshold: z.number().int().nonnegative().default(8000),
  /** Reactive unwinding stops once this many tokens are free (Terminus: 4000). */
  unwind_target: z.number().int().nonnegative().default(4000),
  /** Estimator scale: tokens per whitespace-separated word (1 matches the toy tokenizer). */
  tokens_per_word: z.number().positive().max(10).default(1),
  /** Count every history message as this many tokens instead (Harbor's golden test counter: 500). */
  tokens_per_message: z.number().int().positive().optional(),
});

const TurnsSchema = z.array(TurnSchema).min(1).max(200);

/** What may change from one trial of an instance to the next (trial k plays variant k mod n). */
export const VariantSchema = z.strictObject({
  reward: z.number().optional(),
  turns: TurnsSchema.optional(),
  compactions: z.array(CompactionSpecSchema).optional(),
  reasoning: z.boolean().optional(),
});
export type Variant = z.infer<typeof VariantSchema>;

/** The tree and samples a fixture must produce through the fake session server (variant 0). */
export const ExpectSchema = z.strictObject({
  exit_status: ExitStatusSchema,
  reward: z.number(),
  summarization_count: z.number().int().nonnegative(),
  /** Successful main calls (`agent_metrics.turns`). */
  turns: z.number().int().nonnegative(),
  tree: z.strictObject({
    /** `parents[i]` is node i's parent id (null for a root). */
    parents: z.array(z.number().int().nonnegative().nullable()),
    truncated: z.array(z.number().int().nonnegative()).default([]),
  }),
  /** `path_node_ids` of every leaf, in leaf (seq) order. */
  leaves: z.array(z.array(z.number().int().nonnegative())),
  samples: z.strictObject({
    /** Leaf node ids of the returned samples, in the samples op's order. */
    leaves: z.array(z.number().int().nonnegative()),
    statuses: z.array(SampleStatusSchema),
    /** Leaves `drop_retries` trims (a later sibling under the same parent). */
    trimmed: z.array(z.number().int().nonnegative()).default([]),
  }),
  empty_reason: z.enum(['no_records', 'all_truncated']).nullable().default(null),
});
export type EpisodeExpect = z.infer<typeof ExpectSchema>;

const EpisodeObjectSchema = z.strictObject({
  $schema: z.string().optional(),
  instance_id: InstanceIdSchema,
  description: z.string().min(1),
  /** Part of the pool that instance ids without their own script are hashed onto. */
  pool: z.boolean().default(false),
  /** The task instruction; `{instance_id}` is replaced by the trial's instance id. */
  instruction: z.string().min(1),
  initial_screen: z.string().default('root@harbor:/app# '),
  /** The bash prompt printed after every command (PS1 as the pane shows it). */
  shell_prompt: z.string().default('root@harbor:/app# '),
  parser: z.enum(['xml', 'json']).default('xml'),
  /** HARBOR_TERMINUS_2_ENABLE_SUMMARIZE (the compaction recipe turns it on). */
  summarize: z.boolean().default(true),
  context: ContextSchema.prefault({}),
  /** Every call returns `reasoning_content` (kept in history: interleaved thinking). */
  reasoning: z.boolean().default(false),
  turns: TurnsSchema,
  compactions: z.array(CompactionSpecSchema).default([]),
  /** The verifier's reward when the agent finishes. */
  reward: z.number().default(1),
  /**
   * The verifier still runs after an agent timeout (Harbor 6c9ba3f0 src/harbor/trial/); this is its reward
   * then.
   */
  timeout_reward: z.number().default(0),
  setup_ms: z.number().int().nonnegative().max(600_000).default(0),
  verifier_ms: z.number().int().nonnegative().max(600_000).default(0),
  variants: z.array(VariantSchema).min(1).max(64).optional(),
  expect: ExpectSchema.optional(),
});

function checkTurns(turns: readonly Turn[], where: string, ctx: z.RefinementCtx): void {
  turns.forEach((turn, i) => {
    if (i === 0 && turn.observation !== undefined)
      ctx.addIssue({
        code: 'custom',
        path: [where, 0, 'observation'],
        message: 'turn 0 starts from U0 and takes no observation',
      });
    if (i > 0 && turn.observation === undefined)
      ctx.addIssue({ code: 'custom', path: [where, i, 'observation'], message: 'required from turn 1 on' });
  });
}

export const EpisodeScriptSchema = EpisodeObjectSchema.superRefine((script, ctx) => {
  checkTurns(script.turns, 'turns', ctx);
  script.variants?.forEach((variant, v) => {
    if (variant.turns) checkTurns(variant.turns, `variants.${v}.turns`, ctx);
  });
  if (script.context.threshold >= script.context.limit)
    ctx.addIssue({ code: 'custom', path: ['context', 'threshold'], message: 'must be below context.limit' });
});
export type EpisodeScript = z.infer<typeof EpisodeScriptSchema>;
export type EpisodeScriptInput = z.input<typeof EpisodeScriptSchema>;

/** One script with a variant applied and the instance id substituted: what the engine plays. */
export interface ResolvedEpisode {
  readonly script: EpisodeScript;
  readonly instanceId: string;
  readonly variantIndex: number;
  readonly instruction: string;
  readonly turns: readonly Turn[];
  readonly compactions: readonly CompactionSpec[];
  readonly reasoning: boolean;
  readonly reward: number;
}

/** Applies variant `pick mod n` (or none) and the instance id; `pick` is the sample index or the trial index. */
export function resolveEpisode(script: EpisodeScript, instanceId: string, pick: number): ResolvedEpisode {
  const variants = script.variants ?? [];
  const variantIndex = variants.length === 0 ? 0 : pick % variants.length;
  const variant: Variant = variants[variantIndex] ?? {};
  return {
    script,
    instanceId,
    variantIndex,
    instruction: script.instruction.split('{instance_id}').join(instanceId),
    turns: variant.turns ?? script.turns,
    compactions: variant.compactions ?? script.compactions,
    reasoning: variant.reasoning ?? script.reasoning,
    reward: variant.reward ?? script.reward,
  };
}
