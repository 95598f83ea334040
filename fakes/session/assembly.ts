import { isJsonObject } from '../../common/python-json.ts';
import type { SampleStatus, WireSample } from '../../contracts/wire-sample.ts';
import type { TitoFamily } from '../tokenizer/tito.ts';
import { defineDeferred } from './fast/deferred-field.ts';
import { type NumberRun, NumberRuns, runLength } from './fast/number-runs.ts';
import { promptSource } from './fast/prompt-ids-getter.ts';
import { TextPieces } from './fast/text-pieces.ts';
import { LeafMismatchMemo } from './mismatch.ts';
import type { SessionRecord } from './record.ts';
import { TokenSnapshot } from './token-snapshot.ts';
import type { SessionTree, TrajectoryNode } from './tree.ts';
import { pathNodes } from './tree.ts';
import {
  type Decoder,
  type Head,
  SnapshotPrefix,
  sliceTokens,
  startsWith,
  stripLastOutputTokens,
  type TurnSample,
  tokenCount,
  tokenRuns,
  toTurnSample,
  toWireSample,
} from './turn-sample.ts';

/**
 * Per-leaf sample assembly (radixark/miles@31f1ca96 miles/rollout/session/v2/utils.py,
 * samples/merge.py, generate_utils/sample_utils.py): one sample per turn on the leaf's path, trailing
 * tokens trimmed against the leaf snapshot, cut to `max_seq_len`, then folded left into one sample.
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
 * `n` ones in a packed array (built by `push`: `new Array(n)` would be holey, and so would what it joins).
 */
function ones(n: number): number[] {
  const out: number[] = [];
  for (let k = 0; k < n; k += 1) out.push(1);
  return out;
}

/**
 * `ones`, one array per length shared by every turn of an op (a record's mask is never written in place:
 * a trim slices it). A leaf sample that keeps one as its own `loss_mask` gets a copy (`ownMask`), since
 * hooks may write it; a fold only reads it as a run.
 */
class SharedOnes {
  private readonly byLength = new Map<number, number[]>();

  get(n: number): number[] {
    let out = this.byLength.get(n);
    if (out === undefined) {
      out = ones(n);
      this.byLength.set(n, out);
    }
    return out;
  }

  /** `mask` itself, or a copy when it is one of the shared arrays. */
  own(mask: number[] | null): number[] | null {
    return mask !== null && this.byLength.get(mask.length) === mask ? mask.slice() : mask;
  }
}

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

/**
 * The record's `request.input_ids`: read in place from the node's snapshot when it is the chat route's
 * getter (no copy of the prompt), the plain value otherwise; null when it is not a list.
 */
