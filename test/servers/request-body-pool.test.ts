import { once } from 'node:events';
import { createServer, request, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { connect } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { BodyBufferPool } from '../../common/http/body-buffers.ts';
import { pythonJsonDumps } from '../../common/python-json/dumps.ts';
import { type PolicyServerHandle, startPolicyServer } from '../../fakes/policy/index.ts';
import { startSessionServer } from '../../fakes/session/server.ts';
import { completionBody } from './support.ts';

/**
 * The request bodies read into pooled buffers (common/http/body-buffers.ts) against a fresh buffer per
 * body, through the real servers: the same bytes answered, forwarded, recorded and logged. The pool
 * overwrites every buffer given back (`poisonOnGive`), so a body read after its buffer went back (the
 * buffer recycled too early) reads 0xEE bytes and the two runs differ. Sessions interleave, siblings
 * wait on the session lock with their bodies read, bodies fail to parse, pass the limit (413) and
 * (session server) are cut off by a client hanging up; at the end every buffer lent is back.
 */

const stop: Array<() => Promise<unknown>> = [];
afterAll(async () => {
  for (const close of stop.splice(0).reverse()) await close();
});

function post(url: string, body: Buffer, headers: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(`${res.statusCode} ${Buffer.concat(chunks).toString('latin1')}`));
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** Sends the head and part of a body, then hangs up once the server took a buffer for it. */
async function hangUpMidBody(url: string, path: string, taken: Promise<void>): Promise<void> {
  const { port } = new URL(url);
  const socket = connect(Number(port), '127.0.0.1');
  await once(socket, 'connect');
  socket.write(`POST ${path} HTTP/1.1\r\nhost: x\r\ncontent-length: 150000\r\n\r\n{"messages": [`);
  await taken;
  socket.destroy();
}

/** A pool that poisons what is given back and says when it lends a buffer. */
class WatchedPool extends BodyBufferPool {
  private waiters: Array<() => void> = [];
  constructor() {
    super({ poisonOnGive: true });
  }
  nextTake(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
  override take(size: number): Buffer {
    for (const w of this.waiters.splice(0)) w();
    return super.take(size);
  }
}

interface Backend {
  readonly url: string;
  readonly bodies: Buffer[];
  /** Holds the next `count` requests, then answers them in the order of their bytes. */
  holdNext(count: number): void;
}

async function startBackend(): Promise<Backend> {
  const bodies: Buffer[] = [];
  let hold = 0;
  let held: Array<{ body: Buffer; res: ServerResponse }> = [];
  const answer = (body: Buffer, res: ServerResponse) => {
    bodies.push(body);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify(completionBody({ content: `reply ${bodies.length}` }, { id: `c-${bodies.length}` })),
    );
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      if (hold === 0) return answer(body, res);
      held.push({ body, res });
      if (held.length < hold) return;
      const group = held.sort((a, b) => Buffer.compare(a.body, b.body));
      [held, hold] = [[], 0];
      for (const h of group) answer(h.body, h.res);
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  stop.push(() => new Promise((r) => server.close(r)));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    holdNext: (count) => {
      hold = count;
    },
  };
}

const message = (role: string, content: string) => ({ role, content });
// Observations of ~25 KB: bodies past 64 KB arrive in several chunks.
const observation = (session: number, turn: number) =>
  `observation ${turn} of ${session} ${`w${session}${turn} `.repeat(5000)}`;

describe('session server chat bodies in pooled buffers', () => {
  async function run(pool: WatchedPool | false): Promise<string[]> {
    const backend = await startBackend();
    const server = await startSessionServer({
      backendUrl: backend.url,
      clock: () => 1_700_000_000,
      bodyLimitBytes: 200_000,
      performance: { chatBodyBuffers: pool },
    });
    stop.push(() => server.close());
    const out: string[] = [];
    const ids: string[] = [];
    for (let i = 0; i < 2; i += 1)
      ids.push(JSON.parse((await post(`${server.url}/sessions`, Buffer.alloc(0))).slice(4)).session_id);
    const chat = (s: number) => `${server.url}/sessions/${ids[s]}/v1/chat/completions`;
    const name = (text: string) => ids.reduce((t, id, i) => t.replaceAll(id, `<session ${i}>`), text);
    const answer = async (label: string, s: number, body: Buffer) =>
      `${label}: ${name(await post(chat(s), body))}`;
    const send = async (label: string, s: number, body: Buffer) => out.push(await answer(label, s, body));
    const histories: Array<Array<Record<string, string>>> = [
      [message('system', 'agent 0')],
      [message('system', 'agent 1')],
    ];
    for (let t = 0; t < 5; t += 1) {
      // The sessions take turns, each re-sending its growing history.
      for (const k of [0, 1]) {
        histories[k]!.push(message('user', observation(k, t)));
        await send(`turn ${t}`, k, Buffer.from(JSON.stringify({ messages: histories[k] })));
        histories[k]!.push(message('assistant', `reply of ${k} at ${t}`));
      }
    }
    // Siblings: three bodies of session 1 read at once, waiting in turn for the session lock.
    backend.holdNext(3);
    const siblings = await Promise.all(
      ['left', 'right', 'middle'].map((side) =>
        answer(
          `sibling ${side}`,
          1,
          Buffer.from(JSON.stringify({ messages: [...histories[1]!, message('user', side)] })),
        ),
      ),
    );
    for (const line of siblings) out.push(line);
    await send('bad json', 0, Buffer.from(`{"messages": [${JSON.stringify(histories[0]![0])}, ]}`));
    await send(
      'too large',
      0,
      Buffer.from(JSON.stringify({ messages: [message('user', 'x'.repeat(250_000))] })),
    );
    const gone = server.events.next('request:end');
    const reading = pool === false ? server.events.next('request:start').then(() => {}) : pool.nextTake();
    await hangUpMidBody(server.url, new URL(chat(0)).pathname, reading);
    out.push(`gone: ${(await gone).status}`);
    await send(
      'after',
      0,
      Buffer.from(JSON.stringify({ messages: [...histories[0]!, message('user', 'again')] })),
    );
    for (const id of ids) out.push(name(await (await fetch(`${server.url}/sessions/${id}`)).text()));
    return out.concat(backend.bodies.map((b) => b.toString('latin1')));
  }

  it('answers, forwards and records the same bytes as fresh buffers, and gives every buffer back', async () => {
    const pool = new WatchedPool();
    const pooled = await run(pool);
    const fresh = await run(false);
    expect(pooled).toEqual(fresh);
    // The runs met every case, and the pool did lend buffers again.
    const statuses = pooled.map((line) => line.match(/^[\w ]+: (\d{3}|null)/)?.[1]).filter(Boolean);
    expect(new Set(statuses)).toEqual(new Set(['200', '400', '413', 'null']));
    expect(pool.reused).toBeGreaterThan(5);
    expect(pool.lent).toBe(0);
  });
});

describe('policy bodies in pooled buffers', () => {
  /** A forwarded body as the session server writes it: `input_ids` last. */
  const forwarded = (messages: unknown[], ids: number) =>
    Buffer.from(
      pythonJsonDumps({
        messages,
        model: 'toy',
        input_ids: Array.from({ length: ids }, (_, i) => (i * 7919) % 100_000),
      }),
    );

  async function run(pool: WatchedPool | false): Promise<string[]> {
    const policy: PolicyServerHandle = await startPolicyServer({
      mode: 'synthetic',
      clock: () => 1_700_000_000_000,
      bodyLimitBytes: 400_000,
      performance: { bodyBuffers: pool },
    });
    stop.push(() => policy.close());
    const url = `${policy.url}/v1/chat/completions`;
    const out: string[] = [];
    const send = async (label: string, key: string, body: Buffer) =>
      out.push(`${label}: ${await post(url, body, { 'x-smg-routing-key': key })}`);
    const histories: unknown[][] = [[message('system', 'a')], [message('system', 'b')]];
    for (let t = 0; t < 5; t += 1) {
      // The routing keys take turns, each re-sending its history with more ids (past 64 KB from turn 1).
      for (const k of [0, 1]) {
        histories[k]!.push(message('user', `turn ${t} of ${k}`));
        await send(`turn ${t}`, `key-${k}`, forwarded(histories[k]!, 10_000 * (t + 1) + k));
      }
    }
    await send('bad json', 'key-0', Buffer.from('{"messages": [}'));
    await send('too large', 'key-0', forwarded(histories[0]!, 90_000));
    await send('after', 'key-0', forwarded([...histories[0]!, message('user', 'again')], 50_001));
    const log = policy.log.entries().map(({ at: _at, ...rest }) => JSON.stringify(rest));
    return out.concat(log);
  }

  it('answers and logs the same as fresh buffers, and gives every buffer back', async () => {
    const pool = new WatchedPool();
    const pooled = await run(pool);
    const fresh = await run(false);
    expect(pooled).toEqual(fresh);
    expect(pooled.some((l) => l.startsWith('too large: 413'))).toBe(true);
    expect(pooled.some((l) => l.startsWith('bad json: 400'))).toBe(true);
    expect(pool.reused).toBeGreaterThan(5);
    expect(pool.lent).toBe(0);
  });
});
