import { isJsonObject } from '../../common/python-json/values.ts';
import type { SampleStatus, WeightVersionSpan, WireSample } from '../../contracts/wire-sample.ts';
import type { TitoFamily } from '../tokenizer/tito.ts';
import { LeafMismatchMemo } from './mismatch.ts';
import type { SessionRecord } from './record.ts';
import { TokenSnapshot } from './token-snapshot.ts';
import type { SessionTree, TrajectoryNode } from './tree.ts';
import { pathNodes } from './tree.ts';
import { turnArgsOf } from './turn-args.ts';
import { startsWith, stripLastOutputTokens } from './turn-sample.ts';
import {
  type Decoder,
  type Head,
  sliceTokens,
  type TurnSample,
  tokenCount,
  toTurnSample,
  toWireSample,
} from './values/turn-tokens.ts';
import { clipSpans, SpanAssertionError, spansOfRecord, zeroSpecInfo } from './weight-version-spans.ts';

/**
 * Per-leaf sample assembly (radixark/miles@31f1ca96 miles/rollout/session/v2/utils.py,
 * samples/merge.py, generate_utils/sample_utils.py): one sample per turn on the leaf's path, trailing
 * tokens trimmed against the leaf snapshot, cut to `max_seq_len`, then folded left into one sample.
 * Miles' rules on plain lists; the samples op's default keeps the fold's per-token pieces as runs
 * instead and hands them on deferred (fast/run-leaf-fields.ts, through `LeafTokenFields`), reusing the
 * pair check, the stop rule and the merged fields from here (`MergeRules`, which compose.ts hands over:
 * fast/ imports no rule).
 */

/** Miles' `AssertionError`/`ValueError` in assembly: the samples op answers 422 with this text. */
export class AssemblyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AssemblyError';
  }
}

function assert(condition: boolean, message: () => string): asserts condition {
  if (!condition) throw new AssemblyError(message());
}

function firstChoice(record: SessionRecord): Record<string, unknown> {
  const choices = record.response.choices;
  const choice = Array.isArray(choices) ? choices[0] : undefined;
  if (!isJsonObject(choice)) throw new TypeError('record without choices[0]');
  return choice;
}

function metaInfo(choice: Record<string, unknown>): Record<string, unknown> {
  return isJsonObject(choice.meta_info) ? choice.meta_info : {};
}

/** A record's output ids and their log-probs, from `meta_info.output_token_logprobs` pairs. */
interface OutputTokens {
  readonly ids: number[];
  readonly logprobs: number[];
}

function outputTokens(record: SessionRecord): OutputTokens {
  const pairs = metaInfo(firstChoice(record)).output_token_logprobs;
  if (!Array.isArray(pairs)) throw new TypeError('output_token_logprobs is not a list');
  // Sized up front (a push per pair grows both arrays step by step).
  const ids = new Array<number>(pairs.length);
  const logprobs = new Array<number>(pairs.length);
  for (let k = 0; k < pairs.length; k += 1) {
    const p: unknown = pairs[k];
    if (!Array.isArray(p)) throw new TypeError('output_token_logprobs entry is not a pair');
    logprobs[k] = Number(p[0]);
    ids[k] = Number(p[1]);
  }
  return { ids, logprobs };
}

/**
 * `n` copies of `v` in a packed array (built by `push`: `new Array(n)` would be holey, and so would what
 * it joins).
 */
function filled(n: number, v: number): number[] {
  const out: number[] = [];
  for (let k = 0; k < n; k += 1) out.push(v);
  return out;
}

/** `[1] * n`. */
const ones = (n: number): number[] => filled(n, 1);

/** `[0] * n` (`[0.0] * n` for log-probs). */
const zeros = (n: number): number[] => filled(n, 0);

function statusFor(finishReason: unknown): SampleStatus {
  switch (finishReason) {
    case 'stop':
    case 'tool_calls':
      return 'completed';
    case 'length':
      return 'truncated';
    case 'abort':
      return 'aborted';
    default:
      return 'pending';
  }
}

function intOr0(v: unknown): number {
  return typeof v === 'number' && Number.isFinite(v) ? v : 0;
}

/** `record.request["input_ids"]`, the prompt the record was sent with; null when it is not a list. */
function plainPromptIds(record: SessionRecord): Head | null {
  const prompt = record.request.input_ids;
  return Array.isArray(prompt) ? (prompt as number[]) : null;
}

/** What reading a record takes: its prompt ids and a fresh mask of ones (`LeafTokenFields`). */
type RecordReading = Pick<LeafTokenFields, 'ones' | 'prompt'>;

