import { endianness } from 'node:os';
import { HarnessError } from '../../../common/errors.ts';
import { parseJson } from '../../../common/python-json/loads.ts';
import { isJsonObject } from '../../../common/python-json/values.ts';
import type { ByteSegment } from './reply-stream.ts';

/**
 * A minimal safetensors container (https://github.com/huggingface/safetensors, format section): a
 * little-endian u64 header length, a JSON header `{name: {dtype, shape, data_offsets: [begin, end]}}`
 * (optionally `__metadata__`), space-padded to 8 bytes, then the raw little-endian data. The reader is as
 * strict as the Rust one: known dtypes, sizes that match shapes, offsets that tile the data exactly.
 */

export const DTYPE_SIZES = { I64: 8, I32: 4, U8: 1, F64: 8 } as const;
export type Dtype = keyof typeof DTYPE_SIZES;

export interface Tensor {
  readonly dtype: Dtype;
  readonly shape: readonly number[];
  /**
   * Element values (bigint-free: I64 values must be safe integers). Encoding takes any array-like (a
   * `Uint8Array` of JSON bytes goes in as it is); decoding returns a typed array of the dtype (I64 as a
   * `Float64Array` of the exact safe integers).
   */
  readonly data: ArrayLike<number>;
}

/**
 * A tensor that writes its own little-endian bytes (the samples codec's runs and meta, written straight
 * into the reply instead of through an intermediate array): `length` elements of `dtype`, written in
 * order by the segment `open()` returns (`reply-stream.ts`; each call a fresh segment from the start).
 */
export interface WrittenTensor {
  readonly dtype: Dtype;
  readonly shape: readonly number[];
  readonly length: number;
  open(): ByteSegment;
}

const countOf = (t: Tensor | WrittenTensor) => ('data' in t ? t.data.length : t.length);

/** A container failure; `reason` is stable for tests. */
export function wireError(reason: string, message: string): HarnessError {
  return new HarnessError('wire.invalid', `samples wire: ${message}`, { details: { reason } });
}

