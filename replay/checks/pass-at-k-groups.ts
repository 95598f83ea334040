import { rowsByGroup } from '../metrics/pass-rate.ts';
import { retainedRows } from '../model/retained.ts';
import { checkResult, evidence } from './evidence.ts';
import type { Evidence } from './evidence-schema.ts';
import type { CheckData, InvariantCheck } from './types.ts';

const NAME = 'pass_at_k_counts_every_group';
const TITLE = 'pass@k counts every kept group';

/**
 * Miles' own behaviour, a finding per kept group that `--log-passrate`'s pass@k leaves out:
 * `_compute_passrate_from_samples` (radixark/miles@31f1ca96 miles/ray/rollout/metrics.py, the same in
 * the newer metrics.py) groups the logged rows by `group_index` and keeps only groups of exactly
 * `n_samples_per_prompt` rows. Compaction splits a rollout into several rows, so a group with a compacted
 * rollout has more rows than rollouts and its pass@k is never estimated (Miles' warning calls it one
 * with "fewer than" n rows). The recipe leaves `--log-passrate` off; a user who turns it on gets pass@k
 * over the uncompacted groups only, that is over the easier, shorter episodes.
 */
export const passAtKGroupsCheck: InvariantCheck = {
  name: NAME,
  title: TITLE,
  requires: ['group_shape'],
  uses: [],
  run(data: CheckData) {
    const n = data.n_samples_per_prompt as number;
    const out: Evidence[] = [];
    // With one sample per prompt Miles computes no pass@k at all.
    for (const step of n > 1 ? data.steps : []) {
      const kept = step.groups.filter((g) => g.dropped === null);
      for (const rows of rowsByGroup(retainedRows(step.groups))) {
        if (rows.length === n) continue;
        const groupIndex = rows[0]!.group_index;
        const rollouts = kept.find((g) => g.group_index === groupIndex)?.rollouts.length ?? 0;
        out.push(
          evidence(
            'pass_at_k_group_excluded',
            'finding',
            `group ${groupIndex} logs ${rows.length} rows for ${rollouts} rollouts; pass@k keeps only groups of exactly n_samples_per_prompt = ${n} rows, so --log-passrate leaves this group out`,
            { step: step.step, group_index: groupIndex, data: { rows: rows.length, rollouts, expected: n } },
          ),
        );
      }
    }
    return checkResult(NAME, TITLE, 'samples', out);
  },
};
