import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ChatBodyReuse } from '../../fakes/session/fast/chat-body-reuse.ts';
import { startSessionServer } from '../../fakes/session/server.ts';
import { completionBody } from './support.ts';

/**
 * The session server with its chat-path speed machinery on (the default: the chat body reuse, the pooled
 * forwarded-body buffers, the shared record memory) and off (Miles' plain way: every body parsed whole,
 * every forwarded body written whole into a fresh buffer, each record holding its own messages and
 * `input_ids` list), driven with the same bytes: every answer, every body forwarded to the backend, every session view
 * (records, tree) and samples reply must be the same bytes. The bodies re-send a growing history as
 * an agent does, branch back, edit and drop earlier messages, go wrong after the re-sent bytes, and
 * two sessions interleave, with siblings in flight at once.
 */

interface Backend {
  readonly url: string;
  /** Every body answered, in answer order. */
  readonly bodies: Buffer[];
  /**
   * Holds the next `count` requests, then answers them one at a time in the order of their bytes,
   * each after `answered()`'s promise (taken just before it) resolved: siblings commit in a fixed order.
   */
  holdNext(count: number, answered: () => Promise<unknown>): void;
  close(): Promise<void>;
}

// A backend on a real socket that keeps each body's bytes and answers a completion numbered in answer order.
async function startBackend(): Promise<Backend> {
  const bodies: Buffer[] = [];
  let hold: { count: number; answered: () => Promise<unknown> } | null = null;
  let held: Array<{ body: Buffer; response: ServerResponse }> = [];
  const answer = (body: Buffer, response: ServerResponse) => {
    bodies.push(body);
    const n = bodies.length;
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(completionBody({ content: `reply ${n}` }, { id: `cmpl-${n}` })));
  };
  const release = async (group: typeof held, answered: () => Promise<unknown>) => {
    group.sort((a, b) => Buffer.compare(a.body, b.body));
    for (const { body, response } of group) {
      const committed = answered();
      answer(body, response);
      await committed;
    }
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (c: Buffer) => chunks.push(c));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      if (hold === null) return answer(body, response);
      held.push({ body, response });
      if (held.length < hold.count) return;
      const [group, answered] = [held, hold.answered];
      [held, hold] = [[], null];
      void release(group, answered);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    holdNext: (count, answered) => {
      hold = { count, answered };
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

type Stack = { backend: Backend; server: Awaited<ReturnType<typeof startSessionServer>> };

// `reuse`: the chat body reuse, the pooled forwarded-body buffers and the shared record memory, all on or all off.
async function startWith(reuse: boolean): Promise<Stack> {
  const backend = await startBackend();
  const server = await startSessionServer({
    backendUrl: backend.url,
    clock: () => 1_700_000_000,
    performance: { reuseChatBodyBytes: reuse, poolForwardedBodies: reuse, shareRecordMemory: reuse },
  });
  return { backend, server };
}

/** One exchange's bytes, the session ids written as their index so the two servers compare. */
async function exchange(stack: Stack, ids: readonly string[], method: string, path: string, body?: Buffer) {
  const response = await fetch(`${stack.server.url}${path}`, { method, ...(body ? { body } : {}) });
  let text = Buffer.from(await response.arrayBuffer()).toString('latin1');
  ids.forEach((id, i) => {
    text = text.replaceAll(id, `<session ${i}>`);
  });
  return `${response.status} ${text}`;
}

const message = (role: string, content: string) => `{"role": "${role}", "content": "${content}"}`;
const body = (messages: readonly string[], rest = ', "model": "toy", "temperature": 1.0') =>
  Buffer.from(`{"messages": [${messages.join(', ')}]${rest}}`);

/** The steps: each a label (its case) and what to send to which session. */
interface Step {
  readonly label: string;
  readonly session: number;
  /** Several bodies sent at once: siblings in flight. */
  readonly bodies: readonly Buffer[];
  /** The history the session continues from after this step. */
  readonly next?: string[];
}

function scenario(): Step[] {
  const steps: Step[] = [];
  const histories: string[][] = [
    [message('system', 'you are an agent é'), message('user', 'task: fix the build \\ud800 😀')],
    [
      message('system', 'other agent'),
      '{"role": "user", "content": "big", "n": 123456789012345678901234567890, "r": 1.0}',
    ],
    // NaN parses (Python's json) but a record holding it cannot be printed: GET answers 500 there.
    [message('system', 'nan agent'), '{"role": "user", "content": "nan", "x": NaN, "y": -Infinity}'],
  ];
  const turn = (label: string, session: number, h: string[]) => {
    steps.push({ label, session, bodies: [body(h)], next: h });
  };
  for (let t = 0; t < 6; t += 1) {
    for (const s of [0, 1, 2]) {
      // Each turn re-sends the history, the previous reply and a new observation.
      const h = histories[s]!;
      h.push(
        message('assistant', `reply ${t} of ${s}`),
        message('user', `observation ${t} of ${s} ${'x'.repeat(t * 50)}`),
      );
      turn(t === 0 ? 'first' : 'grow', s, [...h]);
    }
  }
  const h0 = histories[0]!;
  turn('resend', 0, [...h0]);
  turn('branch-back', 0, [...h0.slice(0, 4), message('user', 'another way')]);
  turn(
    'edit-same-length',
    0,
    h0.map((m, i) => (i === 3 ? m.replace('reply', 'rEply') : m)),
  );
  turn(
    'edit-other-length',
    0,
    h0.map((m, i) => (i === 3 ? message('assistant', 'short') : m)),
  );
  turn(
    'remove',
    0,
    h0.filter((_, i) => i !== 2),
  );
  turn('grow-again', 0, [...h0, message('user', 'more')]);
  steps.push({
    label: 'dup-messages-key',
    session: 0,
    bodies: [body(h0, ', "messages": [{"role": "user", "content": "last wins"}]')],
  });
  steps.push({
    label: 'escaped-messages-key',
    session: 0,
    bodies: [body(h0, ', "m\\u0065ssages": [{"role": "user", "content": "escaped"}]')],
  });
  steps.push({
    label: 'trailing-comma',
    session: 0,
    bodies: [Buffer.from(`{"messages": [${h0.join(', ')}, ]}`)],
  });
  steps.push({
    label: 'broken-tail',
    session: 0,
    bodies: [Buffer.from(`{"messages": [${h0.join(', ')}, {"role": "user", "content": "x}]}`)],
  });
  steps.push({
    label: 'invalid-utf8-tail',
    session: 0,
    bodies: [
      Buffer.concat([
        Buffer.from(`{"messages": [${h0.join(', ')}, {"role": "user", "content": "`),
        Buffer.from([0xff]),
        Buffer.from('"}]}'),
      ]),
    ],
  });
  steps.push({
    label: 'bom',
    session: 0,
    bodies: [Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body([...h0, message('user', 'bom')])])],
  });
  steps.push({ label: 'not-a-list', session: 1, bodies: [Buffer.from('{"messages": {"role": "user"}}')] });
  const h1 = histories[1]!;
  steps.push({
    label: 'siblings',
    session: 1,
    bodies: [
      body([...h1, message('user', 'left')]),
      body([...h1, message('user', 'right')]),
      body([...h1, message('user', 'left'), message('assistant', 'x')]),
    ],
  });
  turn('after-siblings', 1, [...h1, message('user', 'left'), message('assistant', 'reply after')]);
  return steps;
}