function elementCount(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

// Typed arrays use the platform's byte order; safetensors is little-endian.
export const LITTLE_ENDIAN = endianness() === 'LE';
const TWO_32 = 2 ** 32;

/**
 * Writes one tensor's elements at `offset` of `out`: a typed-array copy when the offset is aligned for
 * the dtype (always, except after an odd-length U8 tensor), a DataView loop otherwise. I64 goes in as two
 * 32-bit halves, so no BigInt is made per element.
 */
export function writeTensorData(
  out: Uint8Array,
  offset: number,
  dtype: Dtype,
  data: ArrayLike<number>,
): void {
  const n = data.length;
  const at = out.byteOffset + offset;
  const aligned = LITTLE_ENDIAN && at % DTYPE_SIZES[dtype] === 0;
  switch (dtype) {
    case 'U8':
      out.set(data, offset);
      return;
    case 'F64':
      if (aligned) new Float64Array(out.buffer, at, n).set(data);
      else {
        const view = new DataView(out.buffer, at, n * 8);
        for (let k = 0; k < n; k += 1) view.setFloat64(k * 8, data[k] as number, true);
      }
      return;
    case 'I32':
      if (aligned) new Int32Array(out.buffer, at, n).set(data);
      else {
        const view = new DataView(out.buffer, at, n * 4);
        for (let k = 0; k < n; k += 1) view.setInt32(k * 4, data[k] as number, true);
      }
      return;
    case 'I64': {
      if (aligned) {
        writeInt64Aligned(new Int32Array(out.buffer, at, n * 2), new DataView(out.buffer, at, n * 8), data);
        return;
      }
      const view = new DataView(out.buffer, at, n * 8);
      for (let k = 0; k < n; k += 1) {
        const v = data[k] as number;
        if (!Number.isSafeInteger(v)) {
          // Outside the halves' exact range: BigInt throws for a non-integer, as the per-element write did.
          view.setBigInt64(k * 8, BigInt(v), true);
          continue;
        }
        const hi = Math.floor(v / TWO_32);
        view.setUint32(k * 8, v - hi * TWO_32, true);
        view.setInt32(k * 8 + 4, hi, true);
      }
      return;
    }
  }
}

/**
 * I64 into aligned memory as 32-bit halves: an int32 value is its own low half (the high half its sign),
 * a larger safe integer is split, anything else goes through BigInt (which throws for a non-integer).
 */
function writeInt64Aligned(halves: Int32Array, view: DataView, data: ArrayLike<number>): void {
  for (let k = 0; k < data.length; k += 1) writeInt64At(halves, view, k, data[k] as number);
}

/** Element `k` of an aligned I64 tensor (`halves` and `view` over the same bytes), as above. */
export function writeInt64At(halves: Int32Array, view: DataView, k: number, v: number): void {
  if ((v | 0) === v) {
    halves[2 * k] = v;
    halves[2 * k + 1] = v < 0 ? -1 : 0;
  } else if (Number.isSafeInteger(v)) {
    const hi = Math.floor(v / TWO_32);
    halves[2 * k] = (v - hi * TWO_32) | 0;
    halves[2 * k + 1] = hi;
  } else view.setBigInt64(k * 8, BigInt(v), true);
}

/** A tensor's elements as a typed array: a view when aligned, a copy otherwise. */
function readTensorData(bytes: Uint8Array, begin: number, end: number, dtype: Dtype): ArrayLike<number> {
  if (dtype === 'U8') return bytes.subarray(begin, end);
  const size = DTYPE_SIZES[dtype];
  const at = bytes.byteOffset + begin;
  // Aligned: a view of the reply's own bytes; otherwise one copy into a fresh (aligned) buffer.
  // (Uint8Array's slice copies; a Buffer's own slice would be a view.)
  const buffer =
    LITTLE_ENDIAN && at % size === 0
      ? bytes.buffer
      : Uint8Array.prototype.slice.call(bytes, begin, end).buffer;
  const offset = buffer === bytes.buffer ? at : 0;
  const n = (end - begin) / size;
  if (dtype === 'F64') return new Float64Array(buffer, offset, n);
  if (dtype === 'I32') return new Int32Array(buffer, offset, n);
  const halves = new Int32Array(buffer, offset, n * 2);
  const out = new Float64Array(n);
  for (let k = 0; k < n; k += 1) {
    const v = (halves[2 * k + 1] as number) * TWO_32 + ((halves[2 * k] as number) >>> 0);
    if (!Number.isSafeInteger(v)) {
      const exact = new DataView(buffer, offset + k * 8, 8).getBigInt64(0, true);
      throw wireError('range', `int64 value ${exact} is outside the safe integer range`);
    }
    out[k] = v;
  }
  return out;
}

/**
 * The reference library's dtype order (its Rust `Dtype` enum: ... U8 < ... < I32 < ... < F64 < I64 ...).
 * `safetensors` lays tensors out by this order, the larger first, then by name (byte order)
 * (huggingface/safetensors safetensors/src/tensor.rs `prepare`), whatever order they were given in.
 */
const DTYPE_RANK: Readonly<Record<Dtype, number>> = { U8: 0, I32: 1, F64: 2, I64: 3 };

function referenceOrder<T extends Tensor | WrittenTensor>(
  tensors: ReadonlyMap<string, T>,
): Array<[string, T]> {
  return [...tensors].sort(
    ([nameA, a], [nameB, b]) =>
      DTYPE_RANK[b.dtype] - DTYPE_RANK[a.dtype] || Buffer.compare(Buffer.from(nameA), Buffer.from(nameB)),
  );
}

/** Where an encoder writes its output: `size` bytes, every one of which it writes. */
export type Allocate = (size: number) => Uint8Array;

const freshBytes: Allocate = (size) => new Uint8Array(size);

/** The container's header (length prefix, padded JSON) and the tensors in layout order. */
export function layout<T extends Tensor | WrittenTensor>(
  tensors: ReadonlyMap<string, T>,
): { head: Uint8Array; ordered: Array<[string, T]>; dataBytes: number } {
  const header: Record<string, unknown> = {};
  const ordered = referenceOrder(tensors);
  let offset = 0;
  for (const [name, t] of ordered) {
    const n = countOf(t);
    if (n !== elementCount(t.shape)) {
      throw wireError('shape', `tensor ${name}: ${n} values for shape [${t.shape.join(', ')}]`);
    }
    const size = n * DTYPE_SIZES[t.dtype];
    header[name] = { dtype: t.dtype, shape: [...t.shape], data_offsets: [offset, offset + size] };
    offset += size;
  }
  let headerText = JSON.stringify(header);
  const headerBytesRaw = Buffer.byteLength(headerText, 'utf8');
  headerText += ' '.repeat((8 - ((8 + headerBytesRaw) % 8)) % 8);
  const headerBytes = Buffer.from(headerText, 'utf8');
  const head = new Uint8Array(8 + headerBytes.length);
  new DataView(head.buffer).setBigUint64(0, BigInt(headerBytes.length), true);
  head.set(headerBytes, 8);
  return { head, ordered, dataBytes: offset };
}

/**
 * Serialises named tensors in the reference library's layout order, into `allocate`'s bytes (which may
 * hold an earlier reply: every byte is written).
 */
export function encodeSafetensors(
  tensors: ReadonlyMap<string, Tensor>,
  allocate: Allocate = freshBytes,
): Uint8Array {
  const { head, ordered, dataBytes } = layout(tensors);
  const out = allocate(head.length + dataBytes);
  out.set(head, 0);
  let cursor = head.length;
  for (const [, t] of ordered) {
    writeTensorData(out, cursor, t.dtype, t.data);
    cursor += countOf(t) * DTYPE_SIZES[t.dtype];
  }
  return out;
}

/** Parses a container; every structural defect is a `wire.invalid` error. */
export function decodeSafetensors(bytes: Uint8Array): Map<string, Tensor> {
  if (bytes.length < 8)
    throw wireError('container', `container of ${bytes.length} bytes has no header length`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const headerLen = view.getBigUint64(0, true);
  if (headerLen > BigInt(bytes.length - 8) || headerLen > 100_000_000n) {
    throw wireError('container', `header length ${headerLen} exceeds the container`);
  }
  const headerEnd = 8 + Number(headerLen);
  let header: unknown;
  try {
    header = parseJson(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, headerEnd)));
  } catch (error) {
    throw wireError('container', `header is not UTF-8 JSON (${(error as Error).message})`);
  }
  if (!isJsonObject(header)) throw wireError('container', 'header is not a JSON object');
  const dataLen = bytes.length - headerEnd;
  const entries: Array<{ name: string; dtype: Dtype; shape: number[]; begin: number; end: number }> = [];
  for (const [name, raw] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    if (!isJsonObject(raw)) throw wireError('container', `tensor ${name}: entry is not an object`);
    const { dtype, shape, data_offsets: offsets } = raw;
    if (typeof dtype !== 'string' || !(dtype in DTYPE_SIZES)) {
      throw wireError('dtype', `tensor ${name}: unsupported dtype ${String(dtype)}`);
    }
    if (!Array.isArray(shape) || !shape.every((d) => Number.isInteger(d) && d >= 0)) {
      throw wireError('container', `tensor ${name}: invalid shape`);
    }
    if (
      !Array.isArray(offsets) ||
      offsets.length !== 2 ||
      !offsets.every((o) => Number.isInteger(o) && o >= 0) ||
      offsets[0] > offsets[1] ||
      offsets[1] > dataLen
    ) {
      throw wireError('container', `tensor ${name}: invalid data_offsets`);
    }
    const d = dtype as Dtype;
    if (offsets[1] - offsets[0] !== elementCount(shape) * DTYPE_SIZES[d]) {
      throw wireError('container', `tensor ${name}: byte size does not match shape and dtype`);
    }
    entries.push({ name, dtype: d, shape, begin: offsets[0], end: offsets[1] });
  }
  // Offsets must tile the data region exactly: no gaps, no overlaps, nothing trailing.
  const sorted = [...entries].sort((a, b) => a.begin - b.begin || a.end - b.end);
  let expected = 0;
  for (const e of sorted) {
    if (e.begin !== expected) throw wireError('container', `tensor ${e.name}: data is not contiguous`);
    expected = e.end;
  }
  if (expected !== dataLen) throw wireError('container', 'trailing bytes after the last tensor');

  const out = new Map<string, Tensor>();
  for (const e of entries) {
    const data = readTensorData(bytes, headerEnd + e.begin, headerEnd + e.end, e.dtype);
    out.set(e.name, { dtype: e.dtype, shape: e.shape, data });
  }
  return out;
}
