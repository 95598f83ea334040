import { NumberRuns } from '../values/number-runs.ts';
import type { ByteSegment } from './reply-stream.ts';
import { DTYPE_SIZES, type Dtype, LITTLE_ENDIAN, type WrittenTensor, writeInt64At } from './safetensors.ts';

/**
 * A 1-D tensor written straight from runs (`number-runs.ts`): the same bytes `encodeSafetensors` writes
 * for the joined array (safetensors.ts `writeTensorData`), without the array, in pieces of any size (the
 * samples route streams its reply through reused chunks: `reply-stream.ts`).
 */
export function runsTensor(dtype: 'I64' | 'F64' | 'U8', runs: NumberRuns): WrittenTensor {
  return { dtype, shape: [runs.length], length: runs.length, open: () => runsSegment(dtype, runs) };
}

/** A plain tensor's values (`Tensor.data`) as a segment of the same bytes. */
export function dataSegment(dtype: Dtype, data: ArrayLike<number>): ByteSegment {
  return runsSegment(dtype, new NumberRuns([{ data: data as readonly number[], from: 0, to: data.length }]));
}

/**
 * The runs' elements as little-endian bytes, whole elements at a time from where the last write stopped.
 * Element stores convert as `TypedArray.prototype.set` does (ToUint8, ToInt32, the double itself); I64
 * goes in as 32-bit halves (`writeInt64At`, BigInt only past the safe range, which throws for a
 * non-integer as the joined write did). Aligned writes go through typed views of `out`, others (a chunk
 * whose offset is not a multiple of the element size) through a DataView.
 */
function runsSegment(dtype: Dtype, runs: NumberRuns): ByteSegment {
  const size = DTYPE_SIZES[dtype];
  const all = runs.runs;
  let run = 0;
  /** Elements of `all[run]` already written. */
  let done = 0;
  return {
    length: runs.length * size,
    write(out, offset, max) {
      let left = Math.floor(max / size);
      const count = left;
      let pos = offset;
      while (left > 0 && run < all.length) {
        const r = all[run]!;
        const total = 'fill' in r ? r.count : r.to - r.from;
        const n = Math.min(left, total - done);
        if ('fill' in r) writeFill(out, pos, dtype, r.fill, n);
        else writeData(out, pos, dtype, r.data, r.from + done, r.from + done + n);
        pos += n * size;
        left -= n;
        done += n;
        if (done === total) {
          run += 1;
          done = 0;
        }
      }
      return (count - left) * size;
    },
  };
}

const aligned = (out: Uint8Array, offset: number, size: number) =>
  LITTLE_ENDIAN && (out.byteOffset + offset) % size === 0;

function writeFill(out: Uint8Array, offset: number, dtype: Dtype, v: number, n: number): void {
  const at = out.byteOffset + offset;
  if (dtype === 'U8') out.fill(v, offset, offset + n);
  else if (!aligned(out, offset, DTYPE_SIZES[dtype])) {
    for (let k = 0; k < n; k += 1) writeUnaligned(out, offset + k * DTYPE_SIZES[dtype], dtype, v);
  } else if (dtype === 'F64') new Float64Array(out.buffer, at, n).fill(v);
  else if (dtype === 'I32') new Int32Array(out.buffer, at, n).fill(v);
  else {
    const halves = new Int32Array(out.buffer, at, n * 2);
    const view = new DataView(out.buffer, at, n * 8);
    for (let k = 0; k < n; k += 1) writeInt64At(halves, view, k, v);
  }
}

/** One element through a DataView, little-endian (I64 as halves, BigInt past the safe range). */
function writeUnaligned(out: Uint8Array, offset: number, dtype: Dtype, v: number): void {
  const view = new DataView(out.buffer, out.byteOffset + offset, DTYPE_SIZES[dtype]);
  if (dtype === 'U8') view.setUint8(0, v);
  else if (dtype === 'F64') view.setFloat64(0, v, true);
  else if (dtype === 'I32') view.setInt32(0, v, true);
  else if (Number.isSafeInteger(v)) {
    const hi = Math.floor(v / 2 ** 32);
    view.setUint32(0, v - hi * 2 ** 32, true);
    view.setInt32(4, hi, true);
  } else view.setBigInt64(0, BigInt(v), true);
}

/** `data[from:to]` at `out[offset:]`. */
function writeData(
  out: Uint8Array,
  offset: number,
  dtype: Dtype,
  data: Int32Array | readonly number[],
  from: number,
  to: number,
): void {
  const size = DTYPE_SIZES[dtype];
  const n = to - from;
  const at = out.byteOffset + offset;
  if (dtype === 'U8') {
    for (let k = 0; k < n; k += 1) out[offset + k] = data[from + k] as number;
  } else if (!aligned(out, offset, size)) {
    for (let k = 0; k < n; k += 1) writeUnaligned(out, offset + k * size, dtype, data[from + k] as number);
  } else if (dtype === 'F64') {
    const f = new Float64Array(out.buffer, at, n);
    if (!(data instanceof Int32Array) && from === 0 && to === data.length) f.set(data);
    else for (let k = 0; k < n; k += 1) f[k] = data[from + k] as number;
  } else if (dtype === 'I32') {
    const i = new Int32Array(out.buffer, at, n);
    for (let k = 0; k < n; k += 1) i[k] = data[from + k] as number;
  } else if (data instanceof Int32Array) {
    // An int32 is its own low half; the high half is its sign.
    const halves = new Int32Array(out.buffer, at, n * 2);
    for (let k = 0; k < n; k += 1) {
      const v = data[from + k] as number;
      halves[2 * k] = v;
      halves[2 * k + 1] = v >> 31;
    }
  } else {
    const halves = new Int32Array(out.buffer, at, n * 2);
    const view = new DataView(out.buffer, at, n * 8);
    for (let k = 0; k < n; k += 1) writeInt64At(halves, view, k, data[from + k] as number);
  }
}
