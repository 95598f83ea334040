import type { LeafRef, TreeMetadata } from '../../contracts/wire-sample.ts';
import type { ReplayResult } from './replay.ts';

/**
 * The readable view of a replay: per-turn statuses, the tree, and each returned sample with its trained
 * tokens marked (`[...]` around every run of mask-1 tokens).
 */

function renderTree(tree: TreeMetadata): string[] {
  const children = new Map<number | null, number[]>();
  for (const n of tree.nodes) children.set(n.parent, [...(children.get(n.parent) ?? []), n.id]);
  const byId = new Map(tree.nodes.map((n) => [n.id, n] as const));
  const lines: string[] = [];
  const walk = (id: number, prefix: string, last: boolean, root: boolean) => {
    const n = byId.get(id)!;
    const kids = children.get(id) ?? [];
    const flags = [n.truncated ? 'truncated' : '', kids.length === 0 ? 'leaf' : '']
      .filter(Boolean)
      .join(', ');
    const label = `node ${id}  span [${n.completion_span[0]},${n.completion_span[1]})  ${n.num_tokens} tokens  id=${n.response_id ?? 'null'}${flags ? `  (${flags})` : ''}`;
    lines.push(`${prefix}${root ? '' : last ? '└─ ' : '├─ '}${label}`);
    const childPrefix = root ? prefix : `${prefix}${last ? '   ' : '│  '}`;
    for (const [i, k] of kids.entries()) walk(k, childPrefix, i === kids.length - 1, false);
  };
  for (const root of children.get(null) ?? []) walk(root, '    ', true, true);
  return lines;
}

/** Token ids with every trained run wrapped in brackets. */
function markTrained(
  tokens: readonly number[],
  mask: readonly number[] | null,
  responseLength: number,
): string {
  const start = tokens.length - responseLength;
  const out: string[] = [];
  let open = false;
  tokens.forEach((t, i) => {
    const trained = i >= start && mask?.[i - start] === 1;
    if (trained && !open) {
      out.push(`[${t}`);
      open = true;
    } else if (!trained && open) {
      out[out.length - 1] += ']';
      out.push(String(t));
      open = false;
    } else {
      out.push(String(t));
    }
  });
  if (open) out[out.length - 1] += ']';
  return out.join(' ');
}

export function renderReplay(name: string, result: ReplayResult): string {
  const lines = [name, `  turns: ${result.turns.map((t) => t.status).join(' ')}`, '  tree:'];
  for (const line of result.tree.nodes.length === 0 ? ['    (empty)'] : renderTree(result.tree))
    lines.push(line);
  if (result.samples_error) {
    lines.push(`  samples: failed with HTTP ${result.samples_error.status}: ${result.samples_error.detail}`);
  } else if (result.empty_reason !== null) {
    lines.push(`  samples: none (${result.empty_reason})`);
  } else {
    lines.push(
      `  samples (${result.samples.length}, in the order the samples op returned them; [..] = trained):`,
    );
    result.samples.forEach((s, i) => {
      const leaf = s.metadata.leaf as LeafRef;
      const trained = (s.loss_mask ?? []).filter((b) => b === 1).length;
      lines.push(
        `    #${i} leaf ${leaf.node_id} path [${leaf.path_node_ids.join(',')}]  ${s.status}  reward ${JSON.stringify(s.reward)}  ${s.tokens.length} tokens, ${trained}/${s.response_length} response tokens trained`,
      );
      lines.push(`       ${markTrained(s.tokens, s.loss_mask, s.response_length)}`);
    });
  }
  return `${lines.join('\n')}\n`;
}
