import type { TreeMetadata, TreeNode } from '../../contracts/wire-sample.ts';
import { retainedRollouts } from '../model/retained.ts';
import type { Rollout } from '../model/rollout.ts';
import { effectiveLossMask, leafOf, type ReplaySample, responseStart } from '../model/sample.ts';
import { checkResult, evidence, runsOf } from './evidence.ts';
import type { Evidence } from './evidence-schema.ts';
import { availableInputs } from './inputs.ts';
import { isResend, requestForNode, requestsByResponseId } from './request-join.ts';
import type { CheckData, InvariantCheck } from './types.ts';

const NAME = 'exactly_once';
const TITLE = 'every completion on a kept path is trained in exactly one sample of its rollout';

interface Located {
  readonly sample: ReplaySample;
  readonly position: number;
  readonly leafId: number;
  readonly path: ReadonlySet<number>;
  readonly mask: readonly number[];
  readonly start: number;
}

function locate(rollout: Rollout): Located[] {
  return rollout.samples.flatMap((sample, position) => {
    const leaf = leafOf(sample);
    if (!leaf) return [];
    return [
      {
        sample,
        position,
        leafId: leaf.node_id,
        path: new Set(leaf.path_node_ids),
        mask: effectiveLossMask(sample),
        start: responseStart(sample),
      },
    ];
  });
}

type PositionState = 'once' | 'twice' | 'untrained_in_owner' | 'owner_cut' | 'beyond_sample_end';

/** Exact accounting for one node on a kept path, position by position. */
function accountKeptNode(
  node: TreeNode,
  holders: readonly Located[],
  step: number | null,
  rollout: Rollout,
): Evidence[] {
  const [cs, ce] = node.completion_span;
  const owner = holders.reduce((a, b) => (b.leafId < a.leafId ? b : a));
  const states = new Map<PositionState, number[]>();
  const trainersAt = new Map<number, Located[]>();
  for (let p = cs; p < ce; p++) {
    const trainers = holders.filter(
      (h) => p >= h.start && p < h.sample.tokens.length && h.mask[p - h.start] === 1,
    );
    const present = (h: Located) => p < h.sample.tokens.length;
    let state: PositionState;
    if (trainers.length === 1) state = 'once';
    else if (trainers.length > 1) {
      state = 'twice';
      trainersAt.set(p, trainers);
    } else if (present(owner)) state = 'untrained_in_owner';
    else if (holders.some(present)) state = 'owner_cut';
    else state = 'beyond_sample_end';
    const list = states.get(state);
    if (list) list.push(p);
    else states.set(state, [p]);
  }
  const at = <D>(range: [number, number], who: Located, data: D) => ({
    step,
    rollout,
    sample: who.position,
    leaf_node_id: who.leafId,
    node: node.id,
    token_range: range,
    data,
  });
  const out: Evidence[] = [];
  for (const range of runsOf(states.get('twice') ?? [])) {
    const trainers = trainersAt.get(range[0])!;
    const second = trainers.find((t) => t !== owner) ?? trainers[1]!;
    out.push(
      evidence(
        'double_trained',
        'fail',
        `node ${node.id} tokens [${range[0]}, ${range[1]}) are trained in ${trainers.length} samples (leaves ${trainers.map((t) => t.leafId).join(', ')})`,
        at(range, second, {
          trained_in_samples: trainers.map((t) => t.position),
          trained_in_leaves: trainers.map((t) => t.leafId),
        }),
      ),
    );
  }
  for (const range of runsOf(states.get('untrained_in_owner') ?? []))
    out.push(
      evidence(
        'untrained_completion',
        'fail',
        `node ${node.id} tokens [${range[0]}, ${range[1]}) are generated and present in their owner (leaf ${owner.leafId}) but trained in no sample`,
        at(range, owner, {}),
      ),
    );
  for (const range of runsOf(states.get('owner_cut') ?? []))
    out.push(
      evidence(
        'lost_completion',
        'finding',
        `node ${node.id} tokens [${range[0]}, ${range[1]}) are owned by leaf ${owner.leafId}, whose sample ends before them, so no sibling trains them (ownership is by commit order)`,
        at(range, owner, { cause: 'owner_cut' }),
      ),
    );
  for (const range of runsOf(states.get('beyond_sample_end') ?? []))
    out.push(
      evidence(
        'lost_completion',
        'finding',
        `node ${node.id} tokens [${range[0]}, ${range[1]}) lie beyond the end of every sample on its path (cut by max_seq_len or an early merge stop)`,
        at(range, owner, { cause: 'beyond_sample_end' }),
      ),
    );
  return out;
}

/** The branch a trimmed node belongs to: its highest ancestor that is on no kept path. */
function branchTop(node: TreeNode, byId: ReadonlyMap<number, TreeNode>, kept: ReadonlySet<number>): TreeNode {
  let top = node;
  for (;;) {
    const parent = top.parent === null ? undefined : byId.get(top.parent);
    if (!parent || kept.has(parent.id)) return top;
    top = parent;
  }
}

