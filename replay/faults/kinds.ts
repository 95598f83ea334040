import type { FaultKind } from '../../contracts/fault-scenario.ts';
import type { TokenizerName } from '../../fakes/tokenizer/tito.ts';

/**
 * What each catalogue fault kind needs of the tokenizer: a fault that lives in the token ids (a turn ended
 * by `<|endoftext|>`, a split tool-call marker) can only be stated on Qwen3's real ids; on the toy's there is
 * no such token, so a scenario or a fuzz campaign asking for it there is refused with this reason.
 */
interface KindFacts {
  /** The tokenizers that can express the fault. */
  readonly tokenizers: readonly TokenizerName[];
  /** Why the others cannot (shown in the refusal). */
  readonly why?: string;
}

const ANY: KindFacts = { tokenizers: ['toy', 'qwen3'] };
const qwen3Only = (why: string): KindFacts => ({ tokenizers: ['qwen3'], why });
/** The fault is a difference between the ids the policy emits and the message its parser returns. */
const PARSED_APART =
  "it is a difference between the ids the policy emits and the message its parser returns, and toy ids are the message's words (stated ids cannot be decoded on the toy)";

export const FAULT_KIND_FACTS: Readonly<Record<FaultKind, KindFacts>> = {
  resent_first_turn: ANY,
  retry_after_rollback: ANY,
  rollback_then_longer: ANY,
  concurrent_requests: ANY,
  upstream_abort: ANY,
  infra_abort_scored_zero: ANY,
  infra_abort_group_dropped: ANY,
  length_recover: ANY,
  length_abort: ANY,
  endoftext_turn_end: qwen3Only('the toy tokenizer has one end token and no <|endoftext|>'),
  empty_think_rerendered: qwen3Only("the toy render has no <think> block (it is Qwen3's template)"),
  newline_after_im_end: qwen3Only('the toy render has no newline token after its end token'),
  thinking_stripped: ANY,
  retokenized_text: qwen3Only('a toy word has exactly one id: no text has two tokenizations'),
  tool_call_zero_args: qwen3Only(PARSED_APART),
  tool_call_literal_end: qwen3Only(PARSED_APART),
  tool_call_split_markers: qwen3Only(PARSED_APART),
  tool_call_numbers_as_strings: qwen3Only(PARSED_APART),
  group_rows_differ_grpo: ANY,
  group_rows_differ_metrics: ANY,
  group_rows_differ_pass_at_k: ANY,
  sibling_rewards_differ: ANY,
};

/** Why `tokenizer` cannot express `kind`, or null when it can. */
export function inexpressibleReason(kind: FaultKind, tokenizer: TokenizerName): string | null {
  const facts = FAULT_KIND_FACTS[kind];
  if (facts.tokenizers.includes(tokenizer)) return null;
  return `fault ${kind} cannot be expressed on ${tokenizer} ids: ${facts.why ?? 'not supported'}`;
}
