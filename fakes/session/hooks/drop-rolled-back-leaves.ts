import type { LeafRef, TreeNode, WireSample } from '../../../contracts/wire-sample.ts';
import type { SessionMetadata } from '../session-metadata.ts';

/**
 * The newer pickers (sii-avalanche/miles@4d412b5a miles/rollout/session/v2/picker_hub/
 * drop_rolled_back_leaves.py and drop_same_prompt_retries.py). A leaf is trimmed when a sibling committed
 * after it (larger seq) under the same parent: any such sibling for `drop_rolled_back_leaves`, only one
 * with the same prompt tokens for `drop_same_prompt_retries` (the newer default). Roots are siblings of
 * each other, and for them only a same-prompt later root counts under both (a re-sent first turn). A
 * sibling's prompt is read from any leaf sample whose path covers it; a node no sample covers matches
 * nothing. Kept samples come back deepest path first, then latest commit first. The two warnings Miles
 * logs (wall-clock rollback, a longer superseded leaf) are not logged.
 */

function leafOf(sample: WireSample): LeafRef {
  return sample.metadata.leaf as LeafRef;
}

function accumulatedIds(sample: WireSample): readonly number[] {
  return sample.metadata.accumulated_token_ids as readonly number[];
}

/** `_same_prompt`: the node's prompt length and tokens equal those of the sample's leaf. */
function samePrompt(
  nodeId: number,
  sample: WireSample,
  samples: readonly WireSample[],
  nodes: ReadonlyMap<number, TreeNode>,
): boolean {
  const promptLength = nodes.get(leafOf(sample).node_id)?.completion_span[0];
  if (promptLength === undefined || nodes.get(nodeId)?.completion_span[0] !== promptLength) return false;
  const covering = samples.find((s) => leafOf(s).path_node_ids.includes(nodeId));
  if (covering === undefined) return false;
  const theirs = accumulatedIds(covering);
  const ours = accumulatedIds(sample);
  // Python's slices: a shorter list compares as its whole self.
  const a = theirs.slice(0, promptLength);
  const b = ours.slice(0, promptLength);
  return a.length === b.length && a.every((id, i) => id === b[i]);
}

function byDepthThenSeq(a: WireSample, b: WireSample): number {
  const la = leafOf(a);
  const lb = leafOf(b);
  return lb.path_node_ids.length - la.path_node_ids.length || lb.node_id - la.node_id;
}

function pickLeaves(
  samples: WireSample[],
  sessionMetadata: SessionMetadata,
  siblingPromptMustMatch: boolean,
): WireSample[] {
  const nodes = new Map(sessionMetadata.tree.nodes.map((n) => [n.id, n]));
  const children = new Map<number | null, number[]>();
  for (const node of sessionMetadata.tree.nodes) {
    const list = children.get(node.parent) ?? [];
    list.push(node.id);
    children.set(node.parent, list);
  }
  const kept = samples.filter((sample) => {
    const { node_id: leafId, parent } = leafOf(sample);
    let later = (children.get(parent) ?? []).filter((sibling) => sibling > leafId);
    if (parent === null || siblingPromptMustMatch)
      later = later.filter((sibling) => samePrompt(sibling, sample, samples, nodes));
    return later.length === 0;
  });
  return kept.sort(byDepthThenSeq);
}

/** `drop_rolled_back_leaves`: any later sibling supersedes a leaf (a later root only with the same prompt). */
export function dropRolledBackLeaves(samples: WireSample[], sessionMetadata: SessionMetadata): WireSample[] {
  return pickLeaves(samples, sessionMetadata, false);
}

/** `drop_same_prompt_retries`: only a later sibling with the same prompt tokens (an identical re-send). */
export function dropSamePromptRetries(samples: WireSample[], sessionMetadata: SessionMetadata): WireSample[] {
  return pickLeaves(samples, sessionMetadata, true);
}
