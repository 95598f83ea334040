import { agentMetricsLoggedCheck } from './agent-metrics-logged.ts';
import { everySampleTrainableCheck } from './every-sample-trainable.ts';
import { exactlyOnceCheck } from './exactly-once.ts';
import { groupAccountingCheck } from './group-accounting.ts';
import { availableInputs } from './inputs.ts';
import { onlyGeneratedTrainedCheck } from './only-generated-trained.ts';
import { passAtKGroupsCheck } from './pass-at-k-groups.ts';
import { segmentationInvarianceCheck } from './segmentation-invariance.ts';
import { sessionAffinityCheck } from './session-affinity.ts';
import { siblingsAgreeCheck } from './siblings-agree.ts';
import { titoSessionConsistentCheck } from './tito-session-consistent.ts';
import { tokenAccountingCheck } from './token-accounting.ts';
import type { CheckData, CheckResult, InvariantCheck, SkippedCheck, Verdict } from './types.ts';

/**
 * The six checks in issue 6's order, then the token accounting (issue 11), the agent metrics (issue 25)
 * the session's TITO consistency (issue 26), pass@k's group coverage and the workers' session affinity
 * (issue 33).
 */
export const ALL_CHECKS: readonly InvariantCheck[] = [
  exactlyOnceCheck,
  onlyGeneratedTrainedCheck,
  siblingsAgreeCheck,
  everySampleTrainableCheck,
  segmentationInvarianceCheck,
  groupAccountingCheck,
  tokenAccountingCheck,
  agentMetricsLoggedCheck,
  titoSessionConsistentCheck,
  passAtKGroupsCheck,
  sessionAffinityCheck,
];

export interface CheckRun {
  readonly results: CheckResult[];
  readonly skipped: SkippedCheck[];
  /** `fail` if any check failed, else `finding` if any had findings, else `pass`. */
  readonly verdict: Verdict;
}

/** Runs every check whose required inputs the data carries; the others are listed with what they lack. */
export function runApplicableChecks(
  data: CheckData,
  checks: readonly InvariantCheck[] = ALL_CHECKS,
): CheckRun {
  const have = availableInputs(data);
  const results: CheckResult[] = [];
  const skipped: SkippedCheck[] = [];
  for (const check of checks) {
    const missing = check.requires.filter((input) => !have.has(input));
    if (missing.length > 0) skipped.push({ name: check.name, missing });
    else results.push(check.run(data));
  }
  return { results, skipped, verdict: checksVerdict(results) };
}

/** `fail` if any check failed, else `finding` if any had findings, else `pass`. */
export function checksVerdict(results: readonly CheckResult[]): Verdict {
  return results.some((r) => r.verdict === 'fail')
    ? 'fail'
    : results.some((r) => r.verdict === 'finding')
      ? 'finding'
      : 'pass';
}
