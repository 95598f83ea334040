import { isJsonObject, pythonRepr, pythonTruthy } from '../../common/python-json/values.ts';
import type { SpecInfo, WeightVersionSpan } from '../../contracts/wire-sample.ts';
import type { SessionRecord } from './record.ts';

/**
 * Profile switch `samplesWire: 'spans'` (sii-avalanche/miles@4d412b5a miles/utils/types.py
 * `WeightVersionsPerCall.from_meta_info`, `Sample.SpecInfo`; samples/merge.py
 * `_compute_sample_from_openai_record`; generate_utils/sample_utils.py `_merge_sample_pair`,
 * `_merge_spec_info`; samples/codec.py): each turn's `weight_versions` entry is one call's list of
 * `{version, abs_start, abs_end}` spans over the turn's own `prompt + output` tokens, cut where a trim or
 * `max_seq_len` cuts the turn (`clipSpans`), a merged sample keeps one list per turn, and every sample carries `spec_info`, its counters summed over
 * turns (zeros: without `--sglang-speculative-algorithm` Miles never adds to them).
 */

/** An `assert` of `from_meta_info`; the samples op answers it 422 with the text, as any assembly assertion. */
export class SpanAssertionError extends Error {}

function outputCount(meta: Record<string, unknown>): number {
  const pairs = meta.output_token_logprobs;
  return Array.isArray(pairs) ? pairs.length : 0;
}

/** Output-relative `(version, start, end)` triples, from SGLang's `weight_versions` or its one `weight_version`. */
function outputRelative(meta: Record<string, unknown>, n: number): Array<[unknown, number, number]> {
  const raw = meta.weight_versions;
  if (raw !== undefined && raw !== null) {
    const spans = (raw as Array<Record<string, unknown>>).map(
      (s) => [s.version, Number(s.start), Number(s.end)] as [unknown, number, number],
    );
    if (!spans.every(([, , end]) => end <= n))
      throw new SpanAssertionError(
        `weight version spans ${pythonRepr(raw)} extend past the ${n} output tokens implied by output_token_logprobs; anchoring spans relies on return_logprob reporting every output token`,
      );
    return spans;
  }
  if (meta.weight_version !== undefined && meta.weight_version !== null) {
    if (!(n > 0 || !pythonTruthy(meta.completion_tokens)))
      throw new SpanAssertionError(
        'weight_version is present but output_token_logprobs is empty; anchoring the version to output tokens requires return_logprob=True on the generate request',
      );
    return [[meta.weight_version, 0, n]];
  }
  return [];
}

/** `WeightVersionsPerCall.from_meta_info(meta_info, output_end=len(prompt) + len(output)).to_dicts()`. */
export function spansOfRecord(record: SessionRecord): WeightVersionSpan[] {
  const choices = record.response.choices;
  const choice = Array.isArray(choices) && isJsonObject(choices[0]) ? choices[0] : {};
  const meta = isJsonObject(choice.meta_info) ? choice.meta_info : {};
  const n = outputCount(meta);
  const prompt = record.request.input_ids;
  const outputEnd = (Array.isArray(prompt) ? prompt.length : 0) + n;
  const start = outputEnd - n;
  return outputRelative(meta, n)
    .filter(([, s, e]) => s < e)
    .map(([version, s, e]) => ({ version, abs_start: start + s, abs_end: start + e }));
}

/**
 * What `Sample.strip_last_output_tokens` leaves of a call's spans once the turn keeps `tokens` tokens (a
 * trailing-token trim, a `max_seq_len` cut): a span starting past the end dropped, one ending past it cut
 * there (sii-avalanche/miles@4d412b5a miles/utils/types.py).
 */
export function clipSpans(spans: readonly WeightVersionSpan[], tokens: number): WeightVersionSpan[] {
  return spans
    .filter((span) => span.abs_start < tokens)
    .map((span) => (span.abs_end <= tokens ? span : { ...span, abs_end: tokens }));
}

/** `Sample.SpecInfo()` as `to_dict` writes it: what every sample carries without speculative decoding. */
export function zeroSpecInfo(): SpecInfo {
  return { spec_num_correct_drafts: 0, spec_num_proposed_drafts: 0, spec_verify_ct: 0, completion_tokens: 0 };
}
