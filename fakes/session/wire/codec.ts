import { randomUUID } from 'node:crypto';
import { pythonJsonDumps } from '../../../common/python-json/dumps.ts';
import { pythonJsonLoads } from '../../../common/python-json/loads.ts';
import { isJsonObject } from '../../../common/python-json/values.ts';
import {
  EmptyReasonSchema,
  SampleStatusSchema,
  type SamplesReply,
  type TreeMetadata,
  TreeMetadataSchema,
  type WireSample,
  WireSampleSchema,
} from '../../../contracts/wire-sample.ts';
import { deferredSource } from '../values/deferred-field.ts';
import { NumberRuns } from '../values/number-runs.ts';
import { TextPieces } from '../values/text-pieces.ts';
import { META_JSON_OPTIONS, metaTensor } from './meta-text.ts';
import { type ReplyStream, streamToBuffer, wholeStream } from './reply-stream.ts';
import { runsTensor } from './run-tensors.ts';
import {
  type Allocate,
  type Dtype,
  decodeSafetensors,
  encodeSafetensors,
  type Tensor,
  type WrittenTensor,
  wireError,
} from './safetensors.ts';
import { safetensorsStream } from './safetensors-stream.ts';

/**
 * The samples op's wire format (radixark/miles@31f1ca96
 * miles/rollout/session/samples/codec.py, `COMPUTED_FIELDS_V2`): tensor fields become tensors named
 * `<field>.<sample index>`, JSON fields go into the per-sample meta objects of the `_samples_meta` tensor
 * (U8 bytes of compact JSON), and a null tensor field is listed in that sample's `nulls` instead.
 */

/** `COMPUTED_FIELDS_V2`, in order. */
export const COMPUTED_FIELDS_V2 = [
  'tokens',
  'response',
  'response_length',
  'loss_mask',
  'rollout_log_probs',
  'rollout_routed_experts',
  'rollout_indexer_topk',
  'status',
  'weight_versions',
  'prefix_cache_info',
  'metadata',
  'reward',
] as const;

type TensorField =
  | 'tokens'
  | 'loss_mask'
  | 'rollout_log_probs'
  | 'rollout_routed_experts'
  | 'rollout_indexer_topk';

const TENSOR_FIELDS: Readonly<Record<TensorField, { dtype: Dtype; oneD: boolean }>> = {
  tokens: { dtype: 'I64', oneD: true },
  loss_mask: { dtype: 'U8', oneD: true },
  rollout_log_probs: { dtype: 'F64', oneD: true },
  rollout_routed_experts: { dtype: 'I32', oneD: false },
  rollout_indexer_topk: { dtype: 'I32', oneD: false },
};

const isTensorField = (name: string): name is TensorField => name in TENSOR_FIELDS;

/** JSON fields of the per-sample meta: the non-tensor fields of `COMPUTED_FIELDS_V2`, in its order (then `nulls`). */
export const JSON_FIELDS = COMPUTED_FIELDS_V2.filter(
  (field): field is Exclude<(typeof COMPUTED_FIELDS_V2)[number], TensorField> => !isTensorField(field),
);

export const META_TENSOR = '_samples_meta';

/**
 * The newer wire's `spec_info` (sii-avalanche/miles@4d412b5a miles/rollout/session/samples/codec.py
 * `SAMPLES_VALUE_SPEC`: after `weight_versions`), written when the sample has one (profile switch
 * `samplesWire: 'spans'`); 31f1ca96's wire has no such field. The decoder reads either.
 */
function specInfoOf(sample: WireSample): { spec_info?: WireSample['spec_info'] } {
  return sample.spec_info === undefined ? {} : { spec_info: sample.spec_info };
}

function tensorFor(field: TensorField, sample: WireSample): Tensor | null {
  const spec = TENSOR_FIELDS[field];
  const value = sample[field];
  if (value === null) return null;
  if (Array.isArray(value)) {
    if (field === 'loss_mask' && !value.every((v) => Number.isInteger(v) && v >= 0 && v <= 255)) {
      throw new RangeError('loss_mask values do not fit wire dtype uint8');
    }
    if (field === 'tokens' && !value.every((v) => Number.isSafeInteger(v))) {
      throw new RangeError('tokens must be int64 values');
    }
    return { dtype: spec.dtype, shape: [value.length], data: value };
  }
  if (!value.data.every((v) => Number.isInteger(v) && v >= -(2 ** 31) && v < 2 ** 31)) {
    throw new RangeError(`${field} must already be int32`);
  }
  return { dtype: 'I32', shape: value.shape, data: value.data };
}

