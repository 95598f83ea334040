import type { SampleStatus } from '../../contracts/wire-sample.ts';
import type { ReplaySample } from '../model/sample.ts';
import type { PythonNumberType } from './python-number.ts';

/**
 * What `log_rollout_data` reads of one Miles `Sample` (radixark/miles@31f1ca96 miles/utils/types.py):
 * the flattened post-filter rows of a step, as `RolloutManager.generate` passes them.
 */
export interface LoggedSample {
  readonly group_index: number | null;
  readonly index: number | null;
  readonly rollout_id: number | null;
  readonly remove_sample: boolean;
  /** The sample's LoRA adapter identity (newer Miles' Multi-LoRA); null without one, as in the recipe. */
  readonly adapter: string | null;
  readonly reward: number | null;
  /** The Python type of `reward` (an agent server answering `1` gives ints). */
  readonly reward_type: PythonNumberType;
  readonly status: SampleStatus;
  readonly response: string;
  readonly response_length: number;
  readonly loss_mask: readonly number[] | null;
  readonly prefix_cache_info: { readonly cached_tokens: number; readonly total_prompt_tokens: number };
  readonly weight_versions: readonly unknown[];
  /** `agent_metrics.total_tool_time` of the rollout, as `agentic_tool_call.generate` sets it; else 0. */
  readonly non_generation_time: number;
  readonly metadata: Readonly<Record<string, unknown>>;
}

/** `Sample.effective_response_length`. */
export function loggedEffectiveLength(sample: Pick<LoggedSample, 'loss_mask' | 'response_length'>): number {
  if (sample.loss_mask === null) return sample.response_length;
  let sum = 0;
  for (const m of sample.loss_mask) sum += m;
  return sum;
}

/** A replay row as `log_rollout_data` sees it; what the source lacks is Miles' `Sample` default. */
export function toLoggedSample(sample: ReplaySample): LoggedSample {
  return {
    group_index: sample.group_index,
    index: sample.index,
    rollout_id: sample.rollout_id,
    remove_sample: sample.remove_sample,
    adapter: sample.adapter ?? null,
    reward: sample.reward,
    reward_type: sample.reward_type ?? 'float',
    status: sample.status,
    response: sample.response ?? '',
    response_length: sample.response_length,
    loss_mask: sample.loss_mask,
    prefix_cache_info: sample.prefix_cache_info ?? { cached_tokens: 0, total_prompt_tokens: 0 },
    weight_versions: versionsOf(sample.weight_versions ?? []),
    non_generation_time: sample.non_generation_time ?? 0,
    metadata: sample.metadata,
  };
}

/**
 * The versions a sample saw: 31f1ca96's wire lists one per call; the newer wire one list of
 * `{version, abs_start, abs_end}` spans per call, read as its spans' versions in order
 * (sii-avalanche/miles@4d412b5a miles/utils/types.py `Sample.all_weight_version_spans`).
 */
function versionsOf(weightVersions: readonly unknown[]): unknown[] {
  return weightVersions.flatMap((call) =>
    Array.isArray(call) ? call.map((span) => (span as { version?: unknown }).version) : [call],
  );
}
