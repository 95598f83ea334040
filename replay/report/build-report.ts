import type { MilesProfile } from '../../contracts/miles-profile.ts';
import type { TreeMetadata } from '../../contracts/wire-sample.ts';
import { accountRollout } from '../accounting/rollout-accounting.ts';
import { accountStep } from '../accounting/step-accounting.ts';
import type { CheckRun } from '../checks/run-checks.ts';
import { trainRolloutId } from '../grpo/loss-weights.ts';
import type { TrainSchedule } from '../grpo/train-schedule.ts';
import type { DropReason, Rollout } from '../model/rollout.ts';
import { rolloutKey } from '../model/rollout-key.ts';
import { leafOf, type ReplaySample } from '../model/sample.ts';
import type { StepOutcome } from '../step/process-step.ts';
import { runVerdict } from './exit-code.ts';
import type {
  ReplayReport,
  ReportGroup,
  ReportMilesProfile,
  ReportRollout,
  ReportStep,
  ReportTrainSchedule,
  ReportTree,
} from './schema.ts';
import { rolloutStrips } from './token-strip.ts';

export type ReportConfig = ReplayReport['config'];

/** How the report names a Miles profile, with the picker the samples op ran (its import path or function name). */
export function reportedMilesProfile(profile: MilesProfile, picker: string): ReportMilesProfile {
  return {
    name: profile.name,
    commits: [...profile.commits],
    checked_against_miles: profile.checkedAgainstMiles,
    picker,
  };
}

function stringOrNull(value: unknown): string | null {
  return typeof value === 'string' ? value : null;
}

function treeView(tree: TreeMetadata, samples: readonly ReplaySample[]): ReportTree {
  const kept = new Set<number>();
  const sampleOfLeaf = new Map<number, number>();
  samples.forEach((s, position) => {
    const leaf = leafOf(s);
    if (!leaf) return;
    sampleOfLeaf.set(leaf.node_id, position);
    for (const id of leaf.path_node_ids) kept.add(id);
  });
  const leafIds = new Set(tree.leaves.map((l) => l.node_id));
  const firstRoot = tree.nodes.find((n) => n.parent === null)?.id ?? null;
  return {
    nodes: tree.nodes.map((n) => ({
      id: n.id,
      parent: n.parent,
      completion_span: n.completion_span,
      num_tokens: n.num_tokens,
      truncated: n.truncated,
      leaf: leafIds.has(n.id),
      kept: kept.has(n.id),
      later_root: n.parent === null && n.id !== firstRoot,
      response_id: n.response_id,
    })),
    leaves: tree.leaves.map((l) => ({
      node_id: l.node_id,
      path_node_ids: l.path_node_ids,
      kept: sampleOfLeaf.has(l.node_id),
      sample: sampleOfLeaf.get(l.node_id) ?? null,
    })),
  };
}

function reportRollout(
  rollout: Rollout,
  outcome: StepOutcome,
  advantageOf: ReadonlyMap<ReplaySample, { advantage: number; perSample: number }>,
  dropped: DropReason | null,
): ReportRollout {
  const retained = dropped === null;
  const strips = rolloutStrips(rollout);
  const first = rollout.samples[0];
  const weight = retained
    ? outcome.lossWeights.find((w) => w.rollout === trainRolloutId(rollout, -1))
    : undefined;
  const samples = rollout.samples.map((sample, position) => {
    const leaf = leafOf(sample);
    const strip = strips[position]!;
    const adv = advantageOf.get(sample);
    return {
      leaf_node_id: leaf?.node_id ?? null,
      path_node_ids: leaf?.path_node_ids ?? [],
      status: sample.status,
      reward: sample.reward,
      advantage: adv?.advantage ?? null,
      per_sample_advantage: adv?.perSample ?? null,
      token_count: sample.tokens.length,
      response_length: sample.response_length,
      trainable_tokens: strip.trainable,
      masked_shared_tokens: strip.maskedShared,
      loss_mask: sample.loss_mask ?? new Array<number>(sample.response_length).fill(1),
      strip: strip.runs,
    };
  });
  return {
    rollout_id: rollout.rollout_id,
    rollout_key: rolloutKey(rollout),
    index: rollout.index,
    instance_id: stringOrNull(first?.metadata.instance_id),
    exit_status: stringOrNull(first?.metadata.exit_status),
    reward: first?.reward ?? null,
    advantage: samples[0]?.advantage ?? null,
    aborted: rollout.aborted,
    abort_reason: rollout.abort_reason,
    episode: rollout.episode,
    trainable_tokens: samples.reduce((a, s) => a + s.trainable_tokens, 0),
    masked_shared_tokens: samples.reduce((a, s) => a + s.masked_shared_tokens, 0),
    total_response_length: samples.reduce((a, s) => a + s.response_length, 0),
    loss_weight: weight
      ? {
          per_token: weight.per_token,
          total: weight.total,
          naive_total: weight.naive_total,
          train_step: weight.train_step,
          trained: weight.trained,
          loss_divisor: weight.loss_divisor,
        }
      : null,
    tree: rollout.tree ? treeView(rollout.tree, rollout.samples) : null,
    samples,
    accounting: accountRollout(rollout, dropped),
  };
}

