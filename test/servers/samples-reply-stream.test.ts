import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest } from './hardening/raw-http.ts';
import { startStack } from './support.ts';

/**
 * The samples route streams its replies through chunks reused across requests
 * (fakes/session/wire/send-stream.ts) and takes a chunk back only once the socket has handed it to the
 * kernel: a reply the client is not reading keeps its chunks, so another request must write elsewhere;
 * a client that leaves mid-reply cuts its reply without harming the next one. The replies are large
 * enough (6.7 MB) that loopback's socket buffers cannot hold a whole one while the client reads nothing.
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
  expect(response.headers['content-length']).toBe(String(response.body.length));
  return response.body;
}

/**
 * Sends a samples request and reads nothing until `read` is called; `waiting` resolves once the server
 * waits for this client to read (its reply partly handed over, its chunks held by the socket).
 */
function pausedSamples(id: string) {
  const { hostname, port } = new URL(stack.session.url);
  const socket = connect({ host: hostname, port: Number(port) });
  socket.pause();
  const path = `/sessions/${id}/samples`;
  const started = stack.session.events.next('request:start', (event) => event.path === path);
  const waiting = started.then(({ requestId }) => ({
    requestId,
    waited: stack.session.events.next('reply:waiting', (event) => event.requestId === requestId),
  }));
  socket.write(
    `POST ${path} HTTP/1.1\r\nhost: ${hostname}:${port}\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}`,
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
  return { socket, waiting, read };
}

describe('samples reply stream', () => {
  it('a reply not yet read keeps its chunks: the next request writes elsewhere, both arrive intact', async () => {
    const a = await bigSession('a', 2, 200_000);
    const b = await bigSession('b', 2, 200_000);
    const expectedA = await samplesBytes(a);
    const expectedB = await samplesBytes(b);
    expect(expectedA.length).toBeGreaterThan(6 * 1024 * 1024);
    expect(expectedA.equals(expectedB)).toBe(false);
    // A's reply goes out into a socket nobody reads (its chunks are ones finished requests gave back)...
    const held = pausedSamples(a);
    const { waited } = await held.waiting;
    const paused = await waited;
    expect(paused.written).toBeLessThan(paused.total);
    // ...while B's is written and read in full.
    expect((await samplesBytes(b)).equals(expectedB)).toBe(true);
    expect((await held.read()).equals(expectedA)).toBe(true);
  }, 60_000);

  it('a held reply is the tree as it was when asked: later chats and the delete of its session change nothing in it', async () => {
    // Miles builds the whole reply before sending it; the stream fills its chunks later, from what the
    // samples op collected, so nothing it reads may move with the session afterwards.
    const id = await bigSession('d', 2, 200_000);
    const expected = await samplesBytes(id);
    const held = pausedSamples(id);
    await (await held.waiting).waited;
    const first = await stack.client.chat(id, { messages: [{ role: 'user', content: 'd0x0 later' }] });
    expect(first.status).toBe(200);
    const root = { role: 'user', content: 'another root' };
    const second = await stack.client.chat(id, { messages: [root] });
    const assistant = (second.json as { choices: Array<{ message: unknown }> }).choices[0]?.message;
    const extended = await stack.client.chat(id, {
      messages: [root, assistant, { role: 'tool', content: 'more' }],
    });
    expect(extended.status).toBe(200);
    await stack.client.delete(id);
    expect((await held.read()).equals(expected)).toBe(true);
  }, 60_000);

  it('a client that leaves mid-reply cuts it; the server stays sound and answers the next request whole', async () => {
    const a = await bigSession('c', 2, 200_000);
    const expected = await samplesBytes(a);
    const held = pausedSamples(a);
    const { requestId, waited } = await held.waiting;
    await waited;
    const cut = stack.session.events.next('reply:cut', (event) => event.requestId === requestId);
    const ended = stack.session.events.next('request:end', (event) => event.requestId === requestId);
    held.socket.destroy();
    const cutAt = await cut;
    expect(cutAt.written).toBeGreaterThan(0);
    expect(cutAt.written).toBeLessThan(expected.length);
    expect(cutAt.total).toBe(expected.length);
    expect((await ended).status).toBe(200);
    expect((await samplesBytes(a)).equals(expected)).toBe(true);
  }, 60_000);
});
