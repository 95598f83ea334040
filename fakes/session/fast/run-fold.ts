import type { MergeRules } from '../assembly.ts';
import { type NumberRun, runLength } from '../values/number-runs.ts';
import { type Decoder, type TurnSample, tokenCount, tokenRuns } from '../values/turn-tokens.ts';

/**
 * `merge_samples` (fakes/session/assembly.ts `mergeSamples`, its pair check and merged fields, given as
 * `MergeRules`) with the
 * per-token fields kept as the pieces `_merge_sample_pair` would concatenate, in order, as runs (a
 * record's ones and log-probs, an observation's zeros) and the response's texts, never joined by the
 * fold: a step's copy is a whole context (32k entries at the recipe's scale), so a pairwise fold is
 * quadratic in the turns. The samples op hands them on as deferred fields (deferred-leaf.ts).
 */
export interface FoldParts {
  readonly mask: NumberRun[];
  readonly logprobs: NumberRun[];
  readonly response: string[];
}

/** The text of `tokens[from:to]` of a turn sample. */
export type SliceDecoder = (s: TurnSample, from: number, to: number) => string;

/**
 * `decode(sliceTokens(s, from, to))` with the ids copied into one array reused across calls instead of a
 * fresh slice each (an observation's ids at every fold step): only for a decoder that does not keep its
 * input (the session's tokenizer). `0 <= from <= to <= tokenCount(s)`.
 */
export function reusingDecoder(decode: Decoder): SliceDecoder {
  const ids: number[] = [];
  return (s, from, to) => {
    if (ids.length !== to - from) ids.length = to - from;
    let at = 0;
    let start = 0;
    for (const run of tokenRuns(s)) {
      const n = runLength(run);
      const lo = Math.max(from, start);
      const hi = Math.min(to, start + n);
      if ('data' in run)
        for (let k = lo; k < hi; k += 1) ids[at++] = run.data[run.from + k - start] as number;
      start += n;
    }
    return decode(ids);
  };
}

/** `xs` as a whole-array run. */
const whole = (xs: readonly number[]): NumberRun => ({ data: xs, from: 0, to: xs.length });

/** A turn's mask and log-prob runs, `_fill_defaults` applied (`defaultPerTokenLength`). */
function turnRuns(s: TurnSample, rules: MergeRules): { mask: NumberRun; logprobs: NumberRun } {
  const count = rules.defaultPerTokenLength(s);
  const mask: NumberRun = s.loss_mask ? whole(s.loss_mask) : { fill: 1, count };
  const logprobs: NumberRun = s.rollout_log_probs ? whole(s.rollout_log_probs) : { fill: 0, count };
  return { mask, logprobs };
}

/**
 * The folded sample, and the fold's per-token parts when there was more than one turn (its mask and
 * log-probs then null).
 */
export function foldAsRuns(
  samples: readonly TurnSample[],
  decodeSlice: SliceDecoder,
  rules: MergeRules,
): { sample: TurnSample; parts: FoldParts | null } {
  const fold: { parts: FoldParts | null } = { parts: null };
  const sample = rules.mergeSamples(samples, (a, b) => {
    const obsLen = rules.checkPair(a, b);
    if (fold.parts === null) {
      const first = turnRuns(a, rules);
      fold.parts = { mask: [first.mask], logprobs: [first.logprobs], response: [a.response] };
    }
    const { mask, logprobs, response } = fold.parts;
    const next = turnRuns(b, rules);
    const gap: NumberRun = { fill: 0, count: obsLen };
    mask.push(gap, next.mask);
    logprobs.push(gap, next.logprobs);
    const aLen = tokenCount(a);
    const obsText = decodeSlice(b, aLen, aLen + obsLen);
    response.push(obsText, b.response);
    return rules.mergedSample(a, b, obsLen, obsText, { loss_mask: null, rollout_log_probs: null });
  });
  return { sample, parts: fold.parts };
}
