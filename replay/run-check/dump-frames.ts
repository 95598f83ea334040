import { endianness } from 'node:os';
import type { Readable } from 'node:stream';
import { z } from 'zod';
import { parseJson } from '../../common/python-json/loads.ts';

/**
 * The framing of `convert_dumps.py --serve` answers (miles-bridge/dump_frames.py): a JSON header line,
 * then `bytes` raw bytes holding the long numeric lists of its `document` as little-endian int32 or
 * float64 blocks. Each `blobs` entry says where one goes; the document holds null there. The lists come
 * back as plain number arrays, so the document is the one the all-JSON answer gives.
 */
const BlobSchema = z.object({
  path: z.array(z.union([z.string(), z.number().int().nonnegative()])),
  type: z.enum(['i32', 'f64']),
  offset: z.number().int().nonnegative(),
  count: z.number().int().nonnegative(),
});
type Blob = z.infer<typeof BlobSchema>;

export const FrameHeaderSchema = z.looseObject({
  blobs: z.array(BlobSchema).default([]),
  bytes: z.number().int().nonnegative().default(0),
});

/** One answer: its header (parsed JSON) and the bytes after it. */
export interface Frame {
  readonly header: Record<string, unknown>;
  readonly body: Buffer;
}

const NEWLINE = 0x0a;
const EMPTY = Buffer.alloc(0);

/** Reads frames off a byte stream (the converter's stdout), pulling chunks only as a frame needs them. */
export class FrameReader {
  private readonly chunks: AsyncIterator<Buffer>;
  private buffered: Buffer[] = [];
  private length = 0;
  /** Bytes at the front already searched for the header's newline. */
  private scanned = 0;

  constructor(stream: Readable) {
    this.chunks = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  }

  private async fill(): Promise<boolean> {
    const next = await this.chunks.next();
    if (next.done) return false;
    this.buffered.push(next.value);
    this.length += next.value.length;
    return true;
  }

  /**
   * The first `n` buffered bytes, copied once into a buffer of their own (its own ArrayBuffer from 4 kB
   * up, so aligned blocks can be viewed in place), the chunks they came from let go.
   */
  private take(n: number): Buffer {
    const out = Buffer.allocUnsafeSlow(n);
    let filled = 0;
    while (filled < n) {
      const chunk = this.buffered[0]!;
      const used = Math.min(chunk.length, n - filled);
      chunk.copy(out, filled, 0, used);
      filled += used;
      if (used === chunk.length) this.buffered.shift();
      else this.buffered[0] = chunk.subarray(used);
    }
    this.length -= n;
    this.scanned = 0;
    return out;
  }

  private newlineAt(): number {
    let base = 0;
    for (const chunk of this.buffered) {
      if (base + chunk.length > this.scanned) {
        const at = chunk.indexOf(NEWLINE, Math.max(0, this.scanned - base));
        if (at >= 0) return base + at;
      }
      base += chunk.length;
    }
    this.scanned = base;
    return -1;
  }

  /** The next frame; null at the end of the stream (a frame cut short there is an error). */
  async next(): Promise<Frame | null> {
    let at = this.newlineAt();
    while (at < 0) {
      if (!(await this.fill())) {
        if (this.length === 0) return null;
        throw new Error(`the stream ended inside a header line (${this.length} bytes)`);
      }
      at = this.newlineAt();
    }
    const line = this.take(at + 1).toString('utf8', 0, at);
    const parsed = FrameHeaderSchema.safeParse(parseJson(line));
    if (!parsed.success)
      throw new Error(`a frame header is not {blobs, bytes}: ${parsed.error.issues[0]?.message ?? ''}`);
    const size = parsed.data.bytes;
    while (this.length < size)
      if (!(await this.fill()))
        throw new Error(`the stream ended ${size - this.length} bytes short of a ${size}-byte frame`);
    return { header: parsed.data, body: size === 0 ? EMPTY : this.take(size) };
  }
}

const WIDTH = { i32: 4, f64: 8 } as const;
const LITTLE_ENDIAN_HOST = endianness() === 'LE';

/** One block as a number array: a typed-array view where aligned on a little-endian host, else read value by value. */
export function blockNumbers(body: Buffer, blob: Blob): number[] {
  const width = WIDTH[blob.type];
  const end = blob.offset + blob.count * width;
  if (end > body.length)
    throw new Error(`block at ${blob.path.join('.')} ends at byte ${end}, past the frame's ${body.length}`);
  const start = body.byteOffset + blob.offset;
  // A loop into a sized array: Array.from on a typed array is several times slower (iterator protocol).
  const out = new Array<number>(blob.count);
  if (LITTLE_ENDIAN_HOST && start % width === 0) {
    const typed =
      blob.type === 'i32'
        ? new Int32Array(body.buffer, start, blob.count)
        : new Float64Array(body.buffer, start, blob.count);
    for (let i = 0; i < blob.count; i++) out[i] = typed[i]!;
    return out;
  }
  const view = new DataView(body.buffer, start, blob.count * width);
  for (let i = 0; i < blob.count; i++)
    out[i] = blob.type === 'i32' ? view.getInt32(i * 4, true) : view.getFloat64(i * 8, true);
  return out;
}

/** The header's document with every block put back in its place (which must hold the null left for it). */
export function placeBlocks(document: unknown, blobs: readonly Blob[], body: Buffer): unknown {
  for (const blob of blobs) {
    if (blob.path.length === 0) {
      if (document !== null) throw new Error('a block for the whole document, which is not null');
      document = blockNumbers(body, blob);
      continue;
    }
    let container: unknown = document;
    for (const key of blob.path.slice(0, -1))
      container =
        container !== null && typeof container === 'object'
          ? (container as Record<string | number, unknown>)[key]
          : undefined;
    const last = blob.path.at(-1)!;
    const holder = container as Record<string | number, unknown> | null | undefined;
    if (holder === null || typeof holder !== 'object' || holder[last] !== null)
      throw new Error(`no null left at ${blob.path.join('.')} for its block`);
    holder[last] = blockNumbers(body, blob);
  }
  return document;
}