const plainReading: RecordReading = { ones, prompt: plainPromptIds };

/** The leaf's snapshot (the server's path) or a plain list (the exported per-turn function). */
type Accumulated = TokenSnapshot | readonly number[];

const accumulatedSlice = (acc: Accumulated, from: number, to: number): number[] =>
  acc instanceof TokenSnapshot ? acc.slice(from, to) : acc.slice(from, to);

/** How many leading `ids` equal `acc[at:]` (under `===`). */
function matchedLength(acc: Accumulated, at: number, ids: readonly number[]): number {
  if (!(acc instanceof TokenSnapshot)) {
    let m = 0;
    while (m < ids.length && at + m < acc.length && ids[m] === acc[at + m]) m += 1;
    return m;
  }
  let m = 0;
  for (const { data, from, to } of acc.pieces(at, at + ids.length)) {
    for (let k = from; k < to; k += 1, m += 1) if (ids[m] !== data[k]) return m;
  }
  return m;
}

/** `_compute_sample_from_openai_record` plus the lifecycle segment. */
function sampleFromRecord(
  record: SessionRecord,
  output: OutputTokens,
  previous: SessionRecord | null,
  turn: number,
  trimCount: number,
  decode: Decoder,
  reading: RecordReading,
): TurnSample {
  const choice = firstChoice(record);
  const meta = metaInfo(choice);
  const prompt = reading.prompt(record);
  if (prompt === null) {
    throw new AssemblyError('input_ids not found in request — the session server should populate it');
  }
  const outputIds = output.ids;
  const sample: TurnSample = {
    head: prompt,
    tail: outputIds,
    // A trim re-decodes the kept part below: decode once, whichever applies.
    response: trimCount > 0 ? '' : decode(outputIds),
    response_length: outputIds.length,
    loss_mask: reading.ones(outputIds.length),
    rollout_log_probs: output.logprobs,
    rollout_routed_experts: null,
    rollout_indexer_topk: null,
    status: 'pending',
    weight_versions: [],
    prefix_cache_info: { cached_tokens: 0, total_prompt_tokens: 0 },
    metadata: {},
    reward: null,
  };
  stripLastOutputTokens(sample, trimCount, decode);
  sample.status = statusFor(choice.finish_reason);
  sample.prefix_cache_info = {
    cached_tokens: intOr0(meta.cached_tokens),
    total_prompt_tokens: intOr0(meta.prompt_tokens),
  };
  if ('weight_version' in meta) sample.weight_versions.push(meta.weight_version);
  const latency = meta.e2e_latency;
  const segment: Record<string, unknown> = {
    t0: typeof latency === 'number' ? record.timestamp - latency : null,
    t1: record.timestamp,
    turn,
    req_ts: record.request_timestamp,
  };
  if (previous !== null) segment.prev_t1 = previous.timestamp;
  sample.metadata = { lifecycle: segment };
  return sample;
}

/**
 * `compute_samples_from_openai_records` (samples/merge.py) with the trailing-token trim against the leaf
 * snapshot.
 */
export function computeTurnSamples(
  records: readonly SessionRecord[],
  accumulated: readonly number[],
  maxTrimTokens: number,
  decode: Decoder,
): WireSample[] {
  return computeTurnPieces(records, accumulated, maxTrimTokens, decode).map(toWireSample);
}

function computeTurnPieces(
  records: readonly SessionRecord[],
  accumulated: Accumulated,
  maxTrimTokens: number,
  decode: Decoder,
  reading: RecordReading = plainReading,
): TurnSample[] {
  const samples: TurnSample[] = [];
  let cursor = 0;
  records.forEach((record, i) => {
    const isLast = i === records.length - 1;
    const prompt = reading.prompt(record);
    const output = outputTokens(record);
    const outputIds = output.ids;
    cursor = prompt === null ? 0 : prompt.length;
    const matched = matchedLength(accumulated, cursor, outputIds);
    const trimCount = outputIds.length - matched;
    const allowed = isLast ? 0 : maxTrimTokens;
    assert(
      trimCount <= allowed,
      () =>
        `trim_count ${trimCount} exceeds allowed=${allowed} (is_last=${isLast ? 'True' : 'False'}, max_trim_tokens=${maxTrimTokens}); output_ids[-3:]=[${outputIds.slice(-3).join(', ')}], accumulated[cursor:cursor+3]=[${accumulatedSlice(accumulated, cursor, cursor + 3).join(', ')}]`,
    );
    cursor += matched;
    samples.push(
      sampleFromRecord(record, output, i > 0 ? records[i - 1]! : null, i + 1, trimCount, decode, reading),
    );
  });
  assert(
    cursor === accumulated.length,
    () =>
      `cursor ${cursor} != len(accumulated_token_ids) ${accumulated.length} after processing all ${records.length} records`,
  );
  return samples;
}

