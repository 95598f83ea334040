import { describe, expect, it } from 'vitest';
import { passRateFromSamples } from '../metrics/pass-rate.ts';
import { retainedRows } from '../model/retained.ts';
import { buildRollout, SHARED_PREFIX } from '../testing/build-rollout.ts';
import { checkDataOf } from '../testing/check-data.ts';
import { oracleCases, oracleGroups } from '../testing/oracle-cases.ts';
import { passAtKGroupsCheck } from './pass-at-k-groups.ts';
import type { CheckData } from './types.ts';

function oracleData(name: string): { data: CheckData; logged: Record<string, number> } {
  const c = oracleCases.find((x) => x.name === name)!;
  const groups = oracleGroups(c).filter((_, k) => c.filter_verdicts[k]!.keep);
  const data: CheckData = {
    steps: [{ step: 0, groups, advantages: null }],
    n_samples_per_prompt: c.args.n_samples_per_prompt,
    rollout_batch_size: groups.length,
    normalization: null,
  };
  return { data, logged: c.logged };
}

// Expectations from Miles' own log_rollout_data at 31f1ca96 (fixtures/miles-oracle/rollout-metrics.json,
// cases run with --log-passrate): the pass@k it logged is the one over the groups this check does not name.
describe('check 10: pass_at_k_counts_every_group (Miles behaviour, a finding)', () => {
  it("names the compacted group Miles' pass@k left out, and only it", () => {
    const { data, logged } = oracleData('passrate-compacted-group');
    const result = passAtKGroupsCheck.run(data);
    expect(result.verdict).toBe('finding');
    expect(result.evidence.map((e) => [e.kind, e.group_index, e.data])).toEqual([
      ['pass_at_k_group_excluded', 0, { rows: 3, rollouts: 2, expected: 2 }],
    ]);
    const excluded = new Set(result.evidence.map((e) => e.group_index));
    const counted = retainedRows(data.steps[0]!.groups).filter((r) => !excluded.has(r.group_index));
    const recomputed = passRateFromSamples(counted, 2);
    expect(recomputed['pass@1']).toBe(logged['passrate/pass@1']);
    expect(recomputed['pass@2']).toBe(logged['passrate/pass@2']);
  });

  it('a step whose every group is compacted: Miles logs no pass@k and the check names every group', () => {
    const { data, logged } = oracleData('passrate-every-group-compacted');
    expect(Object.keys(logged).filter((k) => k.startsWith('passrate/'))).toEqual([]);
    expect(passAtKGroupsCheck.run(data).evidence.map((e) => e.group_index)).toEqual([0]);
  });

  it('passes when every group has one row per rollout, and with one sample per prompt (no pass@k)', () => {
    expect(passAtKGroupsCheck.run(oracleData('zero-std-filter').data).verdict).toBe('pass');
    const compacted = buildRollout({ nodes: SHARED_PREFIX });
    expect(compacted.samples.length).toBeGreaterThan(1);
    expect(passAtKGroupsCheck.run(checkDataOf([compacted], { n: 1 })).verdict).toBe('pass');
  });
});
