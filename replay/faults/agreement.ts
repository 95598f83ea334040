import { isDeepStrictEqual } from 'node:util';
import type { HarnessRowVerdict, MilesRowVerdict } from '../../contracts/fault-scenario.ts';

/**
 * Whether the harness and Miles agree on a row under one profile (docs/field-failures.md "The table"): the
 * fake answered every exchange as Miles did, and the harness's observables are Miles' (turn and sample
 * statuses, mismatch types, whether the reward conversion raises, and pass@k's check finding a group
 * exactly where Miles' pass@k left one out). The list names each observable that differs.
 */
export function disagreements(harness: HarnessRowVerdict, miles: MilesRowVerdict): string[] {
  const out: string[] = [];
  if (!miles.fake_agrees) out.push(`fake answered differently: ${miles.differences.join('; ')}`);
  if (!isDeepStrictEqual(harness.turn_statuses, miles.turn_statuses)) out.push('turn statuses');
  if (!isDeepStrictEqual(harness.sample_statuses, miles.sample_statuses)) out.push('sample statuses');
  if (!isDeepStrictEqual(harness.mismatch_types, miles.mismatch_types)) out.push('mismatch types');
  if ((harness.conversion_error !== null) !== 'raised' in miles.rewards) out.push('reward conversion raises');
  const passAtK = harness.checks.pass_at_k_counts_every_group;
  if (passAtK !== undefined && (passAtK === 'finding') !== miles.passrate_excluded_groups > 0)
    out.push('pass@k groups left out');
  return out;
}