/**
 * Encodes a reply into `allocate`'s bytes (default a fresh buffer; the server's reused reply buffers,
 * `reply-buffers.ts`); throws (a 500 in the server) for values the wire dtypes cannot hold.
 */
export function encodeSamples(reply: SamplesReply, allocate?: Allocate): Uint8Array {
  const stream = streamFromRuns(reply);
  return stream === null ? encodeJoined(reply, allocate) : streamToBuffer(stream, allocate ?? freshBytes);
}

const freshBytes: Allocate = (size) => new Uint8Array(size);

/**
 * The bytes `encodeSamples` gives, as a stream of known length written into buffers of any size in order
 * (the samples route's reused chunks, `reply-buffers.ts`). Throws what `encodeSamples` throws, before any
 * byte; the reference path (below) is written whole into a fresh buffer first and then streamed.
 */
export function samplesReplyStream(reply: SamplesReply): ReplyStream {
  return streamFromRuns(reply) ?? wholeStream(encodeJoined(reply, undefined));
}

/** `encodeJoined`'s range checks on runs (an `Int32Array` run holds int64 values by construction). */
function runsFit(field: TensorField, runs: NumberRuns): boolean {
  if (field === 'tokens') return runs.every(Number.isSafeInteger, true);
  if (field === 'loss_mask') return runs.every((v) => Number.isInteger(v) && v >= 0 && v <= 255);
  return true;
}

/**
 * The same bytes as `encodeJoined`, with the fields the samples op deferred (`deferred-field.ts`: a
 * folded leaf's tokens, mask, log-probs, response and `accumulated_token_ids`, never read by the hooks)
 * written from their runs and pieces straight into the reply. Null when a deferred value would fail a
 * check or the meta needs the whole text (`meta-text.ts`): `encodeJoined` then gives the bytes or the
 * error, as before.
 */
function streamFromRuns(reply: SamplesReply): ReplyStream | null {
  const tensors = new Map<string, Tensor | WrittenTensor>();
  const nonce = randomUUID();
  const placeholder = (k: number) => `${nonce}:${k}`;
  const values: Array<NumberRuns | TextPieces> = [];
  const standIn = (value: NumberRuns | TextPieces) => {
    values.push(value);
    return placeholder(values.length - 1);
  };
  let fits = true;
  const metas = reply.samples.map((sample, index) => {
    const nulls: string[] = [];
    for (const field of Object.keys(TENSOR_FIELDS) as TensorField[]) {
      const runs = deferredSource(sample, field);
      if (
        runs instanceof NumberRuns &&
        field !== 'rollout_routed_experts' &&
        field !== 'rollout_indexer_topk'
      ) {
        fits &&= runsFit(field, runs);
        tensors.set(
          `${field}.${index}`,
          runsTensor(TENSOR_FIELDS[field].dtype as 'I64' | 'F64' | 'U8', runs),
        );
        continue;
      }
      if (!fits) return null;
      const tensor = tensorFor(field, sample);
      if (tensor === null) nulls.push(field);
      else tensors.set(`${field}.${index}`, tensor);
    }
    const response = deferredSource(sample, 'response');
    return {
      response: response instanceof TextPieces ? standIn(response) : sample.response,
      response_length: sample.response_length,
      status: sample.status,
      weight_versions: sample.weight_versions,
      ...specInfoOf(sample),
      prefix_cache_info: sample.prefix_cache_info,
      metadata: withStandIns(sample.metadata, standIn),
      reward: sample.reward ?? null,
      nulls,
    };
  });
  if (!fits || values.length === 0) return null;
  const text = pythonJsonDumps(
    { samples: metas, session_metadata: reply.sessionMetadata, empty_reason: reply.emptyReason },
    META_JSON_OPTIONS,
  );
  const meta = metaTensor(text, placeholder, values);
  if (meta === null) return null;
  tensors.set(META_TENSOR, meta);
  return safetensorsStream(tensors);
}

