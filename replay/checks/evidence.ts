import type { Rollout } from '../model/rollout.ts';
import { rolloutKey } from '../model/rollout-key.ts';
import type { Evidence, EvidenceData, EvidenceKind, Severity } from './evidence-schema.ts';
import type { CheckName, CheckResult, Verdict } from './types.ts';

/** Locators for one piece of evidence; anything left out is null. */
interface Locators {
  readonly step?: number | null;
  readonly rollout?: Pick<Rollout, 'group_index' | 'index' | 'rollout_id'> | null;
  readonly group_index?: number | null;
  readonly sample?: number | null;
  readonly leaf_node_id?: number | null;
  readonly node?: number | null;
  readonly token_range?: readonly [number, number] | null;
}

/** Where an item of kind `K` points, and its data: required when the kind has a required fact. */
type EvidenceAt<K extends EvidenceKind> = Locators &
  (Record<string, never> extends EvidenceData<K>
    ? { readonly data?: EvidenceData<K> }
    : { readonly data: EvidenceData<K> });

export function evidence<K extends EvidenceKind>(
  kind: K,
  severity: Severity,
  detail: string,
  ...[at]: Record<string, never> extends EvidenceData<K> ? [at?: EvidenceAt<K>] : [at: EvidenceAt<K>]
): Evidence {
  const where: Locators & { readonly data?: EvidenceData<K> } = at ?? {};
  const rollout = where.rollout ?? null;
  return {
    kind,
    severity,
    step: where.step ?? null,
    group_index: rollout ? rollout.group_index : (where.group_index ?? null),
    rollout: rollout ? rolloutKey(rollout) : null,
    sample: where.sample ?? null,
    leaf_node_id: where.leaf_node_id ?? null,
    node: where.node ?? null,
    token_range: where.token_range ? [where.token_range[0], where.token_range[1]] : null,
    detail,
    data: where.data ?? {},
  } as Evidence;
}

/** Any failure fails the check; otherwise any finding makes it a finding. */
export function verdictOf(items: readonly Evidence[]): Verdict {
  if (items.some((e) => e.severity === 'fail')) return 'fail';
  if (items.some((e) => e.severity === 'finding')) return 'finding';
  return 'pass';
}

export function checkResult(
  name: CheckName,
  title: string,
  mode: string,
  items: readonly Evidence[],
): CheckResult {
  const count = (s: Severity) => items.filter((e) => e.severity === s).length;
  return {
    name,
    title,
    verdict: verdictOf(items),
    mode,
    counts: { fail: count('fail'), finding: count('finding'), info: count('info') },
    evidence: [...items],
  };
}

/** Splits sorted positions into maximal runs of consecutive values: `[start, end)` pairs. */
export function runsOf(positions: readonly number[]): [number, number][] {
  const runs: [number, number][] = [];
  for (const p of positions) {
    const last = runs[runs.length - 1];
    if (last && last[1] === p) last[1] = p + 1;
    else runs.push([p, p + 1]);
  }
  return runs;
}
