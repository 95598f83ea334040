import { HarnessError } from '../../common/errors.ts';
import { type FaultKind, FaultKindSchema } from '../../contracts/fault-scenario.ts';
import type { GeneratorParamsInput } from '../../fakes/harbor/generator/params.ts';
import type { TokenizerName } from '../../fakes/tokenizer/tito.ts';
import { inexpressibleReason } from '../faults/kinds.ts';

/**
 * `harness fuzz --faults KIND[,KIND…][:RATE]`: catalogue fault kinds (docs/field-failures.md) mixed into the
 * generated episodes at a rate, through the generator's knobs. Each mixable kind is the knob that makes
 * the same fault in a Terminus-2 episode; the other catalogue kinds need behaviour the episode engine does
 * not have yet (a client that strips thinking, a parser that drops tool calls) and are refused by name.
 */
const FUZZ_FAULTS: Partial<Record<FaultKind, (rate: number) => GeneratorParamsInput>> = {
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

export const FUZZ_FAULT_KINDS: readonly FaultKind[] = FaultKindSchema.options.filter(
  (k) => FUZZ_FAULTS[k] !== undefined,
);

/** The rate when `--faults` names none. */
export const DEFAULT_FAULT_RATE = 0.2;

function usage(message: string): HarnessError {
  return new HarnessError(
    'usage.invalid_option_value',
    `fuzz: --faults: ${message}; known kinds: ${FUZZ_FAULT_KINDS.join(', ')} (KIND[,KIND...][:RATE], RATE in [0, 1])`,
    { details: { command: 'fuzz', option: '--faults' } },
  );
}

/** The generator parameters `--faults` asks for, or a usage error naming the known kinds. */
export function faultParams(spec: string, tokenizer: TokenizerName): GeneratorParamsInput {
  const colon = spec.lastIndexOf(':');
  const names = (colon === -1 ? spec : spec.slice(0, colon)).split(',').map((n) => n.trim());
  const rateText = colon === -1 ? null : spec.slice(colon + 1).trim();
  const rate = rateText === null ? DEFAULT_FAULT_RATE : Number(rateText);
  if (rateText !== null && (rateText === '' || !Number.isFinite(rate) || rate < 0 || rate > 1))
    throw usage(`rate ${JSON.stringify(rateText)} is not a number in [0, 1]`);
  let params: GeneratorParamsInput = {};
  for (const name of names) {
    const kind = FaultKindSchema.safeParse(name);
    if (!kind.success) throw usage(`unknown fault kind ${JSON.stringify(name)}`);
    const knob = FUZZ_FAULTS[kind.data];
    if (knob === undefined)
      throw usage(`${name} is a catalogue kind the episode generator cannot mix into episodes yet`);
    const inexpressible = inexpressibleReason(kind.data, tokenizer);
    if (inexpressible !== null) throw usage(`${inexpressible} (use --tokenizer qwen3)`);
    params = { ...params, ...knob(rate) };
  }
  return params;
}
