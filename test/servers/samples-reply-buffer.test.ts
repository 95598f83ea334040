import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from './hardening/raw-http.ts';
import { startStack } from './support.ts';

/**
 * The samples route writes its replies into buffers reused across requests
 * (fakes/session/wire/reply-buffers.ts) and takes one back only once the socket has sent it: a reply the
 * client has not read yet keeps its buffer, so the next request must get another one. The replies are
 * large enough (6.7 MB) that loopback's socket buffers cannot hold a whole one while the client reads nothing.
 */

let stack: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  stack = await startStack({ bodyLimitBytes: 16 * 1024 * 1024 });
});
afterAll(() => stack?.close());

/** A session of `roots` single-turn roots, each a user message of `words` words from `prefix`. */
async function bigSession(prefix: string, roots: number, words: number): Promise<string> {
  const id = await stack.client.create();
  for (let r = 0; r < roots; r += 1) {
    const content = Array.from({ length: words }, (_, k) => `${prefix}${r}x${k % 997}`).join(' ');
    const chat = await stack.client.chat(id, { messages: [{ role: 'user', content }] });
    expect(chat.status).toBe(200);
  }
  return id;
}

async function samplesBytes(id: string): Promise<Buffer> {
  const response = await rawRequest(
    stack.session.url,
    { method: 'POST', path: `/sessions/${id}/samples`, body: Buffer.from('{}') },
    30_000,
  );
  expect(response.status).toBe(200);
  return response.body;
}

/** Sends a samples request and reads nothing until `read` is called; resolves once the server has written its answer. */
function pausedSamples(id: string) {
  const { hostname, port } = new URL(stack.session.url);
  const socket = connect({ host: hostname, port: Number(port) });
  socket.pause();
  const written = stack.session.events.next(
    'request:end',
    (event) => event.path === `/sessions/${id}/samples`,
  );
  socket.write(
    `POST /sessions/${id}/samples HTTP/1.1\r\nhost: ${hostname}:${port}\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}`,
  );
  const read = () =>
    new Promise<Buffer>((resolve, reject) => {
      const chunks: Buffer[] = [];
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      socket.on('end', () => {
        const all = Buffer.concat(chunks);
        resolve(all.subarray(all.indexOf('\r\n\r\n') + 4));
      });
      socket.on('error', reject);
      socket.resume();
    });
  return { written, read };
}

describe('samples reply buffers', () => {
  it('a reply not yet sent keeps its buffer: the next request writes elsewhere', async () => {
    const a = await bigSession('a', 2, 200_000);
    const b = await bigSession('b', 2, 200_000);
    const expectedA = await samplesBytes(a);
    const expectedB = await samplesBytes(b);
    expect(expectedA.length).toBeGreaterThan(6 * 1024 * 1024);
    expect(expectedA.equals(expectedB)).toBe(false);
    // A's reply goes out into a socket nobody reads (its buffer is one a finished request gave back)...
    const held = pausedSamples(a);
    await held.written;
    // ...while B's is written and read in full.
    expect((await samplesBytes(b)).equals(expectedB)).toBe(true);
    expect((await held.read()).equals(expectedA)).toBe(true);
  }, 60_000);
});
