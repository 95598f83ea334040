import { type DumpEvidence, MAX_EVIDENCE, type SmokeCheck } from '../check-result.ts';
import type { RolloutDump } from '../dump-schema.ts';

/**
 * Every dumped sample's loss mask covers exactly its response (Miles asserts `len(loss_mask) ==
 * response_length` in conversion), and the response fits in the tokens.
 */
export function checkLossMaskShape(dumps: readonly RolloutDump[]): SmokeCheck {
  const evidence: DumpEvidence[] = [];
  let rows = 0;
  for (const dump of dumps) {
    dump.samples.forEach((s, row) => {
      rows += 1;
      const base = {
        step: Number(dump.rollout_id),
        group_index: s.group_index,
        rollout: s.rollout_id ?? s.index,
        row,
      };
      if (s.response_length > s.tokens.length)
        evidence.push({
          ...base,
          detail: `response_length ${s.response_length} > ${s.tokens.length} tokens`,
        });
      if (s.loss_mask !== null && s.loss_mask.length !== s.response_length)
        evidence.push({
          ...base,
          detail: `loss_mask has ${s.loss_mask.length} entries for a response of ${s.response_length} tokens`,
        });
    });
  }
  return {
    name: 'loss_mask_shape',
    source: 'dumps',
    verdict: evidence.length === 0 ? 'pass' : 'fail',
    summary:
      evidence.length === 0
        ? `all ${rows} samples have a loss mask as long as their response`
        : `${evidence.length} samples have a loss mask that does not match their response`,
    evidence: evidence.slice(0, MAX_EVIDENCE),
  };
}