/** Everything one server answered and forwarded for the scenario, in order. */
async function run(stack: Stack): Promise<string[]> {
  const out: string[] = [];
  const ids: string[] = [];
  for (let i = 0; i < 3; i += 1) {
    const created = await fetch(`${stack.server.url}/sessions`, { method: 'POST' });
    ids.push(((await created.json()) as { session_id: string }).session_id);
  }
  for (const step of scenario()) {
    const path = `/sessions/${ids[step.session]}/v1/chat/completions`;
    if (step.bodies.length > 1)
      stack.backend.holdNext(step.bodies.length, () => stack.server.events.next('chat:committed'));
    const answers = await Promise.all(step.bodies.map((b) => exchange(stack, ids, 'POST', path, b)));
    for (const a of answers) out.push(`${step.label}: ${a}`);
  }
  for (const id of ids) {
    out.push(await exchange(stack, ids, 'GET', `/sessions/${id}`));
    out.push(await exchange(stack, ids, 'POST', `/sessions/${id}/samples`, Buffer.from('{}')));
  }
  return out.concat(stack.backend.bodies.map((b) => b.toString('latin1')));
}

let on: Stack;
let off: Stack;
const reusedPerLoad: number[] = [];
beforeAll(async () => {
  const load = ChatBodyReuse.prototype.load;
  // Told how many messages each reusing load took from the kept ones (0: parsed whole).
  vi.spyOn(ChatBodyReuse.prototype, 'load').mockImplementation(function (this: ChatBodyReuse, raw: Buffer) {
    const value = load.call(this, raw);
    reusedPerLoad.push(this.lastReused);
    return value;
  });
  [on, off] = await Promise.all([startWith(true), startWith(false)]);
});
afterAll(async () => {
  vi.restoreAllMocks();
  for (const stack of [on, off]) {
    await stack?.server.close();
    await stack?.backend.close();
  }
});

describe('chat body reuse through the real server', () => {
  it('answers, forwards, records and samples the same bytes with the reuse on and off', async () => {
    const withReuse = await run(on);
    const loadsOn = reusedPerLoad.length;
    const without = await run(off);
    // Off parses whole: no load of the reuse at all while it ran.
    expect(reusedPerLoad.length).toBe(loadsOn);
    expect(withReuse).toEqual(without);
    // The reuse did take kept messages on most turns (growing histories), and some bodies failed.
    expect(reusedPerLoad.filter((k) => k > 0).length).toBeGreaterThanOrEqual(12);
    const statuses = new Set(withReuse.map((line) => line.replace(/^[\w-]+: /, '').slice(0, 3)));
    expect([...statuses].sort()).toEqual(expect.arrayContaining(['200', '400', '500']));
  });
});
