import { z } from 'zod';

/**
 * The parameters of the episode generator: one schema, defaults from the recipe
 * (docs/recipe.md; Terminus 2's knobs, Harbor 6c9ba3f0 terminus_2.py; docs/harbor.md) and from the shape of
 * Terminal-Bench 2 runs. docs/replay.md ("Generated episodes") says why each default was chosen.
 */

const Probability = z.number().min(0).max(1);

/** A closed range of integers `[min, max]`. */
const IntRange = z
  .strictObject({ min: z.number().int().nonnegative(), max: z.number().int().nonnegative() })
  .refine((r) => r.min <= r.max, 'min must not exceed max');

/** One size class of terminal output: drawn with weight `weight`, uniform in `[min, max]` words. */
const SizeClass = z.strictObject({
  weight: z.number().nonnegative(),
  min: z.number().int().nonnegative(),
  max: z.number().int().nonnegative().max(2_900),
});

/** The tool-call share of replays on Qwen3's tokenizer (`--tokenizer qwen3`): enough calls to reach the template's paths. */
export const QWEN3_TOOL_CALL_RATE = 0.25;

export const GeneratorParamsSchema = z.strictObject({
  /** Variants per task script: the GRPO group size (recipe `--n-samples-per-prompt 8`). */
  samples_per_task: z.number().int().min(1).max(64).default(8),
  /** `AGENT_MAX_INPUT_TOKENS` = recipe `--max-seq-len 32768`. */
  context_limit: z.number().int().min(2_000).default(32_768),
  /** Terminus' `proactive_summarization_threshold` (8000 free tokens; Miles does not override it). */
  proactive_threshold: z.number().int().nonnegative().default(8_000),
  /** Terminus' reactive unwind target (4000 free tokens). */
  unwind_target: z.number().int().nonnegative().default(4_000),
  /** `AGENT_MAX_OUTPUT_TOKENS` = recipe `--rollout-max-response-len 8192`: a longer reply is cut. */
  response_limit: z.number().int().positive().default(8_192),
  /** Per-task success probability: a mixture of never-solved, always-solved and Kumaraswamy(a, b) tasks. */
  difficulty: z
    .strictObject({
      unsolvable: Probability.default(0.3),
      trivial: Probability.default(0.1),
      a: z.number().positive().default(1),
      b: z.number().positive().default(1.5),
    })
    .prefault({}),
  /** Main-loop iterations: a task median drawn log-normally, then each rollout spread around it. */
  turns: z
    .strictObject({
      median: z.number().positive().default(28),
      task_sigma: z.number().nonnegative().default(0.5),
      rollout_sigma: z.number().nonnegative().default(0.35),
      /** Failing rollouts wander longer before they submit. */
      failure_factor: z.number().positive().default(1.3),
      min: z.number().int().min(2).default(3),
      max: z.number().int().min(2).max(200).default(150),
    })
    .prefault({}),
  /** Command output per turn in words (the engine caps an observation at 10,000 bytes, about 2,900 filler words). */
  observation: z
    .strictObject({
      small: SizeClass.default({ weight: 0.55, min: 10, max: 150 }),
      medium: SizeClass.default({ weight: 0.33, min: 150, max: 900 }),
      large: SizeClass.default({ weight: 0.12, min: 900, max: 2_900 }),
    })
    .prefault({}),
  /** Main reply length in words: log-normal around `median`, capped at `max`. */
  reply: z
    .strictObject({
      median: z.number().positive().default(110),
      sigma: z.number().nonnegative().default(0.6),
      max: z.number().int().positive().default(2_500),
    })
    .prefault({}),
  /** Share of rollouts played by a reasoning model (every call returns `reasoning_content`). */
  reasoning_rate: Probability.default(0.5),
  /**
   * Share of main calls whose reply also carries a tool call (a `bash` call repeating the command, its
   * arguments a JSON string with a float): Terminus 2 calls no tools, but Qwen3's template renders them.
   * 0 by default, so the toy episodes stay as they were; `--tokenizer qwen3` replays turn it on.
   */
  tool_call_rate: Probability.default(0),
  /** Summarization sub-call reply lengths in words. */
  summary_words: IntRange.default({ min: 150, max: 1_200 }),
  questions_words: IntRange.default({ min: 60, max: 300 }),
  answers_words: IntRange.default({ min: 150, max: 1_200 }),
  /** Share of context fills that overflow on the main call (reactive) instead of the proactive check. */
  reactive_rate: Probability.default(0.35),
  /** Given a reactive overflow: how many pairs the unwind should drop (0, 1 or 2), as weights. */
  unwind_pairs: z
    .tuple([z.number().nonnegative(), z.number().nonnegative(), z.number().nonnegative()])
    .default([0.5, 0.3, 0.2]),
  /** A summarization's summary call fails (a proactive one is retried next turn; a reactive one falls back). */
  summary_failure_rate: Probability.default(0.1),
  /** Given a failed reactive summary: the short-summary call fails too (prompt without a model call). */
  short_summary_failure_rate: Probability.default(0.3),
  /** Per main call: a completed reply the client throws away and re-sends (twin siblings). */
  retry_rate: Probability.default(0.01),
  /** Per main call: one or two transient 5xx answers before a good one (not recorded by the session). */
  transient_error_rate: Probability.default(0.01),
  /** Per rollout: the agent raises (tmux died, …): AgentError. */
  crash_rate: Probability.default(0.015),
  /** Per rollout: the policy answers 5xx on all 9 attempts of a main call: AgentError. */
  policy_failure_rate: Probability.default(0.01),
  /** Per rollout: the first call fails for good, so nothing is recorded: an aborted rollout (its group drops). */
  first_turn_failure_rate: Probability.default(0.004),
  /** Per rollout: a turn's commands run past `--agent-timeout 3600`: TimeLimitExceeded. */
  timeout_rate: Probability.default(0.02),
  /** Per rollout: one reply runs past the response limit: SequenceLengthLimitExceeded. */
  truncation_rate: Probability.default(0.03),
  /**
   * Per main call: the reply ends with `<|endoftext|>` instead of `<|im_end|>` (qwen3 only; the catalogue's
   * `endoftext_turn_end`, mixed in by `harness fuzz --faults`). 0 by default.
   */
  endoftext_rate: Probability.default(0),
  /**
   * Catalogue faults (docs/field-failures.md) mixed in by `harness fuzz --faults`, each 0 by default and
   * drawn only when above 0, so episodes without them use the random stream as before. The unit is in
   * each key's comment; docs/field-failures.md "In fuzzing" lists the script keys each one sets.
   */
  faults: z
    .strictObject({
      /** Per rollout: one later turn re-sends the first request after a restart (`restart`). */
      resend_first: Probability.default(0),
      /** Per rollout: one later turn rolls the history back to the first exchange (`rollback`). */
      rollback: Probability.default(0),
      /** Per main call: the request goes out twice at once (`concurrent`). */
      concurrent: Probability.default(0),
      /** Per main call: the engine aborts the first attempt with a 200 `abort` (`upstream_abort`). */
      upstream_abort: Probability.default(0),
      /** Per rollout: one reply is cut at the length limit and recovered, not ended (`recover`). */
      length_recover: Probability.default(0),
      /** Per main call of a reasoning rollout: the client strips thinking from here on (`strip_thinking`). */
      strip_thinking: Probability.default(0),
      /** Per main call: the reply calls a tool and its output comes back as a `tool` message (`tool_response`). */
      tool_response: Probability.default(0),
      /** Per main call: no reasoning parser, the think block stays in the content (`emit_fault`). */
      think_in_content: Probability.default(0),
      /** Per main call: the content sampled one token per character (`emit_fault`). */
      char_tokens: Probability.default(0),
      /** Per main call: a tool call with no arguments the parser drops (`emit_fault`). */
      tool_call_zero_args: Probability.default(0),
      /** Per main call: a tool call whose argument holds a literal `</tool_call>` (`emit_fault`). */
      tool_call_literal_end: Probability.default(0),
      /** Per main call: the tool-call markers spelled with ordinary tokens (`emit_fault`). */
      tool_call_split_markers: Probability.default(0),
      /** Per main call: the parser returns the call's numbers as strings (`emit_fault`). */
      tool_call_numbers_as_strings: Probability.default(0),
      /** Per task: the group's first rollout compacts and the others end short, so its row counts differ. */
      uneven_group: Probability.default(0),
    })
    .prefault({}),
});
export type GeneratorParams = z.infer<typeof GeneratorParamsSchema>;
export type GeneratorParamsInput = z.input<typeof GeneratorParamsSchema>;

/** The defaults: what `harness replay` and `harness episodes generate` use unless told otherwise. */
export const DEFAULT_GENERATOR_PARAMS: GeneratorParams = GeneratorParamsSchema.parse({});