/** `metadata` with each deferred list of numbers replaced by its stand-in (same keys, same order). */
function withStandIns(
  metadata: Record<string, unknown>,
  standIn: (value: NumberRuns) => string,
): Record<string, unknown> {
  const keys = Object.keys(metadata);
  if (!keys.some((key) => deferredSource(metadata, key) instanceof NumberRuns)) return metadata;
  const out: Record<string, unknown> = {};
  for (const key of keys) {
    const runs = deferredSource(metadata, key);
    const value = runs instanceof NumberRuns ? standIn(runs) : metadata[key];
    Object.defineProperty(out, key, { value, writable: true, enumerable: true, configurable: true });
  }
  return out;
}

/** Every field read as a value (a deferred one is built): the reference path. */
function encodeJoined(reply: SamplesReply, allocate: Allocate | undefined): Uint8Array {
  const tensors = new Map<string, Tensor>();
  const metas = reply.samples.map((sample, index) => {
    const nulls: string[] = [];
    for (const field of Object.keys(TENSOR_FIELDS) as TensorField[]) {
      const tensor = tensorFor(field, sample);
      if (tensor === null) nulls.push(field);
      else tensors.set(`${field}.${index}`, tensor);
    }
    return {
      response: sample.response,
      response_length: sample.response_length,
      status: sample.status,
      weight_versions: sample.weight_versions,
      ...specInfoOf(sample),
      prefix_cache_info: sample.prefix_cache_info,
      metadata: sample.metadata,
      reward: sample.reward ?? null,
      nulls,
    };
  });
  const meta = pythonJsonDumps(
    { samples: metas, session_metadata: reply.sessionMetadata, empty_reason: reply.emptyReason },
    META_JSON_OPTIONS,
  );
  assertEncodableUtf8(meta);
  const metaBytes = Buffer.from(meta, 'utf8');
  tensors.set(META_TENSOR, { dtype: 'U8', shape: [metaBytes.length], data: metaBytes });
  return encodeSafetensors(tensors, allocate);
}

/**
 * Miles encodes the meta with `str.encode("utf-8")`, which refuses a lone surrogate (a 500 from the
 * samples route); Node's encoder would replace it with U+FFFD and send other text. Same message as
 * CPython's UnicodeEncodeError, whose position counts code points.
 */
function assertEncodableUtf8(text: string): void {
  if (text.isWellFormed()) return;
  const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.exec(text);
  if (lone === null) return;
  const position = [...text.slice(0, lone.index)].length;
  const code = lone[0].charCodeAt(0).toString(16);
  throw wireError(
    'utf8',
    `'utf-8' codec can't encode character '\\u${code}' in position ${position}: surrogates not allowed`,
  );
}

export interface DecodeOptions {
  /**
   * Keep the meta JSON's floats as `PythonFloat` and its objects as written (key order included), so that
   * `encodeSamples` writes the same bytes again. Validation sees plain numbers either way.
   */
  readonly keepFloats?: boolean;
}

/** A typed array's values as a plain array: an indexed copy (several times faster than `Array.from`). */
function toArray(data: ArrayLike<number>): number[] {
  const out = new Array<number>(data.length);
  for (let k = 0; k < data.length; k += 1) out[k] = data[k] as number;
  return out;
}

type Int32Tensor = NonNullable<WireSample['rollout_routed_experts']>;

/** A decode candidate with every tensor's values left out (shapes kept), for validating the rest. */
function withEmptyTensors(candidate: Record<string, unknown>): Record<string, unknown> {
  const empty = (v: unknown) => (Array.isArray(v) ? [] : v);
  const emptyData = (v: unknown) => (v === null ? null : { ...(v as Int32Tensor), data: [] });
  return {
    ...candidate,
    tokens: empty(candidate.tokens),
    loss_mask: empty(candidate.loss_mask),
    rollout_log_probs: empty(candidate.rollout_log_probs),
    rollout_routed_experts: emptyData(candidate.rollout_routed_experts),
    rollout_indexer_topk: emptyData(candidate.rollout_indexer_topk),
  };
}

