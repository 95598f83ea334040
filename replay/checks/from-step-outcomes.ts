import type { NormalizationConfig } from '../grpo/config.ts';
import type { StepOutcome } from '../step/process-step.ts';
import type { CheckData } from './types.ts';

/** The checks' view of processed steps: every group, and the advantages Miles' conversion produced. */
export function checkDataFromOutcomes(
  outcomes: readonly StepOutcome[],
  normalization: NormalizationConfig,
): CheckData {
  return {
    steps: outcomes.map((o) => ({
      step: o.step,
      groups: o.groups,
      advantages: o.advantages,
      ...(o.sessionRouting === undefined ? {} : { session_routing: o.sessionRouting }),
    })),
    n_samples_per_prompt: normalization.n_samples_per_prompt,
    rollout_batch_size: normalization.rollout_batch_size,
    normalization,
  };
}
