import type { WireSample } from '../../../contracts/wire-sample.ts';

/**
 * One completed turn as a wire sample, the way Miles' `_compute_sample_from_openai_record`
 * (radixark/miles@31f1ca96 miles/rollout/session/samples/merge.py) leaves it, for the merge tests: ones
 * and log-probs of -0.5 over the response unless given (null leaves a list out), no replay tensors, no
 * metadata. `fields` overrides any of it.
 */
export function turnWireSample(
  fields: Partial<WireSample> & Pick<WireSample, 'tokens' | 'response_length'>,
): WireSample {
  return {
    response: '',
    loss_mask: new Array<number>(fields.response_length).fill(1),
    rollout_log_probs: new Array<number>(fields.response_length).fill(-0.5),
    rollout_routed_experts: null,
    rollout_indexer_topk: null,
    status: 'completed',
    weight_versions: [],
    prefix_cache_info: { cached_tokens: 0, total_prompt_tokens: 0 },
    metadata: {},
    reward: null,
    ...fields,
  };
}
