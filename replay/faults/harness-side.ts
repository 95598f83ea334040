import type { FaultRollout, FaultScenario, HarnessRowVerdict } from '../../contracts/fault-scenario.ts';
import type { MilesProfile } from '../../contracts/miles-profile.ts';
import type { PolicyLogEntry } from '../../fakes/policy/index.ts';
import { decodeSamples } from '../../fakes/session/index.ts';
import { checkDataFromOutcomes } from '../checks/from-step-outcomes.ts';
import { ALL_CHECKS, runApplicableChecks } from '../checks/run-checks.ts';
import type { ExchangeRecord } from '../conformance/exchanges.ts';
import {
  abortedPlaceholder,
  fillRewards,
  inputSample,
  overlayWireSample,
  stampRolloutId,
} from '../driver/overlay.ts';
import type { PromptRow } from '../driver/prompts.ts';
import { toPolicyRequests } from '../driver/rollout.ts';
import {
  effectiveNormalization,
  type NormalizationConfig,
  NormalizationConfigSchema,
} from '../grpo/config.ts';
import { groupIndex, sampleIndex } from '../model/ids.ts';
import type { Group, Rollout } from '../model/rollout.ts';
import { applyAbortedFilter } from '../step/aborted-filter.ts';
import { processStep } from '../step/process-step.ts';
import { mismatchTypes, sampleStatuses, turnStatuses } from './samples-answer.ts';

/**
 * The harness's side of a catalogue row: the rollouts as the replay driver builds them from what the fake
 * session server answered (the samples decoded and overlaid on the input sample, rollout ids stamped,
 * rewards filled, `check_no_aborted`), one GRPO step (`processStep`), then every check.
 */

/** One rollout as played: its scenario entry, every exchange, and the policy's log for its session. */
export interface PlayedRollout {
  readonly rollout: FaultRollout;
  readonly record: ExchangeRecord;
  readonly requests: readonly PolicyLogEntry[];
}

/** The step's normalisation: the scenario's group size, one prompt per group. */
export function scenarioNormalization(scenario: FaultScenario): NormalizationConfig {
  const groups = new Set(scenario.rollouts.map((r) => r.group)).size;
  return effectiveNormalization(
    NormalizationConfigSchema.parse({
      n_samples_per_prompt: scenario.n_samples_per_prompt,
      rollout_batch_size: groups,
    }),
  );
}

function promptRow(scenario: FaultScenario, rollout: FaultRollout): PromptRow {
  const first = rollout.turns[0]!.request.messages.find((m) => m.role === 'user');
  const prompt = typeof first?.content === 'string' ? first.content : scenario.title;
  return { prompt, metadata: { instance_id: scenario.id, agent_name: 'terminus-2' } };
}

/** A rollout as `agentic_tool_call.generate` leaves it, or `raised` when the samples op answered non-200. */
function builtRollout(scenario: FaultScenario, played: PlayedRollout, position: number): Rollout | 'raised' {
  const group = groupIndex(played.rollout.group);
  const index = sampleIndex(position);
  const input = inputSample(promptRow(scenario, played.rollout), group, index);
  const answer = played.record.exchanges.find((e) => e.step === 'samples');
  if (answer === undefined || answer.status !== 200) return 'raised';
  const reply = decodeSamples(answer.body);
  const requests = toPolicyRequests(played.requests);
  const tree = reply.sessionMetadata.tree;
  const base = { group_index: group, index, episode: null, tree, requests };
  if (reply.samples.length === 0) {
    const samples = [abortedPlaceholder(input)];
    return {
      ...base,
      rollout_id: null,
      samples,
      aborted: true,
      abort_reason: reply.emptyReason ?? 'no_samples',
    };
  }
  let samples = fillRewards(
    stampRolloutId(
      input,
      reply.samples.map((w) => overlayWireSample(input, w)),
    ),
  );
  const custom = played.rollout.sample_rewards;
  if (custom !== undefined) samples = samples.map((s, k) => ({ ...s, reward: custom[k] ?? s.reward }));
  const aborted = samples.some((s) => s.status === 'aborted');
  return {
    ...base,
    rollout_id: samples[0]!.rollout_id,
    samples,
    aborted,
    abort_reason: aborted ? 'aborted_turn' : null,
  };
}

/** The rollouts grouped by prompt, each group filtered as `check_no_aborted` does. */
export function scenarioGroups(scenario: FaultScenario, played: readonly PlayedRollout[]): Group[] {
  const byGroup = new Map<number, Array<Rollout | 'raised'>>();
  played.forEach((p, position) => {
    const list = byGroup.get(p.rollout.group) ?? [];
    list.push(builtRollout(scenario, p, position));
    byGroup.set(p.rollout.group, list);
  });
  return [...byGroup.entries()].map(([g, built]) => {
    const rollouts = built.filter((r): r is Rollout => r !== 'raised');
    if (rollouts.length < built.length)
      return { group_index: groupIndex(g), rollouts, dropped: 'task_raised' };
    return applyAbortedFilter({ group_index: groupIndex(g), rollouts, dropped: null });
  });
}

/** Every check's verdict on the row under a Miles profile, and what GRPO said. */
export function harnessVerdict(
  scenario: FaultScenario,
  played: readonly PlayedRollout[],
  profile: MilesProfile,
): HarnessRowVerdict {
  const groups = scenarioGroups(scenario, played);
  const normalization = scenarioNormalization(scenario);
  // The step's metrics as the profile's Miles logs them.
  const outcome = processStep(0, groups, normalization, 0, undefined, null, profile.switches.rolloutMetrics);
  // A row plays fixed groups; Miles' rollout manager would draw more prompts for a dropped one, so the
  // kept-group count is not the row's to check (rollout_batch_size unknown to the checks).
  const data = { ...checkDataFromOutcomes([outcome], normalization), rollout_batch_size: null };
  const run = runApplicableChecks(data);
  const checks: Record<string, 'pass' | 'fail' | 'finding' | 'skipped'> = {};
  for (const check of ALL_CHECKS)
    checks[check.name] = run.results.find((r) => r.name === check.name)?.verdict ?? 'skipped';
  return {
    turn_statuses: played.map((p) => turnStatuses(p.record)),
    sample_statuses: played.map((p) => sampleStatuses(p.record)),
    mismatch_types: [...new Set(played.flatMap((p) => mismatchTypes(p.record)))].sort(),
    checks,
    conversion_error:
      outcome.error === null
        ? null
        : `${outcome.error.code}: ${outcome.error.message.replace(/^\[harness\] /, '')}`,
    outcome: run.verdict === 'pass' ? 'not_caught' : 'caught',
  };
}
