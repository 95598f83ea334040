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

/**
 * A chat turn sent to the fake session server, sent again when the same race happened one hop further
 * (the session server's keep-alive socket to the policy was reset): the session server answers that 502
 * without committing anything, so the turn can be sent again as it is (at most 3 more times, each
 * counted in `resets`). `text` gives an answer's body as text.
 */
export async function sendChatTurn<T extends { readonly status: number }>(
  send: () => Promise<T>,
  text: (answer: T) => string,
): Promise<T> {
  let answer = await retryOnReset(send);
  for (let k = 0; k < 3 && answer.status === 502 && text(answer).includes('transport error'); k += 1) {
    resets.count += 1;
    answer = await retryOnReset(send);
  }
  return answer;
}