/** The reply's `_samples_meta`, read as JSON (and again with floats kept, when asked) and checked. */
interface ReplyMeta {
  readonly meta: Record<string, unknown> & {
    samples: unknown[];
    session_metadata: Record<string, unknown>;
  };
  /** The same JSON read with `keepFloats` when the options ask for it (else `meta` itself). */
  readonly written: unknown;
  readonly emptyReason: SamplesReply['emptyReason'];
  readonly tree: TreeMetadata;
}

function readReplyMeta(tensors: ReturnType<typeof decodeSafetensors>, options: DecodeOptions): ReplyMeta {
  const metaTensor = tensors.get(META_TENSOR);
  if (metaTensor === undefined) throw wireError('meta', `missing ${META_TENSOR}`);
  if (metaTensor.dtype !== 'U8' || metaTensor.shape.length !== 1) {
    throw wireError('meta', `${META_TENSOR} must be a 1-D U8 tensor`);
  }
  let meta: unknown;
  let written: unknown;
  try {
    const metaBytes =
      metaTensor.data instanceof Uint8Array ? metaTensor.data : Uint8Array.from(metaTensor.data);
    const text = new TextDecoder('utf-8', { fatal: true }).decode(metaBytes);
    meta = pythonJsonLoads(text);
    written = options.keepFloats ? pythonJsonLoads(text, { keepFloats: true }) : meta;
  } catch (error) {
    throw wireError('meta', `${META_TENSOR} is not UTF-8 JSON (${(error as Error).message})`);
  }
  if (!isJsonObject(meta) || !Array.isArray(meta.samples) || !isJsonObject(meta.session_metadata)) {
    throw wireError(
      'meta',
      `${META_TENSOR} must hold {samples: [...], session_metadata: {...}, empty_reason}`,
    );
  }
  const emptyReason = EmptyReasonSchema.safeParse(meta.empty_reason);
  if (!emptyReason.success || !('empty_reason' in meta)) {
    throw wireError('meta', `invalid empty_reason ${JSON.stringify(meta.empty_reason)}`);
  }
  const tree = TreeMetadataSchema.safeParse(meta.session_metadata.tree);
  if (!tree.success) throw wireError('meta', 'session_metadata.tree is not a tree metadata object');
  return {
    meta: meta as ReplyMeta['meta'],
    written,
    emptyReason: emptyReason.data,
    tree: tree.data,
  };
}

/** A sample's JSON part: every field present, `nulls` naming tensor fields, metadata and status valid. */
function checkSampleMeta(raw: unknown, index: number): Record<string, unknown> & { nulls: string[] } {
  if (!isJsonObject(raw)) throw wireError('field', `sample ${index}: meta is not an object`);
  for (const field of [...JSON_FIELDS, 'nulls'] as const) {
    if (!(field in raw)) throw wireError('field', `sample ${index}: missing field ${field}`);
  }
  const nulls = raw.nulls;
  if (!Array.isArray(nulls) || !nulls.every((n) => typeof n === 'string')) {
    throw wireError('nulls', `sample ${index}: nulls must be a list of field names`);
  }
  for (const name of nulls) {
    if (!isTensorField(name))
      throw wireError('nulls', `sample ${index}: nulls names non-tensor field ${name}`);
  }
  if (!isJsonObject(raw.metadata)) throw wireError('metadata', `sample ${index}: metadata is not an object`);
  if (!SampleStatusSchema.safeParse(raw.status).success) {
    throw wireError('status', `sample ${index}: invalid status ${JSON.stringify(raw.status)}`);
  }
  return raw as Record<string, unknown> & { nulls: string[] };
}

/** Sample `index`'s tensor fields (`<field>.<index>`, null where `nulls` says), each marked used. */
function readTensorFields(
  tensors: ReturnType<typeof decodeSafetensors>,
  index: number,
  nulls: readonly string[],
  used: Set<string>,
): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  for (const field of Object.keys(TENSOR_FIELDS) as TensorField[]) {
    const name = `${field}.${index}`;
    const tensor = tensors.get(name);
    if (nulls.includes(field)) {
      fields[field] = null;
      continue;
    }
    if (tensor === undefined) throw wireError('missing_tensor', `sample ${index}: missing tensor ${name}`);
    const spec = TENSOR_FIELDS[field];
    if (tensor.dtype !== spec.dtype) {
      throw wireError('dtype', `tensor ${name}: dtype ${tensor.dtype}, expected ${spec.dtype}`);
    }
    if (spec.oneD && tensor.shape.length !== 1) throw wireError('shape', `tensor ${name}: must be 1-D`);
    used.add(name);
    fields[field] = spec.oneD
      ? toArray(tensor.data)
      : { shape: [...tensor.shape], data: toArray(tensor.data) };
  }
  return fields;
}

