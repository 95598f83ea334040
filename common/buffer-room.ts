/**
 * `buffer` when it has room for `length` elements, else a larger one from `make` with `buffer`'s first
 * `keep` elements copied in. For the owned, reused buffers that keep a session's bytes or ids from one
 * request to the next: they grow by a quarter (plus 1,024 elements, so a small one does not regrow at
 * every step) and copy only what they keep.
 */
export function withRoom<T extends Uint8Array | Int32Array>(
  buffer: T,
  length: number,
  keep: number,
  make: (n: number) => T,
): T {
  if (buffer.length >= length) return buffer;
  const grown = make(Math.ceil(length * 1.25) + 1024);
  grown.set(buffer.subarray(0, keep) as never);
  return grown;
}
