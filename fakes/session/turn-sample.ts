import type { WireSample } from '../../contracts/wire-sample.ts';

/** Turns token ids into text (the session's tokenizer). */
export type Decoder = (ids: readonly number[]) => string;

/**
 * A turn sample whose tokens are kept as two parts, the record's prompt ids (`head`, shared, never
 * written) and the output ids (`tail`), joined only for the sample that leaves the fold: a turn's tokens
 * are a whole context (32k ids at the recipe's scale), and copying every turn's is most of the op.
 */
export type TurnSample = Omit<WireSample, 'tokens'> & { head: readonly number[]; tail: readonly number[] };

export const tokenCount = (s: TurnSample) => s.head.length + s.tail.length;

/** `tokens[from:to]` (Array.prototype.slice's index rules) of a two-part sample. */
export function sliceTokens(s: TurnSample, from: number, to: number = tokenCount(s)): number[] {
  const n = tokenCount(s);
  const norm = (k: number) => (k < 0 ? Math.max(n + k, 0) : Math.min(k, n));
  const lo = norm(from);
  const hi = norm(to);
  if (hi <= s.head.length) return s.head.slice(lo, hi);
  if (lo >= s.head.length) return s.tail.slice(lo - s.head.length, hi - s.head.length);
  return s.head.slice(lo).concat(s.tail.slice(0, hi - s.head.length));
}

export function toTurnSample(sample: WireSample): TurnSample {
  const { tokens, ...rest } = sample;
  return { ...rest, head: tokens, tail: [] };
}

export function toWireSample(sample: TurnSample): WireSample {
  const { head, tail, ...rest } = sample;
  return { tokens: head.concat(tail), ...rest };
}

/** `Sample.strip_last_output_tokens`: tokens, mask and logprobs in lockstep; the response re-decoded. */
export function stripLastOutputTokens(sample: TurnSample, count: number, decode: Decoder): void {
  if (count <= 0) return;
  const keep = tokenCount(sample) - count;
  if (keep >= sample.head.length) sample.tail = sample.tail.slice(0, keep - sample.head.length);
  else {
    sample.head = sample.head.slice(0, Math.max(keep, 0));
    sample.tail = [];
  }
  sample.response_length -= count;
  if (sample.loss_mask) sample.loss_mask = sample.loss_mask.slice(0, sample.response_length);
  if (sample.rollout_log_probs)
    sample.rollout_log_probs = sample.rollout_log_probs.slice(0, sample.response_length);
  sample.response = decode(sliceTokens(sample, tokenCount(sample) - sample.response_length));
}

function equalRange(
  x: readonly number[],
  xFrom: number,
  y: readonly number[],
  yFrom: number,
  n: number,
): boolean {
  for (let i = 0; i < n; i += 1) if (x[xFrom + i] !== y[yFrom + i]) return false;
  return true;
}

/** `long.tokens[:len(short.tokens)] == short.tokens`, part against part without joining either. */
export function startsWith(long: TurnSample, short: TurnSample): boolean {
  if (tokenCount(short) > tokenCount(long)) return false;
  let at = 0; // position in both sequences
  for (const part of [short.head, short.tail]) {
    let i = 0; // position in `part`
    while (i < part.length) {
      const inHead = at < long.head.length;
      const source = inHead ? long.head : long.tail;
      const from = inHead ? at : at - long.head.length;
      const n = Math.min(part.length - i, source.length - from);
      if (!equalRange(part, i, source, from, n)) return false;
      i += n;
      at += n;
    }
  }
  return true;
}
