import { rolloutMaskSums } from '../grpo/loss-weights.ts';
import { retainedRollouts } from '../model/retained.ts';
import { rolloutKey } from '../model/rollout-key.ts';
import { effectiveLossMask } from '../model/sample.ts';
import type { StepOutcome } from '../step/process-step.ts';
import { type SideSample, type SideStep, tokensDigest } from './side.ts';

/**
 * The harness's side of one differential step, from the replay's step outcome: its post-filter rows
 * (samples), the train rows `convert_samples_to_train_data` would give (the normalised reward is the
 * advantage), and its logged metrics.
 */
export async function harnessSide(outcome: StepOutcome): Promise<SideStep> {
  const rollouts = retainedRollouts(outcome.groups);
  const variants = rollouts.flatMap((r) => r.samples.map(() => r.episode?.variant ?? null));
  const samples: SideSample[] = [];
  for (const [position, row] of outcome.rows.entries()) {
    const instance = row.metadata.instance_id;
    samples.push({
      group_index: row.group_index,
      index: row.index,
      rollout_id: row.rollout_id,
      instance_id: typeof instance === 'string' ? instance : null,
      variant: variants[position] ?? null,
      status: row.status,
      reward: row.reward,
      tokens: row.tokens.length,
      tokens_digest: await tokensDigest(row.tokens),
      response_length: row.response_length,
      loss_mask: row.loss_mask === null ? null : [...row.loss_mask],
      remove_sample: row.remove_sample,
    });
  }
  const rows = outcome.rows;
  const train =
    outcome.advantages === null
      ? null
      : {
          rewards: [...outcome.advantages],
          raw_reward: rows.map((r) => r.reward ?? Number.NaN),
          truncated: rows.map((r) => (r.status === 'truncated' ? 1 : 0)),
          sample_indices: rows.map((r) => r.index ?? Number.NaN),
          rollout_ids: rows.map((r) => rolloutKey(r) ?? Number.NaN),
          rollout_mask_sums: rolloutMaskSums(rows),
          response_lengths: rows.map((r) => r.response_length),
          tokens: rows.map((r) => r.tokens.length),
          loss_mask_sums: rows.map((r) => effectiveLossMask(r).reduce((a, m) => a + m, 0)),
        };
  const metrics = Object.fromEntries(
    Object.entries(outcome.metrics).filter((entry): entry is [string, number] => entry[1] !== undefined),
  );
  return {
    rollout_id: outcome.step,
    samples,
    train,
    metrics,
    refill_exceeded: null,
    error: outcome.error === null ? null : outcome.error.message,
    wall_s: outcome.durationMs / 1000,
  };
}
