import { HarnessError } from '../../common/errors.ts';
import { type FaultKind, FaultKindSchema } from '../../contracts/fault-scenario.ts';
import type { GeneratorParams, GeneratorParamsInput } from '../../fakes/harbor/generator/params.ts';
import type { TokenizerName } from '../../fakes/tokenizer/tito.ts';
import { inexpressibleReason } from '../faults/kinds.ts';

/**
 * `harness fuzz --faults KIND[,KIND…][:RATE]`: catalogue fault kinds (docs/field-failures.md) mixed into the
 * generated episodes at a rate, through the generator's knobs. Each mixable kind is the knob that makes
 * the same fault in a Terminus-2 episode (fakes/harbor/generator/fault-knobs.ts); a kind that cannot be
 * a property of one generated episode is refused with the reason.
 */

type FaultKnob = keyof GeneratorParams['faults'];

/** The generator's own rates for the kinds it had before `params.faults`. */
const RATE_KNOBS: Partial<Record<FaultKind, (rate: number) => GeneratorParamsInput>> = {
  /** A completed reply thrown away and the same request re-sent (twin siblings). */
  retry_after_rollback: (rate) => ({ retry_rate: rate }),
  /** The policy answers 5xx on every attempt of a main call: AgentError, the trial scored 0. */
  infra_abort_scored_zero: (rate) => ({ policy_failure_rate: rate }),
  /** The first call fails for good: nothing recorded, an aborted rollout, its group dropped. */
  infra_abort_group_dropped: (rate) => ({ first_turn_failure_rate: rate }),
  /** A reply past the response limit ends the trial (response-length policy `abort`). */
  length_abort: (rate) => ({ truncation_rate: rate }),
  /** A main reply ends with `<|endoftext|>` (the `end_token` directive). */
  endoftext_turn_end: (rate) => ({ endoftext_rate: rate }),
};

/** The kinds `params.faults` makes; the three group-row kinds are one episode property seen by three consumers. */
export const FAULT_KNOBS: Partial<Record<FaultKind, FaultKnob>> = {
  resent_first_turn: 'resend_first',
  rollback_then_longer: 'rollback',
  concurrent_requests: 'concurrent',
  upstream_abort: 'upstream_abort',
  length_recover: 'length_recover',
  thinking_stripped: 'strip_thinking',
  newline_after_im_end: 'tool_response',
  empty_think_rerendered: 'think_in_content',
  retokenized_text: 'char_tokens',
  tool_call_zero_args: 'tool_call_zero_args',
  tool_call_literal_end: 'tool_call_literal_end',
  tool_call_split_markers: 'tool_call_split_markers',
  tool_call_numbers_as_strings: 'tool_call_numbers_as_strings',
  group_rows_differ_grpo: 'uneven_group',
  group_rows_differ_metrics: 'uneven_group',
  group_rows_differ_pass_at_k: 'uneven_group',
};

/** Kinds no generated episode can carry, and why. */
const NOT_AN_EPISODE: Partial<Record<FaultKind, string>> = {
  sibling_rewards_differ:
    'sibling_rewards_differ is not a property of one generated episode: the rewards come from Miles\' custom reward function, not the agent, and Harbor\'s /run result carries one reward per trial (docs/harbor.md "API")',
};

export const FUZZ_FAULT_KINDS: readonly FaultKind[] = FaultKindSchema.options.filter(
  (k) => RATE_KNOBS[k] !== undefined || FAULT_KNOBS[k] !== undefined,
);

/** The kinds `tokenizer` can mix: the deep tier's campaign mixes all of them. */
export function mixableKinds(tokenizer: TokenizerName): FaultKind[] {
  return FUZZ_FAULT_KINDS.filter((k) => inexpressibleReason(k, tokenizer) === null);
}

/** The rate when `--faults` names none. */
export const DEFAULT_FAULT_RATE = 0.2;

function usage(message: string): HarnessError {
  return new HarnessError(
    'usage.invalid_option_value',
    `fuzz: --faults: ${message}; known kinds: ${FUZZ_FAULT_KINDS.join(', ')} (KIND[,KIND...][:RATE], RATE in [0, 1])`,
    { details: { command: 'fuzz', option: '--faults' } },
  );
}

/** One `--faults` kind and the generator parameters that inject it; shrinking may drop it from a failure. */
export interface InjectedFault {
  readonly kind: FaultKind;
  readonly params: GeneratorParamsInput;
}

/** The kinds `--faults` asks for, each with its parameters, or a usage error naming the known kinds. */
export function injectedFaults(spec: string, tokenizer: TokenizerName): InjectedFault[] {
  const colon = spec.lastIndexOf(':');
  const names = (colon === -1 ? spec : spec.slice(0, colon)).split(',').map((n) => n.trim());
  const rateText = colon === -1 ? null : spec.slice(colon + 1).trim();
  const rate = rateText === null ? DEFAULT_FAULT_RATE : Number(rateText);
  if (rateText !== null && (rateText === '' || !Number.isFinite(rate) || rate < 0 || rate > 1))
    throw usage(`rate ${JSON.stringify(rateText)} is not a number in [0, 1]`);
  const injected: InjectedFault[] = [];
  for (const name of names) {
    const kind = FaultKindSchema.safeParse(name);
    if (!kind.success) throw usage(`unknown fault kind ${JSON.stringify(name)}`);
    const refused = NOT_AN_EPISODE[kind.data];
    if (refused !== undefined) throw usage(refused);
    const inexpressible = inexpressibleReason(kind.data, tokenizer);
    if (inexpressible !== null) throw usage(`${inexpressible} (use --tokenizer qwen3)`);
    if (injected.some((f) => f.kind === kind.data)) continue;
    const knob = FAULT_KNOBS[kind.data];
    const params = knob !== undefined ? { faults: { [knob]: rate } } : RATE_KNOBS[kind.data]!(rate);
    injected.push({ kind: kind.data, params });
  }
  return injected;
}

/** Several kinds' generator parameters as one (later ones win; the `faults` knobs merged). */
export function mergeFaultParams(all: readonly GeneratorParamsInput[]): GeneratorParamsInput {
  let params: GeneratorParamsInput = {};
  for (const p of all)
    params =
      p.faults === undefined
        ? { ...params, ...p }
        : { ...params, ...p, faults: { ...params.faults, ...p.faults } };
  return params;
}

/** The generator parameters `--faults` asks for, or a usage error naming the known kinds. */
export function faultParams(spec: string, tokenizer: TokenizerName): GeneratorParamsInput {
  return mergeFaultParams(injectedFaults(spec, tokenizer).map((f) => f.params));
}
