import type { Evidence } from '../checks/evidence-schema.ts';
import type { CheckRun } from '../checks/run-checks.ts';
import type { CheckResult } from '../checks/types.ts';
import { type DumpEvidence, MAX_EVIDENCE, type SmokeCheck } from './check-result.ts';

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

const rank = (e: Evidence): number => (e.severity === 'fail' ? 0 : e.severity === 'finding' ? 1 : 2);

function fromReplayResult(result: CheckResult): SmokeCheck {
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