/**
 * `truncate_samples_by_total_tokens` (samples/merge.py), on whole wire samples (what `computeTurnSamples`
 * returns).
 */
export function truncateByTotalTokens(
  samples: readonly WireSample[],
  maxSeqLen: number,
  decode: Decoder,
): WireSample[] {
  return truncatePieces(samples.map(toTurnSample), maxSeqLen, decode).map(toWireSample);
}

/** `truncate_samples_by_total_tokens` (samples/merge.py) on two-part turn samples. */
function truncatePieces(samples: TurnSample[], maxSeqLen: number, decode: Decoder): TurnSample[] {
  const out: TurnSample[] = [];
  for (const sample of samples) {
    const total = tokenCount(sample);
    if (total <= maxSeqLen) {
      out.push(sample);
      continue;
    }
    const overshoot = total - maxSeqLen;
    if (sample.response_length - overshoot <= 0) break;
    stripLastOutputTokens(sample, overshoot, decode);
    sample.status = 'truncated';
    out.push(sample);
    break;
  }
  return out;
}

function lifecycleList(metadata: Record<string, unknown>): unknown[] {
  const l = metadata.lifecycle;
  return Array.isArray(l) ? l : l === undefined ? [] : [l];
}

/**
 * The length `_fill_defaults` gives a missing `loss_mask` (ones) or `rollout_log_probs` (zeros):
 * `response_length` (radixark/miles@31f1ca96 miles/rollout/generate_utils/sample_utils.py).
 */
function defaultPerTokenLength(s: TurnSample): number {
  return s.response_length;
}

/** `Sample.validate`'s length checks (radixark/miles@31f1ca96 miles/utils/types.py), in its order. */
function validate(s: TurnSample): void {
  const n = s.response_length;
  assert(n >= 0, () => `response_length must be >= 0, got ${n}`);
  const total = tokenCount(s);
  assert(total >= n, () => `tokens length (${total}) must be >= response_length (${n})`);
  const mask = s.loss_mask;
  if (mask !== null)
    assert(mask.length === n, () => `loss_mask length (${mask.length}) != response_length (${n})`);
  const probs = s.rollout_log_probs;
  if (probs !== null)
    assert(probs.length === n, () => `rollout_log_probs length (${probs.length}) != response_length (${n})`);
}

/**
 * `_merge_sample_pair`'s checks (radixark/miles@31f1ca96 miles/rollout/generate_utils/sample_utils.py),
 * in its order: both samples valid, `b.tokens` starting with `a.tokens`, a non-empty observation between
 * them, and `b`'s replay tensors at least as long as `a`'s. Returns `obs_len`. (Its prompt check always
 * holds here: a session sample's `prompt` is the default empty string.)
 */
function checkPair(a: TurnSample, b: TurnSample): number {
  const obsLen = tokenCount(b) - tokenCount(a) - b.response_length;
  validate(a);
  validate(b);
  assert(startsWith(b, a), () => 'b.tokens must start with a.tokens');
  assert(obsLen > 0, () => `obs_len must be > 0, got ${obsLen}`);
  for (const field of ['rollout_routed_experts', 'rollout_indexer_topk'] as const) {
    const [x, y] = [a[field], b[field]];
    if (x === null) continue;
    assert(y !== null, () => `cannot merge: a has ${field} but b does not`);
    // A bare `assert` in Miles: its message is empty.
    assert((x.shape[0] ?? 0) <= (y.shape[0] ?? 0), () => '');
  }
  return obsLen;
}

/** A merged sample's per-token lists (null while a fold keeps them elsewhere). */
export interface PerTokenLists {
  readonly loss_mask: number[] | null;
  readonly rollout_log_probs: number[] | null;
}

/**
 * `_merge_sample_pair`'s result (radixark/miles@31f1ca96 miles/rollout/generate_utils/sample_utils.py):
 * `b`'s tokens, the texts and lengths joined around the observation, the per-token lists as given, `b`'s
 * status and replay tensors, the weight versions and lifecycles concatenated, the prefix-cache counts
 * summed, `a`'s reward.
 */
