import { BufferPool } from '../../../common/buffer-pool.ts';

/**
 * Reply-side buffers (`common/buffer-pool.ts`). The samples route streams its replies through 1 MiB
 * chunks of one such pool (`send-stream.ts`, each chunk given back from its socket write's callback);
 * the chat route's forwarded bodies use a pool of their own (chat.ts, given back on the backend
 * request's 'finish'). A buffer is given back only once nothing reads it any more (never while the
 * socket still holds it), so a concurrent request gets a buffer of its own.
 */

export interface ReplyBufferOptions {
  /** Idle buffers kept (default 2). */
  readonly maxIdle?: number;
  /** An idle buffer is dropped when a request needs less than 1/`dropRatio` of it (default 4)... */
  readonly dropRatio?: number;
  /** ...and it is more than this many bytes larger (default 4 MiB: small buffers are never dropped). */
  readonly dropSlackBytes?: number;
}

/** A `BufferPool` for replies: an eighth of headroom on 64 KiB grains, idle buffers far too large dropped. */
export class ReplyBufferPool extends BufferPool {
  constructor(options: ReplyBufferOptions = {}) {
    super({
      maxIdle: options.maxIdle ?? 2,
      dropRatio: options.dropRatio ?? 4,
      dropSlackBytes: options.dropSlackBytes ?? 4 * 1024 * 1024,
      headroomDivisor: 8,
      grain: 64 * 1024,
      what: 'reply buffer',
    });
  }
}
