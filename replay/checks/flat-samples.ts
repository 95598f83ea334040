import { HarnessError } from '../../common/errors.ts';
import { groupIndex, sampleIndex } from '../model/ids.ts';
import type { Group, Rollout } from '../model/rollout.ts';
import { rolloutKey } from '../model/rollout-key.ts';
import type { ReplaySample } from '../model/sample.ts';

/**
 * Rebuilds groups and rollouts from flattened rows (a converted `rollout_data/<step>.pt`), the way the
 * smoke run's checks bucket them (docs/gpu-smoke.md): by `group_index`, then by `rollout_id` if set,
 * else `index`. Trees and request logs are unknown (null); every group counts as kept, since Miles dumps
 * after the filter.
 */
export function groupsFromFlatSamples(rows: readonly ReplaySample[]): Group[] {
  const groups = new Map<number, Map<number, ReplaySample[]>>();
  rows.forEach((row, position) => {
    if (row.group_index === null || row.index === null)
      throw new HarnessError('config.dump_row_unkeyed', `row ${position} lacks group_index or index`, {
        details: { row: position },
      });
    const key = rolloutKey({ rollout_id: row.rollout_id, index: row.index });
    let rollouts = groups.get(row.group_index);
    if (!rollouts) {
      rollouts = new Map();
      groups.set(row.group_index, rollouts);
    }
    rollouts.set(key, [...(rollouts.get(key) ?? []), row]);
  });
  return [...groups].map(([group, rollouts]) => ({
    group_index: groupIndex(group),
    dropped: null,
    rollouts: [...rollouts.values()].map(
      (samples): Rollout => ({
        group_index: groupIndex(group),
        index: sampleIndex(samples[0]!.index!),
        rollout_id: samples.find((s) => s.rollout_id !== null)?.rollout_id ?? null,
        samples,
        aborted: samples.some((s) => s.status === 'aborted'),
        abort_reason: null,
        episode: null,
        tree: null,
        requests: null,
      }),
    ),
  }));
}
