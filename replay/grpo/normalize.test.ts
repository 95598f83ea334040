import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { workedExampleRows } from '../testing/worked-example.ts';
import type { NormalizationConfig } from './config.ts';
import { normalizeRewards } from './normalize.ts';
import type { RewardRow } from './reward-groups.ts';

const config: NormalizationConfig = {
  advantage_estimator: 'grpo',
  rewards_normalization: true,
  grpo_std_normalization: true,
  n_samples_per_prompt: 4,
  rollout_batch_size: 1,
};

describe('normalizeRewards (per rollout, as Miles)', () => {
  it('reproduces the worked example: ±0.8660239 broadcast to every sibling', () => {
    const { normalized, groups } = normalizeRewards(workedExampleRows(), config);
    const expected = [1, -1, -1, -1, -1, 1, 1].map((s) => s * 0.8660239);
    normalized.forEach((v, i) => {
      expect(v).toBeCloseTo(expected[i]!, 6);
    });
    expect(groups).toHaveLength(1);
    expect(groups[0]!.members.map((m) => m.key)).toEqual(['20', '21', '22', '23']);
    expect(groups[0]!.std).toBeCloseTo(0.5773503, 6);
  });

  it('gives the naive per-row values of the worked example in row mode', () => {
    const { normalized } = normalizeRewards(workedExampleRows(), config, 'row');
    const expected = [1.069043, -0.801782, -0.801782, -0.801782, -0.801782, 1.069043, 1.069043];
    normalized.forEach((v, i) => {
      expect(v).toBeCloseTo(expected[i]!, 5);
    });
  });

  it('only mean-centres with std normalisation off, or for reinforce_plus_plus_baseline', () => {
    for (const c of [
      { ...config, grpo_std_normalization: false },
      { ...config, advantage_estimator: 'reinforce_plus_plus_baseline' as const },
    ]) {
      const { normalized } = normalizeRewards(workedExampleRows(), c);
      expect(normalized).toEqual([0.5, -0.5, -0.5, -0.5, -0.5, 0.5, 0.5]);
    }
  });

  it('returns raw rewards for ppo or with normalisation disabled', () => {
    for (const c of [
      { ...config, advantage_estimator: 'ppo' as const },
      { ...config, rewards_normalization: false },
    ]) {
      const { normalized, groups } = normalizeRewards(workedExampleRows(), c);
      expect(normalized).toEqual([1, 0, 0, 0, 0, 1, 1]);
      expect(groups).toEqual([]);
    }
  });

  it('leaves a zero-std group at zero without dividing', () => {
    const rows = workedExampleRows().map((r) => ({ ...r, reward: 1 }));
    const { normalized, groups } = normalizeRewards(rows, config);
    expect(normalized.every((v) => v === 0)).toBe(true);
    expect(groups[0]!.std).toBeNull();
  });

  it('gives zero advantages when n_samples_per_prompt is 1 (std forced off)', () => {
    const rows: RewardRow[] = [{ group_index: 0, index: 0, rollout_id: null, reward: 1 }];
    expect(normalizeRewards(rows, { ...config, n_samples_per_prompt: 1 }).normalized).toEqual([0]);
  });

  // `_normalize_rewards_by_rollout` keys a row with neither id by the tuple ("row", segment_index)
  // (radixark/miles@31f1ca96 miles/ray/rollout/train_data_conversion.py), which no int rollout id equals.
  it('keeps a row with neither id apart from a rollout whose id is that row’s position', () => {
    const rows: RewardRow[] = [
      { group_index: 0, index: 0, rollout_id: 1, reward: 1 },
      { group_index: 0, index: null, rollout_id: null, reward: 0 },
    ];
    const { normalized, groups } = normalizeRewards(rows, { ...config, grpo_std_normalization: false });
    expect(groups[0]!.members.map((m) => m.key)).toEqual(['1', "('row', 1)"]);
    expect(normalized).toEqual([0.5, -0.5]);
  });

  it('raises Miles’ error when siblings disagree', () => {
    const rows: RewardRow[] = [
      { group_index: 0, index: 10, rollout_id: null, reward: 1 },
      { group_index: 0, index: 11, rollout_id: 11, reward: 2 },
      { group_index: 0, index: 11, rollout_id: 11, reward: 6 },
    ];
    expect(() => normalizeRewards(rows, config)).toThrowError(
      expect.objectContaining({
        code: 'grpo.sibling_reward_mismatch',
        message:
          '[harness] all samples in rollout 11 must share one reward; rows [1, 2] have rewards [2.0, 6.0]',
      }),
    );
  });

  it('refuses a row without a reward', () => {
    const rows: RewardRow[] = [{ group_index: 0, index: 0, rollout_id: null, reward: null }];
    expect(() => normalizeRewards(rows, config)).toThrowError(
      expect.objectContaining({ code: 'grpo.null_reward' }),
    );
  });

  it('groups by group_index even when rows interleave, and falls back to fixed chunks', () => {
    const rows: RewardRow[] = [
      { group_index: 1, index: 0, rollout_id: null, reward: 1 },
      { group_index: 2, index: 2, rollout_id: null, reward: 1 },
      { group_index: 1, index: 1, rollout_id: null, reward: 0 },
      { group_index: 2, index: 3, rollout_id: null, reward: 0 },
    ];
    const c = { ...config, n_samples_per_prompt: 2, rollout_batch_size: 2 };
    expect(normalizeRewards(rows, c).groups.map((g) => g.rows)).toEqual([
      [0, 2],
      [1, 3],
    ]);
    const ungrouped = rows.map((r) => ({ ...r, group_index: null }));
    expect(normalizeRewards(ungrouped, c).groups.map((g) => g.rows)).toEqual([
      [0, 1],
      [2, 3],
    ]);
    expect(normalizeRewards(ungrouped.slice(0, 3), c).groups.map((g) => g.rows)).toEqual([[0, 1, 2]]);
  });

  it('is invariant to how many segments each rollout produced', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({ reward: fc.constantFrom(0, 0.5, 1), segments: fc.integer({ min: 1, max: 4 }) }),
          {
            minLength: 2,
            maxLength: 8,
          },
        ),
        (episodes) => {
          const single: RewardRow[] = episodes.map((e, i) => ({
            group_index: 0,
            index: i,
            rollout_id: null,
            reward: e.reward,
          }));
          const segmented: RewardRow[] = episodes.flatMap((e, i) =>
            Array.from({ length: e.segments }, () => ({
              group_index: 0,
              index: i,
              rollout_id: e.segments > 1 ? i : null,
              reward: e.reward,
            })),
          );
          const c = { ...config, n_samples_per_prompt: episodes.length };
          const base = normalizeRewards(single, c).normalized;
          const seg = normalizeRewards(segmented, c).normalized;
          let row = 0;
          episodes.forEach((e, i) => {
            for (let k = 0; k < e.segments; k++) expect(seg[row++]).toBe(base[i]);
          });
        },
      ),
    );
  });
});
