import type { MilesSwitches } from '../../contracts/miles-profile.ts';
import { accountStep } from '../accounting/step-accounting.ts';
import { groupsFromFlatSamples } from '../checks/flat-samples.ts';
import type { CheckStep } from '../checks/types.ts';
import type { NormalizationConfig } from '../grpo/config.ts';
import type { TrainScheduleConfig } from '../grpo/train-schedule.ts';
import { retainedRollouts } from '../model/retained.ts';
import type { Group } from '../model/rollout.ts';
import { processStep, type StepOutcome } from '../step/process-step.ts';
import type { SmokeCheck } from './check-result.ts';
import { checkCompactionHappened } from './checks/compaction-happened.ts';
import { checkLossMaskShape } from './checks/loss-mask-shape.ts';
import { checkTrainMaskSums } from './checks/train-mask-sums.ts';
import { compareGrpoWithTrainRows } from './grpo-vs-train.ts';
import type { MetricTable } from './log/metric-table.ts';
import { lostBranches, trajectoryIndex } from './lost-branches.ts';
import { compareMetricsWithLog } from './metrics-vs-log.ts';
import type { ReadStep } from './read-step.ts';
import type { RunStep } from './report-schema.ts';
import { advantagesFromShards, dumpSampleToReplay } from './to-check-data.ts';

/** The run's shape: from flags, else read off the first checkable step. */
export interface RunShape {
  readonly normalization: NormalizationConfig;
  readonly train: TrainScheduleConfig;
  readonly rewardKey?: string;
}

export interface CheckedStep {
  readonly entry: RunStep;
  readonly outcome: StepOutcome;
  readonly checkStep: CheckStep;
  readonly dumpChecks: readonly SmokeCheck[];
}

/** The groups of a step's rollout dump (the replay's data model), or null when it has none. */
export function groupsOfStep(read: ReadStep, rewardKey: string | undefined): Group[] | null {
  if (read.rollout === null) return null;
  return groupsFromFlatSamples(read.rollout.samples.map((s) => dumpSampleToReplay(s, rewardKey)));
}

/**
 * Everything `check-run` asks of one step: the replay's `processStep` over the dumped rows (GRPO, the
 * train schedule, every metric Miles logs), the trainer's advantages from the train rows for the
 * invariant checks, GRPO against the train rows, the metrics against the log, the token accounting, the
 * lost branches with their conversation, and the dump-only checks.
 */
export function checkStep(
  read: ReadStep,
  groups: readonly Group[],
  shape: RunShape,
  logged: MetricTable | null,
  how: { readonly expectCompaction: boolean; readonly rolloutMetrics: MilesSwitches['rolloutMetrics'] },
): CheckedStep {
  const time = logged?.get('perf/rollout_time')?.find((p) => p.step === read.step)?.value ?? 0;
  // The metrics as the dumps' Miles logs them (its profile's metrics.py, dump-profile.ts).
  const outcome = processStep(
    read.step,
    groups,
    shape.normalization,
    Math.round(time * 1000),
    shape.train,
    null,
    how.rolloutMetrics,
  );
  const checkStep: CheckStep = {
    step: read.step,
    groups: outcome.groups,
    advantages: advantagesFromShards(outcome.rows, read.train),
  };
  const dumps = read.rollout === null ? [] : [read.rollout];
  const dumpChecks: SmokeCheck[] = [checkLossMaskShape(dumps), checkTrainMaskSums(read.train)];
  if (how.expectCompaction) dumpChecks.push(checkCompactionHappened(dumps));
  const entry: RunStep = {
    step: read.step,
    samples: outcome.rows.length,
    rollouts: retainedRollouts(outcome.groups).length,
    groups: outcome.groups.length,
    train_ranks: read.train.map((t) => t.rank),
    trajectory_rows: read.trajectory.length,
    non_finite_values: read.nonFinite,
    accounting: accountStep(outcome.groups),
    grpo:
      read.train.length === 0 ? null : compareGrpoWithTrainRows(outcome.rows, outcome.advantages, read.train),
    metrics: logged === null ? null : compareMetricsWithLog(read.step, outcome.metrics, logged),
    normalization_error: outcome.error === null ? null : `${outcome.error.code}: ${outcome.error.message}`,
    lost_branches: lostBranches(read.step, outcome.groups, trajectoryIndex(read.trajectory)),
  };
  return { entry, outcome, checkStep, dumpChecks };
}
