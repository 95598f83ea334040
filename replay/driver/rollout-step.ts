import { groupIndex, sampleIndex } from '../model/ids.ts';
import type { Group, Rollout } from '../model/rollout.ts';
import { applyAbortedFilter } from '../step/aborted-filter.ts';
import type { Progress } from './progress.ts';
import type { PromptSource } from './prompt-source.ts';
import { CollectRaisedError, type RolloutContext, runRollout } from './rollout.ts';

/**
 * A refill bound Miles does not have: it pulls prompts until enough groups pass, however long it takes.
 * Eight, not four: at four, a fuzz task whose first-turn failures (2 % a rollout) fell one in each of its
 * first four groups ended the step short (deep-tier seed 456650372), a stop Miles would not make.
 */
export const MAX_GROUPS_PER_BATCH_FACTOR = 8;

export interface RolloutStepOptions {
  readonly rolloutBatchSize: number;
  readonly nSamplesPerPrompt: number;
  /** Runs one rollout task at a time under the `--concurrency` limit. */
  readonly limit: <T>(task: () => Promise<T>) => Promise<T>;
  readonly progress: Progress;
}

/**
 * `generate_and_rm_group` for one prompt: its `n_samples_per_prompt` copies run concurrently (within
 * the limit; the Harbor mock picks each copy's variant by its sample index, so their order does not
 * matter). A copy whose collect raises takes the whole group down (`task_raised`); otherwise
 * `check_no_aborted` decides.
 */
async function runGroup(
  ctx: RolloutContext,
  drawn: ReturnType<PromptSource['next']>,
  options: RolloutStepOptions,
): Promise<Group> {
  const group = groupIndex(drawn.groupIndex);
  const settled = await Promise.allSettled(
    drawn.indices.map((index) =>
      options.limit(async () => {
        try {
          return await runRollout(ctx, drawn.prompt.row, group, sampleIndex(index));
        } finally {
          options.progress.tick();
        }
      }),
    ),
  );
  const rollouts = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const raised = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
  if (raised) {
    if (!(raised.reason instanceof CollectRaisedError)) throw raised.reason;
    return { group_index: group, rollouts, dropped: 'task_raised' };
  }
  return applyAbortedFilter({ group_index: group, rollouts: rollouts as Rollout[], dropped: null });
}

/**
 * The rollout side of one step (`generate_rollout_async`): run `rollout_batch_size` groups; each dropped
 * group is replaced by a fresh prompt until enough groups pass (bounded, see
 * `MAX_GROUPS_PER_BATCH_FACTOR`). Returns every group the step ran, dropped ones included.
 */
export async function runRolloutStep(
  ctx: RolloutContext,
  source: PromptSource,
  options: RolloutStepOptions,
): Promise<Group[]> {
  const groups: Group[] = [];
  let started = 0;
  const maxGroups = options.rolloutBatchSize * MAX_GROUPS_PER_BATCH_FACTOR;
  const runOne = async (): Promise<void> => {
    started += 1;
    const group = await runGroup(ctx, source.next(options.nSamplesPerPrompt), options);
    groups.push(group);
    if (group.dropped !== null && started < maxGroups && !ctx.signal.aborted) {
      options.progress.grow(options.nSamplesPerPrompt);
      await runOne();
    }
  };
  await Promise.all(Array.from({ length: options.rolloutBatchSize }, () => runOne()));
  return groups;
}
