/**
 * Buffers reused across requests: allocating and first touching fresh memory costs about 3 ms CPU per
 * MB on the project's 2-core VM (page faults), writing into pages already touched a fraction of that.
 * The samples route streams its replies through 1 MiB chunks of one such pool (`send-stream.ts`, each
 * chunk given back from its socket write's callback); the chat route's forwarded bodies use a pool of
 * their own (chat.ts, given back on the backend request's 'finish'). A buffer is handed out to one user
 * at a time, and given back only once nothing reads it any more (never while the socket still holds
 * it), so a concurrent request gets a buffer of its own. Memory stays bounded: at most `maxIdle` idle
 * buffers, and an idle buffer far larger than the request at hand is dropped rather than kept.
 */

export interface ReplyBufferOptions {
  /** Idle buffers kept (default 2). */
  readonly maxIdle?: number;
  /** An idle buffer is dropped when a request needs less than 1/`dropRatio` of it (default 4)... */
  readonly dropRatio?: number;
  /** ...and it is more than this many bytes larger (default 4 MiB: small buffers are never dropped). */
  readonly dropSlackBytes?: number;
}

const GRAIN = 64 * 1024;

export class ReplyBufferPool {
  private readonly idle: ArrayBuffer[] = [];
  private readonly maxIdle: number;
  private readonly dropRatio: number;
  private readonly dropSlackBytes: number;
  /** How many `take`s were served by an idle buffer (tests and benchmarks read it). */
  reused = 0;

  constructor(options: ReplyBufferOptions = {}) {
    this.maxIdle = options.maxIdle ?? 2;
    this.dropRatio = options.dropRatio ?? 4;
    this.dropSlackBytes = options.dropSlackBytes ?? 4 * 1024 * 1024;
  }

  /**
   * `size` bytes of a buffer no one else holds (its old contents still there: the caller writes every
   * byte). Fresh buffers get an eighth of headroom, so a slightly larger next reply still fits.
   */
  take(size: number): Uint8Array {
    for (let k = this.idle.length - 1; k >= 0; k -= 1) {
      const bytes = (this.idle[k] as ArrayBuffer).byteLength;
      if (bytes > size * this.dropRatio && bytes - size > this.dropSlackBytes) this.idle.splice(k, 1);
    }
    let best = -1;
    this.idle.forEach((buffer, k) => {
      if (buffer.byteLength >= size && (best < 0 || buffer.byteLength < this.sizeAt(best))) best = k;
    });
    if (best >= 0) {
      const [buffer] = this.idle.splice(best, 1) as [ArrayBuffer];
      this.reused += 1;
      return new Uint8Array(buffer, 0, size);
    }
    const capacity = Math.ceil((size + Math.floor(size / 8)) / GRAIN) * GRAIN;
    return new Uint8Array(new ArrayBuffer(Math.max(capacity, size)), 0, size);
  }

  /** Hands back a buffer `take` gave (once nothing reads or writes it any more); the smallest idle one goes past `maxIdle`. */
  give(bytes: Uint8Array): void {
    const buffer = bytes.buffer as ArrayBuffer;
    // Given twice, it would be handed to two requests at once.
    if (this.idle.includes(buffer)) throw new Error('reply buffer handed back twice');
    this.idle.push(buffer);
    if (this.idle.length > this.maxIdle) {
      let smallest = 0;
      this.idle.forEach((b, k) => {
        if (b.byteLength < this.sizeAt(smallest)) smallest = k;
      });
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