function mergedSample(
  a: TurnSample,
  b: TurnSample,
  obsLen: number,
  obsText: string,
  lists: PerTokenLists,
): TurnSample {
  return {
    head: b.head,
    tail: b.tail,
    // Concatenated as is, no separator (radixark/miles@31f1ca96 miles/rollout/generate_utils/sample_utils.py
    // L155: `a.response + obs_text + b.response`).
    response: a.response + obsText + b.response,
    response_length: a.response_length + obsLen + b.response_length,
    loss_mask: lists.loss_mask,
    rollout_log_probs: lists.rollout_log_probs,
    rollout_routed_experts: b.rollout_routed_experts,
    rollout_indexer_topk: b.rollout_indexer_topk,
    status: b.status,
    weight_versions: a.weight_versions.concat(b.weight_versions),
    prefix_cache_info: {
      cached_tokens: a.prefix_cache_info.cached_tokens + b.prefix_cache_info.cached_tokens,
      total_prompt_tokens: a.prefix_cache_info.total_prompt_tokens + b.prefix_cache_info.total_prompt_tokens,
    },
    metadata: { ...a.metadata, lifecycle: lifecycleList(a.metadata).concat(lifecycleList(b.metadata)) },
    reward: a.reward,
  };
}

/**
 * `_merge_sample_pair` (radixark/miles@31f1ca96 miles/rollout/generate_utils/sample_utils.py) on plain
 * lists: `a.loss_mask + [0] * obs_len + b.loss_mask`, the log-probs alike.
 */
function mergeSamplePair(a: TurnSample, b: TurnSample, decode: Decoder): TurnSample {
  const obsLen = checkPair(a, b);
  const aLen = tokenCount(a);
  const obsText = decode(sliceTokens(b, aLen, aLen + obsLen));
  // `_fill_defaults`: a missing list is ones (mask) or zeros (log-probs) over the response.
  const aMask = a.loss_mask ?? ones(defaultPerTokenLength(a));
  const bMask = b.loss_mask ?? ones(defaultPerTokenLength(b));
  const aProbs = a.rollout_log_probs ?? zeros(defaultPerTokenLength(a));
  const bProbs = b.rollout_log_probs ?? zeros(defaultPerTokenLength(b));
  return mergedSample(a, b, obsLen, obsText, {
    loss_mask: aMask.concat(zeros(obsLen), bMask),
    rollout_log_probs: aProbs.concat(zeros(obsLen), bProbs),
  });
}

/**
 * `merge_samples`' stop rule (radixark/miles@31f1ca96 miles/rollout/generate_utils/sample_utils.py): the
 * fold ends once the accumulator is not `completed`, or where `next` would leave a replay tensor gap.
 */
function foldStops(acc: TurnSample, next: TurnSample): boolean {
  return (
    acc.status !== 'completed' ||
    (acc.rollout_routed_experts !== null && next.rollout_routed_experts === null) ||
    (acc.rollout_indexer_topk !== null && next.rollout_indexer_topk === null)
  );
}

/** `merge_samples`: `samples` folded left by `mergePair` until `foldStops`. */
function mergeSamples(
  samples: readonly TurnSample[],
  mergePair: (a: TurnSample, b: TurnSample) => TurnSample,
): TurnSample {
  let acc = samples[0];
  if (acc === undefined) throw new AssemblyError('cannot merge an empty list of samples');
  for (let k = 1; k < samples.length; k += 1) {
    const next = samples[k] as TurnSample;
    if (foldStops(acc, next)) break;
    acc = mergePair(acc, next);
  }
  return acc;
}

/**
 * What a fold that keeps its per-token pieces elsewhere reuses of Miles' merge (fast/run-fold.ts, handed
 * over by compose.ts): the pair check, the merged fields, the stop rule and `_fill_defaults`' length.
 */
export interface MergeRules {
  readonly checkPair: typeof checkPair;
  readonly mergedSample: typeof mergedSample;
  readonly mergeSamples: typeof mergeSamples;
  readonly defaultPerTokenLength: typeof defaultPerTokenLength;
}

export const mergeRules: MergeRules = { checkPair, mergedSample, mergeSamples, defaultPerTokenLength };

/** `merge_samples` on whole wire samples (what `computeTurnSamples` returns). */
export function mergeTurnSamples(samples: readonly WireSample[], decode: Decoder): WireSample {
  return toWireSample(mergeSamples(samples.map(toTurnSample), (a, b) => mergeSamplePair(a, b, decode)));
}

/**
 * How a leaf's per-token fields are made, one per samples op: the plain lists here (`plainLeafFields`),
 * or the same values kept as runs and built only when read (fast/run-leaf-fields.ts).
 */
