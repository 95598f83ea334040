import { type DumpEvidence, MAX_EVIDENCE, type SmokeCheck } from '../check-result.ts';
import type { RolloutDump } from '../dump-schema.ts';
import { bucketByRollout } from '../rollout-key.ts';

/**
 * The smoke run tunes every episode to compact, so every step must hold more training samples than
 * rollouts. Rollouts that stayed in one segment are listed as findings (a real policy may end early).
 */
export function checkCompactionHappened(dumps: readonly RolloutDump[]): SmokeCheck {
  const failures: DumpEvidence[] = [];
  const single: DumpEvidence[] = [];
  const perStep: string[] = [];
  for (const dump of dumps) {
    const step = Number(dump.rollout_id);
    const buckets = bucketByRollout(dump.samples);
    perStep.push(`step ${step}: ${dump.samples.length} samples from ${buckets.size} rollouts`);
    if (dump.samples.length <= buckets.size)
      failures.push({
        step,
        detail: `${dump.samples.length} samples from ${buckets.size} rollouts: no rollout produced a second segment`,
      });
    for (const { samples, rows } of buckets.values()) {
      const first = samples[0]!;
      if (samples.length === 1)
        single.push({
          step,
          group_index: first.group_index,
          rollout: first.rollout_id ?? first.index,
          row: rows[0]!,
          detail: 'rollout has a single segment (did not compact)',
        });
    }
  }
  const verdict = failures.length > 0 ? 'fail' : single.length > 0 ? 'finding' : 'pass';
  return {
    name: 'compaction_happened',
    source: 'dumps',
    verdict,
    summary: perStep.join('; '),
    evidence: [...failures, ...single].slice(0, MAX_EVIDENCE),
  };
}
