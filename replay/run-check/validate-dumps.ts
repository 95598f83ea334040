import type { Evidence } from '../checks/evidence-schema.ts';
import { type CheckRun, runApplicableChecks } from '../checks/index.ts';
import type { CheckResult } from '../checks/types.ts';
import { type DumpEvidence, MAX_EVIDENCE, type SmokeCheck } from './check-result.ts';
import { checkCompactionHappened } from './checks/compaction-happened.ts';
import { checkLoggedMetricsMatch } from './checks/logged-metrics-match.ts';
import { checkLossMaskShape } from './checks/loss-mask-shape.ts';
import { checkTrainMaskSums } from './checks/train-mask-sums.ts';
import type { ConvertedDumps } from './dump-schema.ts';
import type { MetricTable } from './log/metric-table.ts';
import { checkDataFromDumps, type DumpRunShape } from './to-check-data.ts';

function fromReplayEvidence(e: Evidence): DumpEvidence {
  return {
    kind: e.kind,
    ...(e.step === null ? {} : { step: e.step }),
    group_index: e.group_index,
    rollout: e.rollout,
    ...(e.sample === null ? {} : { row: e.sample }),
    ...(e.token_range === null ? {} : { token_range: e.token_range }),
    detail: e.detail,
  };
}

export function fromReplayResult(result: CheckResult): SmokeCheck {
  const { fail, finding } = result.counts;
  // The replay's `info` evidence (e.g. a superseded retry) is context, not a problem: keep problems first.
  const ordered = [...result.evidence].sort((a, b) => rank(a) - rank(b));
  return {
    name: result.name,
    source: 'replay',
    verdict: result.verdict,
    summary: `${result.title} (${result.mode}): ${fail} failing, ${finding} findings`,
    evidence: ordered.slice(0, MAX_EVIDENCE).map(fromReplayEvidence),
  };
}

const rank = (e: Evidence): number => (e.severity === 'fail' ? 0 : e.severity === 'finding' ? 1 : 2);

/**
 * Every check the smoke run applies to a run's converted dumps: the replay's invariant checks through
 * the dump adapter (those the dumps cannot support are `undecided`, naming what they lack), then the
 * checks that only make sense on Miles' own dumps.
 */
export function validateDumps(
  dumps: ConvertedDumps,
  shape: DumpRunShape,
  metrics: MetricTable,
): SmokeCheck[] {
  const run = runApplicableChecks(checkDataFromDumps(dumps, shape));
  return [
    ...replayChecksAsSmoke(run),
    checkLossMaskShape(dumps.rollout),
    checkCompactionHappened(dumps.rollout),
    checkTrainMaskSums(dumps.train),
    checkLoggedMetricsMatch(dumps.rollout, metrics, shape.reward_key),
  ];
}

/** The replay's check run as dump checks: those the dumps cannot support are `undecided`, naming what they lack. */
export function replayChecksAsSmoke(run: CheckRun): SmokeCheck[] {
  return [
    ...run.results.map(fromReplayResult),
    ...run.skipped.map(
      (s): SmokeCheck => ({
        name: s.name,
        source: 'replay',
        verdict: 'undecided',
        summary: `the dumps lack ${s.missing.join(', ')}`,
        evidence: [],
      }),
    ),
  ];
}

/** `fail` if any check failed, else `finding` if any had findings, else `pass` (undecided never fails). */
export function overallVerdict(checks: readonly SmokeCheck[]): 'pass' | 'fail' | 'finding' {
  if (checks.some((c) => c.verdict === 'fail')) return 'fail';
  if (checks.some((c) => c.verdict === 'finding')) return 'finding';
  return 'pass';
}