function promptIds(record: SessionRecord): Head | null {
  const source = promptSource(record.request);
  if (source !== null) return new SnapshotPrefix(source.snapshot, source.length);
  const prompt = record.request.input_ids;
  return Array.isArray(prompt) ? (prompt as number[]) : null;
}

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
  onesOf: (n: number) => number[],
): TurnSample {
  const choice = firstChoice(record);
  const meta = metaInfo(choice);
  const prompt = promptIds(record);
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
    loss_mask: onesOf(outputIds.length),
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
  onesOf: (n: number) => number[] = ones,
): TurnSample[] {
  const samples: TurnSample[] = [];
  let cursor = 0;
  records.forEach((record, i) => {
    const isLast = i === records.length - 1;
    const prompt = promptIds(record);
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
      sampleFromRecord(record, output, i > 0 ? records[i - 1]! : null, i + 1, trimCount, decode, onesOf),
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

/** `xs` as a whole-array run. */
const whole = (xs: readonly number[]): NumberRun => ({ data: xs, from: 0, to: xs.length });

/** The length of `tokens[-response_length:]` (all the tokens when `response_length` is 0, as in Python). */
function responseSliceLength(s: TurnSample): number {
  const n = tokenCount(s);
  return s.response_length === 0 ? n : Math.min(s.response_length, n);
}

/**
 * The per-token fields of a fold: every piece `_merge_sample_pair` would concatenate, in order, as runs
 * (a record's ones and log-probs, an observation's zeros) and the response's texts, never joined by the
 * fold (a step's copy is a whole context: 32k entries at the recipe's scale, so a pairwise fold is
 * quadratic in the turns); the samples op hands them on as deferred fields.
 */
interface FoldParts {
  readonly mask: NumberRun[];
  readonly logprobs: NumberRun[];
  readonly response: string[];
}

/** The text of `tokens[from:to]` of a turn sample. */
type SliceDecoder = (s: TurnSample, from: number, to: number) => string;

const slicingDecoder =
  (decode: Decoder): SliceDecoder =>
  (s, from, to) =>
    decode(sliceTokens(s, from, to));

/**
 * `decode(sliceTokens(s, from, to))` with the ids copied into one array reused across calls instead of a
 * fresh slice each (an observation's ids at every fold step): only for a decoder that does not keep its
 * input (the session's tokenizer). `0 <= from <= to <= tokenCount(s)`.
 */
function reusingDecoder(decode: Decoder): SliceDecoder {
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

/**
 * `_merge_sample_pair` (radixark/miles@31f1ca96 miles/rollout/generate_utils/sample_utils.py), with `a`'s
 * per-token fields standing in `parts` when it is a fold.
 */
function mergePair(a: TurnSample, b: TurnSample, parts: FoldParts | null, decodeSlice: SliceDecoder) {
  const aLen = tokenCount(a);
  const obsLen = tokenCount(b) - aLen - b.response_length;
  assert(startsWith(b, a), () => 'b.tokens must start with a.tokens');
  assert(obsLen > 0, () => `obs_len must be > 0, got ${obsLen}`);
  let out = parts;
  if (out === null) {
    const aMask: NumberRun = a.loss_mask ? whole(a.loss_mask) : { fill: 1, count: responseSliceLength(a) };
    const aProbs: NumberRun = a.rollout_log_probs
      ? whole(a.rollout_log_probs)
      : { fill: 0, count: runLength(aMask) };
    out = { mask: [aMask], logprobs: [aProbs], response: [a.response] };
  }
  const bMask: NumberRun = b.loss_mask ? whole(b.loss_mask) : { fill: 1, count: responseSliceLength(b) };
  out.mask.push({ fill: 0, count: obsLen }, bMask);
  out.logprobs.push(
    { fill: 0, count: obsLen },
    b.rollout_log_probs ? whole(b.rollout_log_probs) : { fill: 0, count: runLength(bMask) },
  );
  const obsText = decodeSlice(b, aLen, aLen + obsLen);
  out.response.push(obsText, b.response);
  const merged: TurnSample = {
    head: b.head,
    tail: b.tail,
    // Concatenated as is, no separator (radixark/miles@31f1ca96 miles/rollout/generate_utils/sample_utils.py
    // L155: `a.response + obs_text + b.response`).
    response: a.response + obsText + b.response,
    response_length: a.response_length + obsLen + b.response_length,
    loss_mask: null,
    rollout_log_probs: null,
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
  return { merged, parts: out };
}

/** `merge_samples`: fold left, stopping once the accumulator is not `completed` (or a replay tensor gap). */
export function mergeTurnSamples(samples: readonly WireSample[], decode: Decoder): WireSample {
  const { sample, parts } = mergeTurnPieces(samples.map(toTurnSample), slicingDecoder(decode));
  if (parts !== null) {
    sample.loss_mask = new NumberRuns(parts.mask).toArray();
    sample.rollout_log_probs = new NumberRuns(parts.logprobs).toArray();
  }
  return toWireSample(sample);
}

/** The folded sample, and the fold's per-token parts when there was more than one turn (its mask and log-probs then null). */
function mergeTurnPieces(
  samples: readonly TurnSample[],
  decodeSlice: SliceDecoder,
): { sample: TurnSample; parts: FoldParts | null } {
  let acc = samples[0];
  if (acc === undefined) throw new AssemblyError('cannot merge an empty list of samples');
  let parts: FoldParts | null = null;
  for (let k = 1; k < samples.length; k += 1) {
    const next = samples[k] as TurnSample;
    if (acc.status !== 'completed') break;
    if (
      (acc.rollout_routed_experts !== null && next.rollout_routed_experts === null) ||
      (acc.rollout_indexer_topk !== null && next.rollout_indexer_topk === null)
    ) {
      break;
    }
    ({ merged: acc, parts } = mergePair(acc, next, parts, decodeSlice));
  }
  return { sample: acc, parts };
}

const runsToArray = (runs: NumberRuns) => runs.toArray();

/**
 * The wire sample of a folded leaf, its per-token fields deferred (`deferred-field.ts`): built only if a
 * hook reads them, written by the wire codec straight from their runs otherwise.
 */
function deferredWireSample(sample: TurnSample, parts: FoldParts | null): WireSample {
  const { head: _head, tail: _tail, ...rest } = sample;
  const out: WireSample = { tokens: [], ...rest };
  defineDeferred(out, 'tokens', new NumberRuns(tokenRuns(sample)), runsToArray);
  if (parts !== null) {
    defineDeferred(out, 'loss_mask', new NumberRuns(parts.mask), runsToArray);
    defineDeferred(out, 'rollout_log_probs', new NumberRuns(parts.logprobs), runsToArray);
    defineDeferred(out, 'response', new TextPieces(parts.response), (t: TextPieces) => t.join());
  }
  return out;
}

function leafRef(leaf: TrajectoryNode) {
  return {
    node_id: leaf.seq,
    parent: leaf.parent?.seq ?? null,
    path_node_ids: pathNodes(leaf).map((n) => n.seq),
    response_id: leaf.responseId,
  };
}

/**
 * `build_leaf_material`: one sample per leaf in seq order (truncated leaves and every root included);
 * a leaf whose turns `max_seq_len` removes entirely yields nothing. Throws `AssemblyError` for a leaf
 * that cannot be assembled.
 */
export function buildLeafMaterial(
  tree: SessionTree,
  family: TitoFamily,
  maxSeqLen: number | null,
  mismatches: LeafMismatchMemo = new LeafMismatchMemo(family),
): WireSample[] {
  const decode: Decoder = (ids) => family.tokenizer.decode(ids);
  const out: WireSample[] = [];
  const shared = new SharedOnes();
  const decodeSlice = reusingDecoder(decode);
  const onesOf = (n: number) => shared.get(n);
  for (const leaf of tree.leaves()) {
    const records = pathNodes(leaf).map((n) => n.record);
    let turns = computeTurnPieces(records, leaf.tokens, family.maxTrimTokens, decode, onesOf);
    if (maxSeqLen !== null) turns = truncatePieces(turns, maxSeqLen, decode);
    if (turns.length === 0) continue;
    const { sample: merged, parts } = mergeTurnPieces(turns, decodeSlice);
    if (parts === null) merged.loss_mask = shared.own(merged.loss_mask);
    const sample = deferredWireSample(merged, parts);
    const metadata: Record<string, unknown> = {
      ...sample.metadata,
      accumulated_token_ids: [],
      leaf: leafRef(leaf),
    };
    defineDeferred(
      metadata,
      'accumulated_token_ids',
      new NumberRuns(leaf.tokens.pieces(0, leaf.tokens.length)),
      runsToArray,
    );
    sample.metadata = metadata;
    const mismatch = mismatches.forLeaf(leaf);
    if (mismatch !== null) sample.metadata.tito_session_mismatch = mismatch;
    out.push(sample);
  }
  return out;
}
