import { z } from 'zod';
import { retainedRollouts } from '../model/retained.ts';
import type { Group } from '../model/rollout.ts';
import { leafOf } from '../model/sample.ts';
import type { TrajectoryRow } from './dump-schema.ts';

const MessageHeadSchema = z.object({ role: z.string(), head: z.string() });

export const LostBranchSchema = z.object({
  step: z.number().int(),
  group_index: z.number().int(),
  rollout: z.number().int(),
  /** Consecutive node ids (`id == seq`) below the rollout's last kept node that no kept sample's path holds. */
  node_ids: z.array(z.number().int()),
  /** The first kept sample after the branch: its position in the rollout and its sample index. */
  next_sample: z.number().int().nullable(),
  next_sample_index: z.number().int().nullable(),
  /**
   * That sample's conversation from `trajectory/<step>.jsonl`: how many messages, and the last ones
   * (role and opening) — what the agent saw after the branch was lost. Null without a trajectory row.
   */
  conversation: z.object({ messages: z.number().int(), tail: z.array(MessageHeadSchema) }).nullable(),
});
export type LostBranch = z.infer<typeof LostBranchSchema>;

const HEAD_CHARS = 200;
const TAIL_MESSAGES = 3;

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((part) => (typeof part === 'object' && part !== null && 'text' in part ? String(part.text) : ''))
      .join('');
  return content === undefined || content === null ? '' : JSON.stringify(content);
}

/**
 * Trajectory rows by `group_index:sample_index`, in file order. The siblings of a compacted rollout share
 * their `index`, so a key holds a rollout's rows; `trajectory_rows` writes one per sample that has
 * messages, in the samples' order (radixark/miles@31f1ca96 miles/ray/rollout/debug_data.py), and merge.py
 * gives every kept leaf's sample its messages, so the k-th row of a key is the k-th sample with that key
 * (`rowOfOccurrence`).
 */
/**
 * The row of the sample that is the `occurrence`-th of its index: the newer writer names it
 * (`sample_occurrence`, sii-avalanche/miles@4d412b5a miles/ray/rollout/debug_data.py, counted over every
 * sample, so a sample without messages leaves a gap); 31f1ca96's rows are taken in order.
 */
export function rowOfOccurrence(
  rows: readonly TrajectoryRow[] | undefined,
  occurrence: number,
): TrajectoryRow | undefined {
  if (rows === undefined) return undefined;
  return rows.some((r) => r.sample_occurrence !== undefined)
    ? rows.find((r) => r.sample_occurrence === occurrence)
    : rows[occurrence];
}

export function trajectoryIndex(rows: readonly TrajectoryRow[]): Map<string, TrajectoryRow[]> {
  const index = new Map<string, TrajectoryRow[]>();
  for (const r of rows) {
    const key = `${r.group_index}:${r.sample_index}`;
    const list = index.get(key);
    if (list) list.push(r);
    else index.set(key, [r]);
  }
  return index;
}

/**
 * The branches of each rollout's session tree that no kept sample trains, as far as the dumps show them.
 * Miles dumps no tree under v2 (docs/check-run.md), but every sample's `metadata.leaf.path_node_ids`
 * names the nodes on its path, and node ids are the tree's commit sequence: an id below the last kept one
 * that no kept path holds is a completion nothing trains (a trimmed retry, summary or tail turn, or a
 * dropped leaf). A branch after the last kept node is invisible here.
 */
export function lostBranches(
  step: number,
  groups: readonly Group[],
  trajectory: ReadonlyMap<string, readonly TrajectoryRow[]>,
): LostBranch[] {
  const out: LostBranch[] = [];
  for (const rollout of retainedRollouts(groups)) {
    const leaves = rollout.samples.map((s, position) => ({ sample: s, position, leaf: leafOf(s) }));
    const kept = new Set<number>();
    for (const { leaf } of leaves) for (const id of leaf?.path_node_ids ?? []) kept.add(id);
    if (kept.size === 0) continue;
    let last = 0;
    for (const id of kept) if (id > last) last = id;
    let run: number[] = [];
    const flush = () => {
      if (run.length === 0) return;
      const top = run.at(-1)!;
      const next = leaves
        .filter(({ leaf }) => leaf?.path_node_ids.some((id) => id > top))
        .sort((a, b) => a.leaf!.node_id - b.leaf!.node_id)[0];
      // The next sample's ordinal among the rollout's samples with its key picks its row.
      const key = next ? `${next.sample.group_index}:${next.sample.index}` : '';
      const ordinal = next
        ? rollout.samples.slice(0, next.position).filter((s) => `${s.group_index}:${s.index}` === key).length
        : 0;
      const row = next ? rowOfOccurrence(trajectory.get(key), ordinal) : undefined;
      out.push({
        step,
        group_index: rollout.group_index,
        rollout: rollout.rollout_id ?? rollout.index,
        node_ids: run,
        next_sample: next?.position ?? null,
        next_sample_index: next?.sample.index ?? null,
        conversation: row
          ? {
              messages: row.messages.length,
              tail: row.messages.slice(-TAIL_MESSAGES).map((m) => ({
                role: m.role,
                head: contentText(m.content).slice(0, HEAD_CHARS),
              })),
            }
          : null,
      });
      run = [];
    };
    for (let id = 0; id <= last; id++) {
      if (kept.has(id)) flush();
      else run.push(id);
    }
    flush();
  }
  return out;
}
