/**
 * Retries a call whose connection was reset. On a loaded machine a keep-alive socket the server is
 * closing (idle timeout) can be picked for the next request, which then fails with ECONNRESET before
 * the server has read it; the benchmarks count these retries and report them instead of dying.
 */
export const resets = { count: 0 };

/** `fetch`'s TypeError with the socket's code as its cause, or `node:http`'s error with the code itself. */
function isReset(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } } | null)?.cause;
  if (error instanceof TypeError) return cause?.code === 'ECONNRESET' || cause?.code === 'UND_ERR_SOCKET';
  return (error as { code?: unknown } | null)?.code === 'ECONNRESET';
}

export async function retryOnReset<T>(call: () => Promise<T>, attempts = 3): Promise<T> {
  for (let k = 1; ; k += 1) {
    try {
      return await call();
    } catch (error) {
      if (k >= attempts || !isReset(error)) throw error;
      resets.count += 1;
    }
  }
}