function scheduleView(schedule: TrainSchedule): ReportTrainSchedule {
  return {
    mode: schedule.mode,
    global_batch_size: schedule.global_batch_size,
    dp_size: schedule.dp_size,
    distinct_rollouts: schedule.distinct_rollouts,
    steps: schedule.steps.map((s) => ({
      rollouts: s.rollouts === null ? null : s.rollouts.map(Number),
      row_count: s.row_count,
      loss_divisor: s.loss_divisor,
    })),
    dropped_rollouts: schedule.dropped_rollouts.map(Number),
    dropped_rows: schedule.dropped_rows.length,
    error: schedule.error,
  };
}

/** One step of the report, from its outcome (a streamed run writes it out and lets the outcome go). */
export function reportStep(outcome: StepOutcome): ReportStep {
  const advantageOf = new Map<ReplaySample, { advantage: number; perSample: number }>();
  const { advantages, perSample } = outcome;
  if (advantages && perSample)
    outcome.rows.forEach((row, i) => {
      advantageOf.set(row, { advantage: advantages[i]!, perSample: perSample[i]! });
    });
  const statsOf = new Map<number, { mean: number; std: number | null }>();
  for (const g of outcome.normalization?.groups ?? []) {
    const first = outcome.rows[g.rows[0]!];
    if (first?.group_index != null) statsOf.set(first.group_index, { mean: g.mean, std: g.std });
  }
  const groups: ReportGroup[] = outcome.groups.map((group) => {
    const stats = statsOf.get(group.group_index);
    return {
      group_index: group.group_index,
      instance_id: stringOrNull(group.rollouts[0]?.samples[0]?.metadata.instance_id),
      dropped: group.dropped,
      reward_mean: group.dropped === null ? (stats?.mean ?? null) : null,
      reward_std: group.dropped === null ? (stats?.std ?? null) : null,
      rollouts: group.rollouts.map((r) => reportRollout(r, outcome, advantageOf, group.dropped)),
    };
  });
  return {
    step: outcome.step,
    metrics: outcome.metrics,
    num_rollouts: outcome.lossWeights.filter((w) => w.trained).length,
    train_schedule: scheduleView(outcome.schedule),
    duration_ms: outcome.durationMs,
    normalization_error: outcome.error,
    accounting: accountStep(outcome.groups),
    groups,
  };
}

/** Everything in the report but its steps: what a streamed run can only write once the run ends. */
export type ReportFrame = Omit<ReplayReport, 'steps'>;

/** The report's frame from the check run and the config (keys in the report's order). */
export function reportFrame(checks: CheckRun, config: ReportConfig): ReportFrame {
  return {
    format: 'harness-replay/2',
    config,
    verdict: runVerdict(checks.verdict, config.strict),
    checks_verdict: checks.verdict,
    checks: checks.results.map((result) => ({ ...result, miles_profile: config.miles_profile.name })),
    skipped_checks: checks.skipped,
  };
}

/** The whole report: the frame with the steps in their place (the key order `JSON.stringify` keeps). */
export function withSteps(frame: ReportFrame, steps: ReportStep[]): ReplayReport {
  return {
    format: frame.format,
    config: frame.config,
    verdict: frame.verdict,
    checks_verdict: frame.checks_verdict,
    steps,
    checks: frame.checks,
    skipped_checks: frame.skipped_checks,
  };
}

/** Assembles the JSON report from the processed steps and the check run. */
export function buildReport(
  outcomes: readonly StepOutcome[],
  checks: CheckRun,
  config: ReportConfig,
): ReplayReport {
  return withSteps(reportFrame(checks, config), outcomes.map(reportStep));
}
