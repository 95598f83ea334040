import type { ServerResponse } from 'node:http';
import type { ReplyBufferPool } from './reply-buffers.ts';
import type { ReplyStream } from './reply-stream.ts';

/**
 * Sends a reply stream (its head already written, content-length its length) through chunks of a pool
 * reused across requests: each chunk filled, written, and given back once the socket has handed it to
 * the kernel (the write's callback), never earlier. The next chunk is filled while the socket accepts
 * more; once it does not (`write` false: the client reads slower than the reply is made), the stream
 * waits for 'drain'. So a reply of any size touches a few chunks, not a buffer of its size.
 *
 * Ends with 'sent' once the last byte was handed over (`res.end`); 'cut' when the connection closed
 * first (the client left mid-reply: nothing more is written, the chunks still in the socket are dropped
 * rather than reused), or when writing threw (`onError` gets it and the connection is destroyed, so the
 * client sees a body shorter than its content-length, never other bytes).
 */

/** Bytes per chunk: a multiple of 8, so a chunk never splits a tensor element of the reply. */
export const REPLY_CHUNK_BYTES = 1024 * 1024;

interface SendStreamHooks {
  /** The stream waits for the client to read (`written` bytes handed over so far). */
  readonly onWait?: (written: number) => void;
  readonly onError?: (error: unknown) => void;
}

export async function sendStream(
  res: ServerResponse,
  stream: ReplyStream,
  chunks: ReplyBufferPool,
  hooks: SendStreamHooks = {},
): Promise<'sent' | 'cut'> {
  let gone = res.destroyed;
  let wake: (() => void) | null = null;
  const onClose = () => {
    gone = true;
    wake?.();
  };
  res.once('close', onClose);
  try {
    while (!stream.done) {
      if (gone) return 'cut';
      const chunk = chunks.take(Math.min(REPLY_CHUNK_BYTES, stream.length - stream.position));
      let n: number;
      try {
        n = stream.fill(chunk);
      } catch (error) {
        hooks.onError?.(error);
        res.destroy();
        return 'cut';
      }
      const ok = res.write(chunk.subarray(0, n), (error) => {
        if (error === null || error === undefined) chunks.give(chunk);
      });
      if (!ok && !gone) {
        hooks.onWait?.(stream.position);
        await new Promise<void>((resolve) => {
          wake = resolve;
          res.once('drain', resolve);
        });
        res.off('drain', wake as unknown as () => void);
        wake = null;
      }
    }
    if (gone) return 'cut';
    res.end();
    return 'sent';
  } finally {
    res.off('close', onClose);
  }
}
