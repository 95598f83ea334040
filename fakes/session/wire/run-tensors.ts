import type { NumberRuns } from '../number-runs.ts';
import {
  DTYPE_SIZES,
  LITTLE_ENDIAN,
  type WrittenTensor,
  writeInt64At,
  writeTensorData,
} from './safetensors.ts';

/**
 * A 1-D tensor written straight from runs (`number-runs.ts`): the same bytes `encodeSafetensors` writes
 * for the joined array (safetensors.ts `writeTensorData`), without the array. Unaligned (only after an
 * odd-length U8 tensor, which the samples reply never puts before these) it joins and takes that path.
 */
export function runsTensor(dtype: 'I64' | 'F64' | 'U8', runs: NumberRuns): WrittenTensor {
  return {
    dtype,
    shape: [runs.length],
    length: runs.length,
    write: (out, offset) => writeRuns(out, offset, dtype, runs),
  };
}

function writeRuns(out: Uint8Array, offset: number, dtype: 'I64' | 'F64' | 'U8', runs: NumberRuns): void {
  const at = out.byteOffset + offset;
  if (!LITTLE_ENDIAN || at % DTYPE_SIZES[dtype] !== 0) {
    writeTensorData(out, offset, dtype, runs.toArray());
    return;
  }
  const n = runs.length;
  if (dtype === 'U8') {
    let pos = offset;
    for (const run of runs.runs) {
      if ('fill' in run) {
        // Uint8Array stores ToUint8 of a value, as `set` does for the joined array.
        new Uint8Array(out.buffer, out.byteOffset + pos, run.count).fill(run.fill);
        pos += run.count;
      } else {
        for (let k = run.from; k < run.to; k += 1) out[pos++] = run.data[k] as number;
      }
    }
    return;
  }
  if (dtype === 'F64') {
    const f = new Float64Array(out.buffer, at, n);
    let pos = 0;
    for (const run of runs.runs) {
      if ('fill' in run) {
        f.fill(run.fill, pos, pos + run.count);
        pos += run.count;
      } else if (run.from === 0 && run.to === run.data.length) {
        f.set(run.data, pos);
        pos += run.to;
      } else {
        for (let k = run.from; k < run.to; k += 1) f[pos++] = run.data[k] as number;
      }
    }
    return;
  }
  const halves = new Int32Array(out.buffer, at, n * 2);
  const view = new DataView(out.buffer, at, n * 8);
  let pos = 0;
  for (const run of runs.runs) {
    if ('fill' in run) {
      for (let k = 0; k < run.count; k += 1) writeInt64At(halves, view, pos++, run.fill);
    } else if (run.data instanceof Int32Array) {
      // An int32 is its own low half; the high half is its sign.
      const data = run.data;
      for (let k = run.from; k < run.to; k += 1, pos += 1) {
        const v = data[k] as number;
        halves[2 * pos] = v;
        halves[2 * pos + 1] = v >> 31;
      }
    } else {
      for (let k = run.from; k < run.to; k += 1) writeInt64At(halves, view, pos++, run.data[k] as number);
    }
  }
}
