import { equalPrefix } from './values/number-runs.ts';
import {
  type Decoder,
  headPrefix,
  sliceTokens,
  type TurnSample,
  tokenCount,
  tokenRuns,
} from './values/turn-tokens.ts';

/**
 * Miles' `Sample` rules on a two-part turn sample (values/turn-tokens.ts): stripping output tokens and
 * the token-prefix test of `_merge_sample_pair`.
 */

/** `Sample.strip_last_output_tokens`: tokens, mask and logprobs in lockstep; the response re-decoded. */
export function stripLastOutputTokens(sample: TurnSample, count: number, decode: Decoder): void {
  if (count <= 0) return;
  const keep = tokenCount(sample) - count;
  if (keep >= sample.head.length) sample.tail = sample.tail.slice(0, keep - sample.head.length);
  else {
    sample.head = headPrefix(sample.head, Math.max(keep, 0));
    sample.tail = [];
  }
  sample.response_length -= count;
  if (sample.loss_mask) sample.loss_mask = sample.loss_mask.slice(0, sample.response_length);
  if (sample.rollout_log_probs)
    sample.rollout_log_probs = sample.rollout_log_probs.slice(0, sample.response_length);
  sample.response = decode(sliceTokens(sample, tokenCount(sample) - sample.response_length));
}

/**
 * `long.tokens[:len(short.tokens)] == short.tokens`, part against part without joining either. Where
 * both read the same stored snapshot piece (a child's prompt holds its parent's ids by reference), the
 * ids are equal without being compared: `number-runs.ts` `equalPrefix`.
 */
export function startsWith(long: TurnSample, short: TurnSample): boolean {
  const n = tokenCount(short);
  if (n > tokenCount(long)) return false;
  return equalPrefix(tokenRuns(short), tokenRuns(long), n);
}
