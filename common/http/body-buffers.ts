/**
 * Buffers request bodies are read into, reused from one request to the next (`readBodyPooled` in
 * body.ts). A fresh buffer per body is new external memory for V8: a 0.2–0.45 MB body per chat call
 * in the fake policy (0.1–0.2 MB in the session server) adds up to a full mark-compact every ~64 MB
 * of them (`--trace-incremental-marking`: "Start (external memory pressure)"), so the realistic step
 * spent a tenth of its server CPU in GC and in `Buffer.concat` (docs/performance.md, read8).
 *
 * A buffer is lent to one request at a time and given back by that request once nothing reads it any
 * more; a buffer given back twice throws (it would then be lent to two requests at once). Memory stays
 * bounded: at most `maxIdle` idle buffers (the smallest goes first: bodies of a session grow), none
 * over `maxKeptBytes`.
 */

export interface BodyBufferOptions {
  /** Idle buffers kept (default 64: a recipe's batch keeps 32 requests in flight per process). */
  readonly maxIdle?: number;
  /**
   * A buffer larger than this is not kept once given back (default 4 MiB: a 32k-token body is under
   * 1 MB, and one outsized body should not stay resident for the life of the process).
   */
  readonly maxKeptBytes?: number;
  /**
   * Overwrite a buffer with 0xEE as it is given back: a request that reads its body after giving
   * it back then reads garbage. For tests that prove the lifetimes (the bytes are the same either way).
   */
  readonly poisonOnGive?: boolean;
}

// Capacities are whole grains with a quarter of headroom, so a session's next, slightly larger bodies fit.
const GRAIN = 16 * 1024;
const POISON = 0xee;

export class BodyBufferPool {
  private readonly idle: ArrayBuffer[] = [];
  private readonly maxIdle: number;
  private readonly poisonOnGive: boolean;
  private readonly maxKeptBytes: number;
  /** How many `take`s an idle buffer served (tests and benchmarks read it). */
  reused = 0;
  /** Buffers lent and not given back yet (0 once every request is over: none leaked). */
  lent = 0;

  constructor(options: BodyBufferOptions = {}) {
    this.maxIdle = options.maxIdle ?? 64;
    this.poisonOnGive = options.poisonOnGive ?? false;
    this.maxKeptBytes = options.maxKeptBytes ?? 4 * 1024 * 1024;
  }

  /**
   * `size` bytes no one else holds, as a Buffer view (its old contents still there: the caller writes
   * every byte it reads back). The smallest idle buffer that fits, else a new one.
   */
  take(size: number): Buffer {
    this.lent += 1;
    let best = -1;
    for (let k = 0; k < this.idle.length; k += 1) {
      const capacity = (this.idle[k] as ArrayBuffer).byteLength;
      if (capacity >= size && (best < 0 || capacity < (this.idle[best] as ArrayBuffer).byteLength)) best = k;
    }
    if (best >= 0) {
      const [buffer] = this.idle.splice(best, 1) as [ArrayBuffer];
      this.reused += 1;
      return Buffer.from(buffer, 0, size);
    }
    // Not zero-filled (`new ArrayBuffer` is): every byte read back was written first.
    const fresh = Buffer.allocUnsafeSlow(Math.ceil((size + Math.floor(size / 4) + 1) / GRAIN) * GRAIN);
    return fresh.subarray(0, size);
  }

  /** Gives back a buffer `take` lent, once nothing reads or writes it any more. */
  give(bytes: Uint8Array): void {
    const buffer = bytes.buffer as ArrayBuffer;
    if (this.idle.includes(buffer)) throw new Error('body buffer given back twice');
    this.lent -= 1;
    if (this.poisonOnGive) new Uint8Array(buffer).fill(POISON);
    if (buffer.byteLength > this.maxKeptBytes) return;
    this.idle.push(buffer);
    if (this.idle.length > this.maxIdle) {
      let smallest = 0;
      for (let k = 1; k < this.idle.length; k += 1)
        if ((this.idle[k] as ArrayBuffer).byteLength < (this.idle[smallest] as ArrayBuffer).byteLength)
          smallest = k;
      this.idle.splice(smallest, 1);
    }
  }

  /** Idle buffers and the bytes they hold. */
  idleStats(): { readonly buffers: number; readonly bytes: number } {
    return { buffers: this.idle.length, bytes: this.idle.reduce((n, b) => n + b.byteLength, 0) };
  }
}