/**
 * The wire sample of a JSON part and its tensor fields, checked by the schema; `kept`: the same
 * sample's JSON as written (metadata and reward taken from it, not from zod's copy).
 */
function validatedSample(
  raw: Record<string, unknown>,
  fields: Record<string, unknown>,
  kept: Record<string, unknown>,
  index: number,
): WireSample {
  const candidate = {
    tokens: fields.tokens,
    response: raw.response,
    response_length: raw.response_length,
    loss_mask: fields.loss_mask,
    rollout_log_probs: fields.rollout_log_probs,
    rollout_routed_experts: fields.rollout_routed_experts,
    rollout_indexer_topk: fields.rollout_indexer_topk,
    status: raw.status,
    weight_versions: raw.weight_versions,
    ...('spec_info' in raw ? { spec_info: raw.spec_info } : {}),
    prefix_cache_info: raw.prefix_cache_info,
    metadata: raw.metadata,
    reward: raw.reward,
  };
  // The tensor values came out of typed arrays of their dtype, so they are integers in range already;
  // only F64 log-probs can break the schema (NaN, infinities). Then zod checks the rest with the
  // tensors left empty (not 32k-element arrays value by value), and the decoded arrays go back in.
  // Anything that fails is parsed whole, so the error is the one a whole parse gives.
  const probs = fields.rollout_log_probs as number[] | null;
  const tensorsValid = probs === null || probs.every(Number.isFinite);
  const parsed = WireSampleSchema.safeParse(tensorsValid ? withEmptyTensors(candidate) : candidate);
  if (parsed.success && tensorsValid) {
    return {
      ...parsed.data,
      tokens: candidate.tokens as number[],
      loss_mask: candidate.loss_mask as number[] | null,
      rollout_log_probs: probs,
      rollout_routed_experts: candidate.rollout_routed_experts as Int32Tensor | null,
      rollout_indexer_topk: candidate.rollout_indexer_topk as Int32Tensor | null,
      metadata: kept.metadata as Record<string, unknown>,
      reward: kept.reward,
    };
  }
  const whole = WireSampleSchema.safeParse(candidate);
  if (!whole.success) {
    const issue = whole.error.issues[0];
    throw wireError(
      'field',
      `sample ${index}: ${issue?.path.join('.') ?? ''} ${issue?.message ?? 'invalid'}`,
    );
  }
  // zod copies records by assignment, which would turn a `__proto__` key into a prototype: keep the
  // validated JSON objects themselves.
  return {
    ...whole.data,
    metadata: kept.metadata as Record<string, unknown>,
    reward: kept.reward,
  };
}

/** Decodes a reply, refusing anything Miles' own decoder refuses (samples/codec.py `decode_samples`). */
export function decodeSamples(bytes: Uint8Array, options: DecodeOptions = {}): SamplesReply {
  const tensors = decodeSafetensors(bytes);
  const { meta, written, emptyReason, tree } = readReplyMeta(tensors, options);
  const used = new Set<string>([META_TENSOR]);
  const writtenSamples = (written as { samples: Array<Record<string, unknown>> }).samples;
  const samples = meta.samples.map((rawSample, index) => {
    const raw = checkSampleMeta(rawSample, index);
    const fields = readTensorFields(tensors, index, raw.nulls, used);
    return validatedSample(raw, fields, writtenSamples[index]!, index);
  });
  for (const name of tensors.keys()) {
    if (!used.has(name)) throw wireError('leftover_tensor', `unreferenced tensor ${name}`);
  }
  return {
    samples,
    sessionMetadata: options.keepFloats
      ? (written as { session_metadata: SamplesReply['sessionMetadata'] }).session_metadata
      : { ...meta.session_metadata, tree },
    emptyReason,
  };
}
