import type { DumpSample } from './dump-schema.ts';

/**
 * A rollout's identity in a dump, as Miles' metrics key it: the prompt group plus `rollout_id`, which
 * falls back to `index` for a single-leaf rollout (radixark/miles@31f1ca96
 * miles/rollout/generate_hub/agentic_tool_call.py `generate`; docs/replay.md "What one step does").
 */
function rolloutKey(sample: Pick<DumpSample, 'group_index' | 'rollout_id' | 'index'>): string {
  return `${sample.group_index ?? 'none'}:${sample.rollout_id ?? sample.index ?? 'none'}`;
}

/** Rows of one step bucketed by rollout, in order of first appearance. */
export function bucketByRollout<S extends Pick<DumpSample, 'group_index' | 'rollout_id' | 'index'>>(
  samples: readonly S[],
): Map<string, { rows: number[]; samples: S[] }> {
  const buckets = new Map<string, { rows: number[]; samples: S[] }>();
  samples.forEach((sample, row) => {
    const key = rolloutKey(sample);
    const bucket = buckets.get(key) ?? { rows: [], samples: [] };
    if (bucket.rows.length === 0) buckets.set(key, bucket);
    bucket.rows.push(row);
    bucket.samples.push(sample);
  });
  return buckets;
}
