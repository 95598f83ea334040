import { pyFloat } from '../grpo/float32.ts';
import { retainedRollouts } from '../model/retained.ts';
import type { Rollout } from '../model/rollout.ts';
import { rolloutKey } from '../model/rollout-key.ts';
import { checkResult, evidence } from './evidence.ts';
import type { Evidence } from './evidence-schema.ts';
import type { CheckData, InvariantCheck } from './types.ts';

const NAME = 'siblings_share_rollout_id_and_reward';
const TITLE = 'siblings share one rollout id and one reward';

function rolloutEvidence(rollout: Rollout, step: number | null): Evidence[] {
  const out: Evidence[] = [];
  const at = { step, rollout };
  const samples = rollout.samples;
  const rewards = samples.map((s) => s.reward);
  if (rewards.some((r) => r === null))
    out.push(
      evidence('reward_missing', 'fail', 'a retained sample has no reward', {
        ...at,
        sample: rewards.indexOf(null),
        data: { rewards },
      }),
    );
  else if (rewards.some((r) => r !== rewards[0]))
    out.push(
      evidence(
        'reward_mismatch',
        'fail',
        `all samples in rollout ${rolloutKey(rollout)} must share one reward; samples have rewards [${rewards.map((r) => pyFloat(r!)).join(', ')}]`,
        { ...at, sample: rewards.findIndex((r) => r !== rewards[0]), data: { rewards } },
      ),
    );
  if (samples.length < 2) return out;
  // validate_compact_rollout_ids: siblings must all carry the same non-null id.
  const ids = samples.map((s) => s.rollout_id);
  const unset = ids.flatMap((id, i) => (id === null ? [i] : []));
  if (unset.length > 0)
    out.push(
      evidence('rollout_id_unset', 'fail', `rollout_id is unset on positions [${unset.join(', ')}]`, {
        ...at,
        sample: unset[0]!,
        data: { rollout_ids: ids },
      }),
    );
  else if (ids.some((id) => id !== ids[0]))
    out.push(
      evidence(
        'rollout_id_mismatch',
        'fail',
        `Sibling samples from one compact rollout must share rollout_id; got [${ids.join(', ')}]`,
        { ...at, sample: ids.findIndex((id) => id !== ids[0]), data: { rollout_ids: ids } },
      ),
    );
  else if (Number(ids[0]) !== Number(rollout.index))
    out.push(
      evidence(
        'rollout_id_not_index',
        'fail',
        `siblings carry rollout_id ${ids[0]}, but the driver stamps the input's index ${rollout.index}`,
        { ...at, data: { rollout_id: ids[0] ?? null, index: rollout.index } },
      ),
    );
  const samplesDisagree = samples.some(
    (s) => s.group_index !== rollout.group_index || s.index !== rollout.index,
  );
  if (samplesDisagree)
    out.push(
      evidence('sibling_identity_mismatch', 'fail', 'siblings differ in group_index or index', {
        ...at,
        data: { group_indices: samples.map((s) => s.group_index), indices: samples.map((s) => s.index) },
      }),
    );
  return out;
}

/**
 * Check 3: siblings carry one non-null rollout id (the input's index) and one raw reward, so GRPO counts
 * the episode once. Across rollouts of a step, the trainer's id (`rollout_id`, else `index`) must be
 * unique: it keys `rollout_mask_sums` and the schedule without `group_index` (radixark/miles@31f1ca96
 * miles/ray/rollout/train_data_conversion.py `_compute_rollout_mask_sums`, miles/utils/dp_schedule.py).
 */
export const siblingsAgreeCheck: InvariantCheck = {
  name: NAME,
  title: TITLE,
  requires: [],
  uses: [],
  run(data: CheckData) {
    const out: Evidence[] = [];
    for (const step of data.steps) {
      const rollouts = retainedRollouts(step.groups);
      const byKey = new Map<number, Rollout[]>();
      for (const rollout of rollouts) {
        for (const e of rolloutEvidence(rollout, step.step)) out.push(e);
        const key = rolloutKey(rollout);
        byKey.set(key, [...(byKey.get(key) ?? []), rollout]);
      }
      for (const [key, same] of byKey)
        if (same.length > 1)
          out.push(
            evidence(
              'rollout_id_collision',
              'fail',
              `${same.length} rollouts share the trainer id ${key}; their mask sums and schedule would merge`,
              { step: step.step, rollout: same[1]!, data: { groups: same.map((r) => r.group_index) } },
            ),
          );
    }
    return checkResult(NAME, TITLE, 'samples', out);
  },
};
