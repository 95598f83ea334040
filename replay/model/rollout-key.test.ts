import { describe, expect, it } from 'vitest';
import { rolloutIdentity, rolloutKey } from './rollout-key.ts';

// Miles' rule, stated as its code states it: the rollout metrics' `_get_rollout_key` returns
// ("rollout", group_index, rollout_id), else ("sample", group_index, index), else ("position", group_index,
// position) (radixark/miles@0174ab47 miles/ray/rollout/metrics.py), so the kinds keep a rollout id and a
// sample index of the same number apart; the trainer's `rollout_ids` column is `rollout_id if rollout_id is
// not None else index` (radixark/miles@31f1ca96 miles/ray/rollout/train_data_conversion.py), None where
// both are None.
describe('the rollout key', () => {
  it('names the column it read, so a rollout id and a sample index of the same number differ', () => {
    expect(rolloutIdentity({ rollout_id: 5, index: 9 }, 2)).toEqual({ kind: 'rollout', id: 5 });
    expect(rolloutIdentity({ rollout_id: null, index: 5 }, 2)).toEqual({ kind: 'sample', id: 5 });
    expect(rolloutIdentity({ rollout_id: null, index: null }, 2)).toEqual({ kind: 'position', id: 2 });
    expect(rolloutIdentity({ rollout_id: 0, index: 0 }, 0).kind).not.toBe(
      rolloutIdentity({ rollout_id: null, index: 0 }, 0).kind,
    );
  });

  it('is the trainer’s id column: rollout_id, else index, else null', () => {
    expect(rolloutKey({ rollout_id: 7, index: 3 })).toBe(7);
    expect(rolloutKey({ rollout_id: 0, index: 3 })).toBe(0);
    expect(rolloutKey({ rollout_id: null, index: 3 })).toBe(3);
    expect(rolloutKey({ rollout_id: null, index: null })).toBeNull();
  });
});
