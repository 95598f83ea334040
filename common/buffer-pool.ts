/**
 * Buffers reused from one request to the next. Allocating and first touching fresh memory costs about
 * 3 ms CPU per MB on the project's 2-core VM (page faults), and every fresh buffer is new external
 * memory for V8, which starts a full collection every ~64 MB of it; writing into pages already touched
 * costs a fraction of that. A buffer is lent to one user at a time and given back once nothing reads or
 * writes it any more; giving one back twice throws (it would then be lent to two users at once).
 * Memory stays bounded: at most `maxIdle` idle buffers (the smallest goes first), none over
 * `maxKeptBytes`, and optionally none far larger than the request at hand.
 *
 * Users: request bodies (`common/http/body-buffers.ts`), the session server's forwarded bodies and
 * samples reply chunks (`fakes/session/wire/reply-buffers.ts`).
 */

export interface BufferPoolOptions {
  /** Idle buffers kept. */
  readonly maxIdle?: number;
  /** A fresh buffer gets `size / headroomDivisor` extra bytes, so a slightly larger next request fits. */
  readonly headroomDivisor?: number;
  /** Fresh capacities are whole multiples of this many bytes. */
  readonly grain?: number;
  /** A buffer larger than this is not kept once given back (default: every size is kept). */
  readonly maxKeptBytes?: number;
  /** An idle buffer is dropped when a request needs less than 1/`dropRatio` of it (default: never)... */
  readonly dropRatio?: number;
  /** ...and it is more than this many bytes larger (default 4 MiB: small buffers are never dropped). */
  readonly dropSlackBytes?: number;
  /**
   * Overwrite a buffer with 0xEE as it is given back: a user that reads it after giving it back then
   * reads garbage. For tests that prove the lifetimes (the bytes are the same either way).
   */
  readonly poisonOnGive?: boolean;
  /** What the buffers hold, for the double-give error (`<what> given back twice`). */
  readonly what?: string;
}

const POISON = 0xee;

export class BufferPool {
  private readonly idle: ArrayBuffer[] = [];
  private readonly maxIdle: number;
  private readonly headroomDivisor: number;
  private readonly grain: number;
  private readonly maxKeptBytes: number;
  private readonly dropRatio: number;
  private readonly dropSlackBytes: number;
  private readonly poisonOnGive: boolean;
  private readonly what: string;
  /** How many `take`s an idle buffer served (tests and benchmarks read it). */
  reused = 0;
  /** Buffers lent and not given back yet (0 once every user is done: none leaked). */
  lent = 0;

  constructor(options: BufferPoolOptions = {}) {
    this.maxIdle = options.maxIdle ?? 2;
    this.headroomDivisor = options.headroomDivisor ?? 8;
    this.grain = options.grain ?? 64 * 1024;
    this.maxKeptBytes = options.maxKeptBytes ?? Number.POSITIVE_INFINITY;
    this.dropRatio = options.dropRatio ?? Number.POSITIVE_INFINITY;
    this.dropSlackBytes = options.dropSlackBytes ?? 4 * 1024 * 1024;
    this.poisonOnGive = options.poisonOnGive ?? false;
    this.what = options.what ?? 'buffer';
  }

  /**
   * `size` bytes no one else holds, a view of a buffer of its own (its old contents still there: the
   * user writes every byte it reads back). The smallest idle buffer that fits, else a new one.
   */
  take(size: number): Uint8Array {
    for (let k = this.idle.length - 1; k >= 0; k -= 1) {
      const bytes = this.sizeAt(k);
      if (bytes > size * this.dropRatio && bytes - size > this.dropSlackBytes) this.idle.splice(k, 1);
    }
    this.lent += 1;
    let best = -1;
    for (let k = 0; k < this.idle.length; k += 1) {
      const capacity = this.sizeAt(k);
      if (capacity >= size && (best < 0 || capacity < this.sizeAt(best))) best = k;
    }
    if (best >= 0) {
      const [buffer] = this.idle.splice(best, 1) as [ArrayBuffer];
      this.reused += 1;
      return new Uint8Array(buffer, 0, size);
    }
    const capacity =
      Math.ceil((size + Math.floor(size / this.headroomDivisor) + 1) / this.grain) * this.grain;
    // Not zero-filled (`new ArrayBuffer` is): every byte read back was written first.
    return new Uint8Array(Buffer.allocUnsafeSlow(capacity).buffer as ArrayBuffer, 0, size);
  }

  /** Gives back a buffer `take` lent, once nothing reads or writes it any more. */
  give(bytes: Uint8Array): void {
    const buffer = bytes.buffer as ArrayBuffer;
    if (this.idle.includes(buffer)) throw new Error(`${this.what} given back twice`);
    this.lent -= 1;
    if (this.poisonOnGive) new Uint8Array(buffer).fill(POISON);
    if (buffer.byteLength > this.maxKeptBytes) return;
    this.idle.push(buffer);
    if (this.idle.length > this.maxIdle) {
      let smallest = 0;
      for (let k = 1; k < this.idle.length; k += 1) if (this.sizeAt(k) < this.sizeAt(smallest)) smallest = k;
      this.idle.splice(smallest, 1);
    }
  }

  /** Idle buffers and the bytes they hold. */
  idleStats(): { readonly buffers: number; readonly bytes: number } {
    return { buffers: this.idle.length, bytes: this.idle.reduce((n, b) => n + b.byteLength, 0) };
  }

  private sizeAt(k: number): number {
    return (this.idle[k] as ArrayBuffer).byteLength;
  }
}
