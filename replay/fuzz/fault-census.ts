import type { FaultKind } from '../../contracts/fault-scenario.ts';
import type { Turn } from '../../fakes/harbor/episode-schema.ts';
import type { GeneratedTask } from '../../fakes/harbor/generator/generate.ts';
import type { PlannedRollout } from '../../fakes/harbor/generator/rollout-variant.ts';

/**
 * Which catalogue fault kinds a fuzz case's episodes carry, counted from the scripts' keys (one count per
 * turn that carries a per-call fault, per rollout for a per-rollout one, per group for an uneven group):
 * the campaign's "faults mixed per kind", and the kinds a failing batch held.
 */

export type FaultCensus = Partial<Record<FaultKind, number>>;

/** The kinds one turn's script keys make. */
function turnKinds(turn: Turn): FaultKind[] {
  const kinds: FaultKind[] = [];
  if (turn.restart === true) kinds.push('resent_first_turn');
  if (turn.rollback === true) kinds.push('rollback_then_longer');
  if (turn.concurrent === true) kinds.push('concurrent_requests');
  if (turn.upstream_abort === true) kinds.push('upstream_abort');
  if (turn.recover === true) kinds.push('length_recover');
  if (turn.strip_thinking === true) kinds.push('thinking_stripped');
  if (turn.tool_response === true) kinds.push('newline_after_im_end');
  if (turn.end_token === 'endoftext') kinds.push('endoftext_turn_end');
  if (turn.discard !== undefined && turn.discard > 0) kinds.push('retry_after_rollback');
  if (turn.emit_fault === 'think_in_content') kinds.push('empty_think_rerendered');
  else if (turn.emit_fault === 'char_tokens') kinds.push('retokenized_text');
  else if (turn.emit_fault !== undefined) kinds.push(turn.emit_fault);
  return kinds;
}

/** The kinds a rollout's ending makes. */
function endingKinds(rollout: PlannedRollout): FaultKind[] {
  if (rollout.end === 'policy_failure') return ['infra_abort_scored_zero'];
  if (rollout.end === 'first_turn_failure') return ['infra_abort_group_dropped'];
  if (rollout.end === 'truncation') return ['length_abort'];
  return [];
}

function add(census: FaultCensus, kind: FaultKind, n = 1): void {
  census[kind] = (census[kind] ?? 0) + n;
}

/** The census of the first `samples` rollouts of each task (the ones a group's trials play first). */
export function faultCensus(tasks: readonly GeneratedTask[], samples: number): FaultCensus {
  const census: FaultCensus = {};
  for (const task of tasks) {
    const played = task.rollouts.slice(0, samples);
    for (const rollout of played) {
      for (const turn of rollout.variant.turns ?? []) for (const kind of turnKinds(turn)) add(census, kind);
      for (const kind of endingKinds(rollout)) add(census, kind);
    }
    if (samples > 1 && played[0]?.shape === 'compacts') {
      add(census, 'group_rows_differ_grpo');
      add(census, 'group_rows_differ_metrics');
      add(census, 'group_rows_differ_pass_at_k');
    }
  }
  return census;
}

/** Adds `more` into `into`. */
export function addCensus(into: FaultCensus, more: FaultCensus): void {
  for (const [kind, n] of Object.entries(more) as [FaultKind, number][]) add(into, kind, n);
}
