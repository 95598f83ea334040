import { EMIT_FAULTS } from '../../../contracts/directive.ts';
import type { Turn } from '../episode-schema.ts';
import type { GeneratorParams } from './params.ts';
import type { RandomSource } from './random-source.ts';

/**
 * The generator's catalogue-fault knobs (`params.faults`; docs/field-failures.md "In fuzzing"): each one
 * sets the script keys that make its fault in a Terminus-2 episode. Every draw happens only when its
 * rate is above 0, so an episode without faults uses the random stream exactly as before.
 */

type Faults = GeneratorParams['faults'];

/** What the rollout's turn knows when its main call's faults are drawn. */
export interface CallPlace {
  readonly i: number;
  readonly reasoning: boolean;
  readonly command: string;
  readonly duration: number;
}

function drawn(rate: number, rng: RandomSource): boolean {
  return rate > 0 && rng.chance(rate);
}

/** A `bash` tool call repeating the turn's command, its duration a JSON float (the generator's usual call). */
function bashCall(place: CallPlace, keystrokes = `${place.command}\n`): NonNullable<Turn['tool_calls']> {
  return [
    {
      name: 'bash',
      arguments: `{"keystrokes": ${JSON.stringify(keystrokes)}, "duration": ${place.duration}.0}`,
    },
  ];
}

function drawEmitFault(turn: Turn, faults: Faults, rng: RandomSource, place: CallPlace): void {
  // The emission faults are tried in their declared order; at most one per main call.
  const fault = EMIT_FAULTS.find((knob) => drawn(faults[knob], rng));
  if (fault === undefined) return;
  turn.emit_fault = fault;
  if (fault === 'think_in_content') return;
  if (fault === 'char_tokens') {
    delete turn.tool_calls;
    return;
  }
  // local-inference-lab/vllm#639's argument: a command that writes the closing marker literally.
  turn.tool_calls =
    fault === 'tool_call_literal_end'
      ? bashCall(place, "echo '</tool_call>' > marker.txt\n")
      : (turn.tool_calls ?? bashCall(place));
}

/** The per-main-call faults of one turn. */
export function drawCallFaults(
  turn: Turn,
  params: GeneratorParams,
  rng: RandomSource,
  place: CallPlace,
): void {
  const { faults } = params;
  if (drawn(faults.concurrent, rng)) turn.concurrent = true;
  if (drawn(faults.upstream_abort, rng)) turn.upstream_abort = true;
  if (place.reasoning && place.i > 0 && drawn(faults.strip_thinking, rng)) turn.strip_thinking = true;
  if (drawn(faults.tool_response, rng)) {
    turn.tool_response = true;
    turn.tool_calls ??= bashCall(place);
  }
  drawEmitFault(turn, faults, rng, place);
  // An emission fault on a tool call the next prompt answers: keep the call the fault needs.
  if (turn.tool_response === true && (turn.emit_fault === 'char_tokens' || turn.tool_calls === undefined))
    delete turn.tool_response;
}

/** The turns the per-rollout faults fall on (from turn 1, a rollback from turn 3, before the last turn), or null. */
export interface RolloutFaultTurns {
  readonly restart: number | null;
  readonly rollback: number | null;
  readonly recover: number | null;
}

/** Draws which per-rollout faults the rollout carries and from which turn on they may fall. */
export function drawRolloutFaults(
  params: GeneratorParams,
  rng: RandomSource,
  length: number,
): RolloutFaultTurns {
  const { faults } = params;
  const at = (rate: number, from: number): number | null =>
    length >= from + 2 && drawn(rate, rng) ? rng.int(from, length - 2) : null;
  // A rollback needs a history longer than the first exchange and the prompt after it: from turn 3 on.
  return {
    restart: at(faults.resend_first, 1),
    rollback: at(faults.rollback, 3),
    recover: at(faults.length_recover, 1),
  };
}
