import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import { BodyTooLargeError, ClientGoneError, readBody, readBodyPooled } from './body.ts';
import { BodyBufferPool } from './body-buffers.ts';

/**
 * `readBodyPooled` against `readBody` on real loopback requests: the same bytes, the same errors, and
 * every buffer back in the pool once its request is over (the body released, or the read failed).
 */

type Outcome = { ok: true; body: Buffer; release: () => void } | { ok: false; error: unknown };

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => s.close(r))));
});

/** A server reading each body with `readBodyPooled` into `pool`; `next()` gives each request's outcome. */
async function pooledServer(pool: BodyBufferPool, limit: number) {
  const outcomes: Outcome[] = [];
  const waiters: Array<(o: Outcome) => void> = [];
  const report = (o: Outcome) => {
    const w = waiters.shift();
    if (w) w(o);
    else outcomes.push(o);
  };
  const server = createServer(async (req, res) => {
    try {
      const lease = await readBodyPooled(req, limit, pool);
      report({ ok: true, body: Buffer.from(lease.body), release: lease.release });
      lease.release();
      res.end('ok');
    } catch (error) {
      report({ ok: false, error });
      res.statusCode = error instanceof BodyTooLargeError ? 413 : 500;
      res.end();
    }
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    port,
    next: () =>
      outcomes.length > 0
        ? Promise.resolve(outcomes.shift() as Outcome)
        : new Promise<Outcome>((resolve) => waiters.push(resolve)),
  };
}

function post(port: number, body: Buffer, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ port, host: '127.0.0.1', method: 'POST', path: '/', headers }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** A request stand-in: the given headers, then the chunks. */
function fakeRequest(headers: Record<string, string>, chunks: readonly Buffer[]): IncomingMessage {
  const stream = new PassThrough();
  for (const c of chunks) stream.write(c);
  stream.end();
  return Object.assign(stream, { headers }) as unknown as IncomingMessage;
}

describe('readBodyPooled', () => {
  it('reads the bytes readBody reads, many chunks into one pooled buffer, reused by the next body', async () => {
    const pool = new BodyBufferPool();
    const server = await pooledServer(pool, 4 * 1024 * 1024);
    const first = randomBytes(300_000);
    expect(await post(server.port, first)).toBe(200);
    const a = await server.next();
    expect(a.ok && a.body.equals(first)).toBe(true);
    const second = randomBytes(310_000);
    expect(await post(server.port, second)).toBe(200);
    const b = await server.next();
    expect(b.ok && b.body.equals(second)).toBe(true);
    expect(pool.reused).toBe(1);
    expect(pool.lent).toBe(0);
    // The reference: readBody on a stream of the same chunks.
    const chunks = [second.subarray(0, 1000), second.subarray(1000)];
    const same = await readBody(fakeRequest({ 'content-length': String(second.length) }, chunks));
    expect(same.equals(second)).toBe(true);
  });

  it('a declared length over the limit is a 413 before any buffer is taken', async () => {
    const pool = new BodyBufferPool();
    const server = await pooledServer(pool, 1000);
    expect(await post(server.port, Buffer.alloc(2000, 0x61))).toBe(413);
    const outcome = await server.next();
    expect(!outcome.ok && outcome.error instanceof BodyTooLargeError).toBe(true);
    expect(pool.lent).toBe(0);
    expect(pool.idleStats().buffers).toBe(0);
  });

  it('bytes past the limit fail with 413 and give the buffer back', async () => {
    const pool = new BodyBufferPool();
    // Declared under the limit, more arriving (a stream that is not Node's parser).
    const req = fakeRequest({ 'content-length': '10' }, [Buffer.alloc(8, 1), Buffer.alloc(8, 2)]);
    await expect(readBodyPooled(req, 12, pool)).rejects.toBeInstanceOf(BodyTooLargeError);
    expect(pool.lent).toBe(0);
    expect(pool.idleStats().buffers).toBe(1);
  });

  it('bytes past the declared length (under the limit) are all kept, in a buffer of their own', async () => {
    const pool = new BodyBufferPool();
    const chunks = [Buffer.alloc(8, 1), Buffer.alloc(8, 2), Buffer.alloc(3, 3)];
    const lease = await readBodyPooled(fakeRequest({ 'content-length': '10' }, chunks), 100, pool);
    expect(lease.body.equals(Buffer.concat(chunks))).toBe(true);
    // The pooled buffer went back when the bytes moved; the lease has nothing to give back.
    expect(pool.lent).toBe(0);
    lease.release();
    expect(pool.idleStats().buffers).toBe(1);
  });

  it('a client hanging up mid-body is ClientGoneError, and the buffer goes back', async () => {
    let taken!: () => void;
    const holding = new Promise<void>((resolve) => {
      taken = resolve;
    });
    // Says when the server took a buffer for the body.
    const pool = new (class extends BodyBufferPool {
      override take(size: number): Buffer {
        taken();
        return super.take(size);
      }
    })();
    const server = await pooledServer(pool, 4 * 1024 * 1024);
    const socket = connect(server.port, '127.0.0.1');
    await once(socket, 'connect');
    socket.write(`POST / HTTP/1.1\r\nhost: x\r\ncontent-length: 200000\r\n\r\n${'a'.repeat(70_000)}`);
    // Hang up only once the server holds a buffer for this body.
    await holding;
    socket.destroy();
    const outcome = await server.next();
    expect(!outcome.ok && outcome.error instanceof ClientGoneError).toBe(true);
    expect(pool.lent).toBe(0);
    expect(pool.idleStats().buffers).toBe(1);
  });

  it('a chunked body (no declared length) is read without the pool', async () => {
    const pool = new BodyBufferPool();
    const server = await pooledServer(pool, 4 * 1024 * 1024);
    const body = randomBytes(100_000);
    expect(await post(server.port, body, { 'transfer-encoding': 'chunked' })).toBe(200);
    const outcome = await server.next();
    expect(outcome.ok && outcome.body.equals(body)).toBe(true);
    expect(pool.idleStats().buffers).toBe(0);
  });

  it('a lease released twice throws (its buffer may be lent again by then)', async () => {
    const pool = new BodyBufferPool();
    const lease = await readBodyPooled(
      fakeRequest({ 'content-length': '3' }, [Buffer.from('abc')]),
      10,
      pool,
    );
    expect(lease.body.toString()).toBe('abc');
    lease.release();
    expect(() => lease.release()).toThrow(/released twice/);
    expect(pool.lent).toBe(0);
  });
});