export interface LeafTokenFields {
  /** `[1] * n`: a record's `loss_mask`. */
  ones(n: number): number[];
  /** `record.request["input_ids"]` (null when it is not a list): the head of the record's tokens. */
  prompt(record: SessionRecord): Head | null;
  /** `merge_samples` over a leaf's turns, as the wire sample the hooks get. */
  fold(turns: readonly TurnSample[]): WireSample;
  /** Sets `metadata.accumulated_token_ids` to `list(leaf.token_ids)`, in its key position. */
  setAccumulatedIds(metadata: Record<string, unknown>, leaf: TrajectoryNode): void;
}

export type LeafTokenFieldsFor = (decode: Decoder) => LeafTokenFields;

/** Miles' plain lists: fresh ones per record, `merge_samples` by concatenation, a copy of the leaf's ids. */
export const plainLeafFields: LeafTokenFieldsFor = (decode) => ({
  ...plainReading,
  fold: (turns) => toWireSample(mergeSamples(turns, (a, b) => mergeSamplePair(a, b, decode))),
  setAccumulatedIds: (metadata, leaf) => {
    metadata.accumulated_token_ids = leaf.tokens.toArray();
  },
});

function leafRef(leaf: TrajectoryNode) {
  return {
    node_id: leaf.seq,
    parent: leaf.parent?.seq ?? null,
    path_node_ids: pathNodes(leaf).map((n) => n.seq),
    response_id: leaf.responseId,
  };
}

/** Profile switches that change what a leaf's sample holds (contracts/miles-profile.ts). */
export interface LeafRules {
  /** `turnArgs`: `metadata.turn_args` (turn-args.ts). */
  readonly turnArgs?: boolean;
  /** `samplesWire: 'spans'`: span dicts per call and `spec_info` (weight-version-spans.ts). */
  readonly weightVersionSpans?: boolean;
}

/** Every record's spans, as Miles computes them for each turn before trimming or truncating. */
function callSpans(records: readonly SessionRecord[]): WeightVersionSpan[][] {
  try {
    return records.map(spansOfRecord);
  } catch (error) {
    if (error instanceof SpanAssertionError) throw new AssemblyError(error.message);
    throw error;
  }
}

/**
 * `build_leaf_material` (radixark/miles@31f1ca96 miles/rollout/session/v2/utils.py): one sample per leaf
 * in seq order (truncated leaves and every root included); a leaf whose turns `max_seq_len` removes
 * entirely yields nothing. Throws `AssemblyError` for a leaf that cannot be assembled. `fieldsFor` makes
 * the per-token fields (default the plain lists).
 */
export function buildLeafMaterial(
  tree: SessionTree,
  family: TitoFamily,
  maxSeqLen: number | null,
  mismatches: LeafMismatchMemo = new LeafMismatchMemo(family),
  fieldsFor: LeafTokenFieldsFor = plainLeafFields,
  rules: LeafRules = {},
): WireSample[] {
  const decode: Decoder = (ids) => family.tokenizer.decode(ids);
  const fields = fieldsFor(decode);
  const out: WireSample[] = [];
  for (const leaf of tree.leaves()) {
    const records = pathNodes(leaf).map((n) => n.record);
    let turns = computeTurnPieces(records, leaf.tokens, family.maxTrimTokens, decode, fields);
    const calls = rules.weightVersionSpans === true ? callSpans(records) : null;
    if (maxSeqLen !== null) turns = truncatePieces(turns, maxSeqLen, decode);
    if (turns.length === 0) continue;
    // One call's spans per turn kept, cut to what the turn kept, merged in turn order (read before the fold).
    const spans = calls === null ? null : turns.map((turn, i) => clipSpans(calls[i]!, tokenCount(turn)));
    const sample = fields.fold(turns);
    if (spans !== null) {
      sample.weight_versions = spans;
      sample.spec_info = zeroSpecInfo();
    }
    const metadata: Record<string, unknown> = {
      ...sample.metadata,
      accumulated_token_ids: null,
      // Profile switch `turnArgs` (turn-args.ts): between the ids and the leaf, as Miles' `flat` dict has it.
      ...(rules.turnArgs === true ? { turn_args: turnArgsOf(leaf) } : {}),
      leaf: leafRef(leaf),
    };
    fields.setAccumulatedIds(metadata, leaf);
    const mismatch = mismatches.forLeaf(leaf);
    if (mismatch !== null) metadata.tito_session_mismatch = mismatch;
    sample.metadata = metadata;
    out.push(sample);
  }
  return out;
}
