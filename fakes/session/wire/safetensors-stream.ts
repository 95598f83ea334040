import { bytesSegment, ReplyStream } from './reply-stream.ts';
import { dataSegment } from './run-tensors.ts';
import { layout, type Tensor, type WrittenTensor } from './safetensors.ts';

/**
 * The same bytes as `encodeSafetensors`, as a stream written in order into buffers of any size (the
 * samples route's reused chunks). The shapes are checked before the stream exists; values are written as
 * they come (an I64 value that is not an integer throws mid-stream, as `encodeSafetensors` throws
 * mid-write): the samples codec checks its values first (`codec.ts` `tensorFor`, `runsFit`).
 */
export function safetensorsStream(tensors: ReadonlyMap<string, Tensor | WrittenTensor>): ReplyStream {
  const { head, ordered } = layout(tensors);
  return new ReplyStream([
    bytesSegment(head),
    ...ordered.map(([, t]) => ('data' in t ? dataSegment(t.dtype, t.data) : t.open())),
  ]);
}