/** Classifies a branch no kept sample contains: a superseded retry, or a lost completion. */
function classifyBranch(
  top: TreeNode,
  members: readonly TreeNode[],
  tree: TreeMetadata,
  rollout: Rollout,
  step: number | null,
): Evidence {
  const laterSiblings = tree.nodes.filter((n) => n.parent === top.parent && n.id > top.id);
  const leaves = members.filter((m) => tree.leaves.some((l) => l.node_id === m.id)).map((m) => m.id);
  const at = {
    step,
    rollout,
    node: top.id,
    leaf_node_id: leaves.length === 1 ? leaves[0]! : null,
    token_range: top.completion_span,
  };
  const base = {
    branch_node_ids: members.map((m) => m.id),
    later_sibling_ids: laterSiblings.map((n) => n.id),
  };
  if (rollout.requests === null)
    return evidence(
      'lost_completion',
      'finding',
      `branch at node ${top.id} is trained in no sample; without the policy request log it cannot be told from a retry`,
      { ...at, data: { ...base, cause: 'unclassified' } },
    );
  const byResponse = requestsByResponseId(rollout.requests);
  const own = requestForNode(top, byResponse);
  const resent = own
    ? laterSiblings.find((s) => {
        const other = requestForNode(s, byResponse);
        return other !== null && isResend(own, other);
      })
    : undefined;
  if (resent)
    return evidence(
      'superseded_retry',
      'info',
      `branch at node ${top.id} is a superseded retry: node ${resent.id} re-sent its request`,
      { ...at, data: { ...base, resent_by: resent.id } },
    );
  const cause =
    own === null ? 'unjoined_request' : laterSiblings.length > 0 ? 'trimmed_branch' : 'dropped_leaf';
  const why =
    cause === 'unjoined_request'
      ? 'its response id joins no logged request'
      : cause === 'trimmed_branch'
        ? `its later sibling${laterSiblings.length > 1 ? 's' : ''} ${laterSiblings.map((s) => s.id).join(', ')} sent a different request (the picker trims it anyway)`
        : 'its leaf produced no sample';
  return evidence('lost_completion', 'finding', `branch at node ${top.id} is trained in no sample: ${why}`, {
    ...at,
    data: { ...base, cause },
  });
}

function exactRollout(rollout: Rollout, tree: TreeMetadata, step: number | null): Evidence[] {
  const located = locate(rollout);
  const kept = new Set<number>();
  for (const l of located) for (const id of l.path) kept.add(id);
  const byId = new Map(tree.nodes.map((n) => [n.id, n]));
  const out: Evidence[] = [];
  const branches = new Map<number, TreeNode[]>();
  for (const node of tree.nodes) {
    if (kept.has(node.id)) {
      const holders = located.filter((l) => l.path.has(node.id));
      for (const e of accountKeptNode(node, holders, step, rollout)) out.push(e);
    } else {
      const top = branchTop(node, byId, kept);
      const members = branches.get(top.id);
      if (members) members.push(node);
      else branches.set(top.id, [node]);
    }
  }
  for (const [topId, members] of branches)
    out.push(classifyBranch(byId.get(topId)!, members, tree, rollout, step));
  return out;
}

/**
 * The dump proxy (docs/replay.md "The checks") for data without trees: for siblings whose paths intersect,
 * no position of their common token prefix may be trained in both.
 */
function proxyRollout(rollout: Rollout, step: number | null): Evidence[] {
  const located = locate(rollout);
  const out: Evidence[] = [];
  for (let i = 0; i < located.length; i++)
    for (let j = i + 1; j < located.length; j++) {
      const a = located[i]!;
      const b = located[j]!;
      if (![...a.path].some((id) => b.path.has(id))) continue;
      const ta = a.sample.tokens;
      const tb = b.sample.tokens;
      let lcp = 0;
      while (lcp < ta.length && lcp < tb.length && ta[lcp] === tb[lcp]) lcp++;
      const both: number[] = [];
      for (let p = Math.max(a.start, b.start); p < lcp; p++)
        if (a.mask[p - a.start] === 1 && b.mask[p - b.start] === 1) both.push(p);
      for (const range of runsOf(both))
        out.push(
          evidence(
            'double_trained',
            'fail',
            `tokens [${range[0]}, ${range[1]}) of the prefix leaves ${a.leafId} and ${b.leafId} share are trained in both`,
            {
              step,
              rollout,
              sample: b.position,
              leaf_node_id: b.leafId,
              token_range: range,
              data: {
                trained_in_samples: [a.position, b.position],
                trained_in_leaves: [a.leafId, b.leafId],
                proxy: true,
              },
            },
          ),
        );
    }
  return out;
}

/**
 * Check 1. With trees: every completion span on a kept leaf's path is trained in exactly one sample;
 * one trained twice, or left untrained in its owner, fails; one trained nowhere because Miles' own
 * rules drop it (a picker-trimmed branch that is not a re-send, an owner cut by `max_seq_len`) is a
 * finding; a superseded retry is noted. Without trees it falls back to the common-prefix proxy, which
 * can only see double training.
 */
export const exactlyOnceCheck: InvariantCheck = {
  name: NAME,
  title: TITLE,
  requires: ['leaf_refs'],
  uses: ['trees', 'request_logs'],
  run(data: CheckData) {
    const exact = availableInputs(data).has('trees');
    const out: Evidence[] = [];
    for (const step of data.steps)
      for (const rollout of retainedRollouts(step.groups))
        for (const e of exact && rollout.tree
          ? exactRollout(rollout, rollout.tree, step.step)
          : proxyRollout(rollout, step.step))
          out.push(e);
    return checkResult(NAME, TITLE, exact ? 'exact' : 'proxy', out);
  },
};
