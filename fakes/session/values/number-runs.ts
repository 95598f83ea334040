/**
 * A list of numbers kept as the runs it was assembled from, never joined unless someone reads it as an
 * array: stored pieces (`data[from:to]`: a node snapshot's `Int32Array`s, a record's output ids or
 * log-probs) and constant runs (a mask's ones, an observation's zeros). The samples op's per-token fields
 * are 32k numbers a leaf at the recipe's scale; a plain array that long is a large object, and allocating
 * one costs about as much as writing it to the wire (docs/performance.md "Catalogue"). The wire codec
 * writes the runs straight into the reply.
 */
export type NumberRun =
  | { readonly data: Int32Array | readonly number[]; readonly from: number; readonly to: number }
  | { readonly fill: number; readonly count: number };

export const runLength = (run: NumberRun): number => ('fill' in run ? run.count : run.to - run.from);

export class NumberRuns {
  readonly runs: readonly NumberRun[];
  readonly length: number;

  constructor(runs: readonly NumberRun[]) {
    this.runs = runs.filter((r) => runLength(r) > 0);
    this.length = this.runs.reduce((n, r) => n + runLength(r), 0);
  }

  /** The numbers as a fresh plain array. */
  toArray(): number[] {
    // Sized up front (see TokenSnapshot.slice).
    const out = new Array<number>(this.length);
    let at = 0;
    for (const run of this.runs) {
      if ('fill' in run) {
        for (let k = 0; k < run.count; k += 1) out[at + k] = run.fill;
        at += run.count;
        continue;
      }
      const { data, from, to } = run;
      for (let k = from; k < to; k += 1) out[at + k - from] = data[k] as number;
      at += to - from;
    }
    return out;
  }

  /** Whether `test` holds for every number (`Int32Array` runs count as passing when `int32Passes`). */
  every(test: (v: number) => boolean, int32Passes = false): boolean {
    for (const run of this.runs) {
      if ('fill' in run) {
        if (!test(run.fill)) return false;
        continue;
      }
      if (int32Passes && run.data instanceof Int32Array) continue;
      for (let k = run.from; k < run.to; k += 1) if (!test(run.data[k] as number)) return false;
    }
    return true;
  }
}

/**
 * Whether `a[0:n]` equals `b[0:n]` under `===`, run against run; ranges where both sides are the same
 * `Int32Array` at the same index are equal without reading them (an `Int32Array` holds no NaN, the one
 * value `===` does not find equal to itself). Both must hold at least `n` numbers.
 */
export function equalPrefix(a: readonly NumberRun[], b: readonly NumberRun[], n: number): boolean {
  let ia = 0;
  let ib = 0;
  let offA = 0; // position inside a[ia]
  let offB = 0;
  let done = 0;
  while (done < n) {
    const ra = a[ia] as NumberRun;
    const rb = b[ib] as NumberRun;
    const m = Math.min(runLength(ra) - offA, runLength(rb) - offB, n - done);
    if (!equalRange(ra, offA, rb, offB, m)) return false;
    done += m;
    offA += m;
    offB += m;
    if (offA === runLength(ra)) {
      ia += 1;
      offA = 0;
    }
    if (offB === runLength(rb)) {
      ib += 1;
      offB = 0;
    }
  }
  return true;
}

function equalRange(ra: NumberRun, offA: number, rb: NumberRun, offB: number, m: number): boolean {
  if ('fill' in ra || 'fill' in rb) {
    for (let k = 0; k < m; k += 1) if (valueAt(ra, offA + k) !== valueAt(rb, offB + k)) return false;
    return true;
  }
  const x = ra.data;
  const y = rb.data;
  const xFrom = ra.from + offA;
  const yFrom = rb.from + offB;
  if (x === y && xFrom === yFrom && x instanceof Int32Array) return true;
  for (let k = 0; k < m; k += 1) if (x[xFrom + k] !== y[yFrom + k]) return false;
  return true;
}

const valueAt = (run: NumberRun, k: number): number =>
  'fill' in run ? run.fill : (run.data[run.from + k] as number);
