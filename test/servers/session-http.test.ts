import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { milesProfileNamed } from '../../contracts/miles-profile.ts';
import { createPolicy } from '../../fakes/policy/handlers.ts';
import { createSessionClient, SessionRequestError } from '../../fakes/session/client.ts';
import { startSessionServer } from '../../fakes/session/server.ts';
import { decodeSafetensors } from '../../fakes/session/wire/safetensors.ts';
import { completionBody, POLICY_ORIGIN, replyMessage } from './support.ts';

// The HTTP surface of the fake session server (docs/session-server.md) against an in-process msw policy, so
// each test can inspect what reached the backend and inject faults (Miles' tests/fast/router/test_sessions.py
// and test_sessions_v2.py cases, radixark/miles@31f1ca96).

const policy = createPolicy({ mode: 'synthetic', origin: POLICY_ORIGIN });
const msw = setupServer(...policy.handlers);
const CHAT = `${POLICY_ORIGIN}/v1/chat/completions`;
// biome-ignore lint/suspicious/noExplicitAny: the tests edit and read deep into completion JSON
type Json = any;

let server: Awaited<ReturnType<typeof startSessionServer>>;
let client: ReturnType<typeof createSessionClient>;
// The cases whose facts are 31f1ca96's wire (its /health, GET without turn_args, no forwarded-request
// defaults, meta_info kept on the reply) run under that profile; the newer wire is pinned in
// miles-profile-4d412b5a.test.ts. Every other case runs under the default profile.
let older: Awaited<ReturnType<typeof startSessionServer>>;
let olderClient: ReturnType<typeof createSessionClient>;

beforeAll(async () => {
  msw.listen({ onUnhandledFrame: 'bypass' });
  server = await startSessionServer({ backendUrl: POLICY_ORIGIN, bodyLimitBytes: 64 * 1024 });
  client = createSessionClient(server.url);
  older = await startSessionServer({
    backendUrl: POLICY_ORIGIN,
    bodyLimitBytes: 64 * 1024,
    milesProfile: milesProfileNamed('31f1ca96')!,
  });
  olderClient = createSessionClient(older.url);
});
afterEach(() => {
  msw.resetHandlers();
  policy.log.clear();
});
afterAll(async () => {
  await server.close();
  await older.close();
  msw.close();
});

const U1 = { role: 'user', content: 'task: fix the build' };

async function raw(method: string, path: string, body?: string, headers: Record<string, string> = {}) {
  return rawAt(server.url, method, path, body, headers);
}

async function rawAt(
  base: string,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = {},
) {
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    redirect: 'manual',
    ...(body === undefined ? {} : { body }),
  });
  return { status: response.status, headers: response.headers, text: await response.text() };
}

/** Captures what reaches the backend, answering with a fixed completion. */
function captureBackend(
  reply: (n: number) => Response = () => HttpResponse.json(completionBody({ content: 'ok' })),
) {
  const seen: Array<{ url: string; headers: Headers; text: string }> = [];
  msw.use(
    http.post(CHAT, async ({ request }) => {
      seen.push({ url: request.url, headers: request.headers, text: await request.text() });
      return reply(seen.length);
    }),
  );
  return seen;
}

describe('routes', () => {
  it('health has a stable 32-hex instance id; create gives 32 lowercase hex', async () => {
    const a = await olderClient.health();
    const b = await olderClient.health();
    expect(a).toEqual({ status: 'ok', session_server_instance_id: older.instanceId });
    expect(b).toEqual(a);
    expect(older.instanceId).toMatch(/^[0-9a-f]{32}$/);
    expect(await olderClient.create()).toMatch(/^[0-9a-f]{32}$/);
  });

  it('a fresh session has no records and an empty tree', async () => {
    const id = await olderClient.create();
    const view = await rawAt(older.url, 'GET', `/sessions/${id}`);
    expect(JSON.parse(view.text)).toEqual({
      session_id: id,
      records: [],
      metadata: { accumulated_token_ids: [], max_trim_tokens: 0, tree: { nodes: [], leaves: [] } },
    });
  });

  it('answers 404 for an unknown session on every session route', async () => {
    const body = '{"error":"session not found: session_id=nonexistent"}';
    for (const [method, path] of [
      ['GET', '/sessions/nonexistent'],
      ['DELETE', '/sessions/nonexistent'],
      ['POST', '/sessions/nonexistent/v1/chat/completions'],
      ['POST', '/sessions/nonexistent/samples'],
    ] as const) {
      const answer = await raw(method, path, method === 'POST' ? '{}' : undefined);
      expect([answer.status, answer.text]).toEqual([404, body]);
    }
  });

  it('DELETE answers 204 with no body or content-type, then 404', async () => {
    const id = await client.create();
    const first = await raw('DELETE', `/sessions/${id}`);
    expect(first.status).toBe(204);
    expect(first.text).toBe('');
    expect(first.headers.get('content-type')).toBeNull();
    expect((await raw('DELETE', `/sessions/${id}`)).status).toBe(404);
  });

  it('follows Starlette routing: 405s, 404s and trailing-slash redirects', async () => {
    const id = await client.create();
    const post = await raw('POST', `/sessions/${id}`);
    expect([post.status, post.text, post.headers.get('allow')]).toEqual([
      405,
      '{"detail":"Method Not Allowed"}',
      'GET',
    ]);
    expect((await raw('GET', '/sessions')).status).toBe(405);
    expect((await raw('HEAD', '/health')).status).toBe(405);
    expect((await raw('OPTIONS', `/sessions/${id}/v1/chat/completions`)).status).toBe(405);
    expect(await raw('GET', '/nope')).toMatchObject({ status: 404, text: '{"detail":"Not Found"}' });
    const redirect = await raw('GET', '/health/');
    expect(redirect.status).toBe(307);
    expect(new URL(redirect.headers.get('location')!).pathname).toBe('/health');
  });

  it('proxies other paths raw, for any session id, with the routing key', async () => {
    const seen: Array<{ path: string; key: string | null; body: string }> = [];
    msw.use(
      http.all(`${POLICY_ORIGIN}/samples`, async ({ request }) => {
        seen.push({
          path: new URL(request.url).search,
          key: request.headers.get('x-smg-routing-key'),
          body: await request.text(),
        });
        return HttpResponse.json({ a: 1, b: [1, 2] }, { headers: { 'x-upstream': 'yes' } });
      }),
      http.get(
        `${POLICY_ORIGIN}/plain`,
        () => new HttpResponse('not json', { status: 418, headers: { 'content-type': 'text/plain' } }),
      ),
    );
    const answer = await raw('GET', '/sessions/unknown-id/samples?x=1');
    expect([answer.status, answer.text, answer.headers.get('x-upstream')]).toEqual([
      200,
      '{"a":1,"b":[1,2]}',
      'yes',
    ]);
    const put = await raw('PUT', '/sessions/unknown-id/samples', '{ "raw" : true }');
    expect(put.status).toBe(200);
    expect(seen).toEqual([
      { path: '?x=1', key: 'unknown-id', body: '' },
      { path: '', key: 'unknown-id', body: '{ "raw" : true }' },
    ]);
    const plain = await raw('GET', '/sessions/x/plain');
    expect([plain.status, plain.text, plain.headers.get('content-type')]).toEqual([
      418,
      'not json',
      'text/plain',
    ]);
  });

  it('answers 413 for a body over the limit', async () => {
    const id = await client.create();
    const answer = await raw('POST', `/sessions/${id}/v1/chat/completions`, 'x'.repeat(70 * 1024));
    expect(answer.status).toBe(413);
  });
});

describe('chat request rewriting', () => {
  it("forwards and records the request's floats as floats, as Miles' json.loads/json.dumps do", async () => {
    const seen = captureBackend();
    const id = await olderClient.create();
    const body =
      '{"messages":[{"role":"user","content":"hi"}],"temperature":1.0,"top_p":0.5,"max_tokens":8,"seed":0}';
    const answer = await rawAt(older.url, 'POST', `/sessions/${id}/v1/chat/completions`, body);
    expect(answer.status).toBe(200);
    expect(seen[0]!.text).toContain('"temperature": 1.0, "top_p": 0.5, "max_tokens": 8, "seed": 0');
    const view = await rawAt(older.url, 'GET', `/sessions/${id}`);
    expect(view.text).toContain('"temperature":1.0,"top_p":0.5,"max_tokens":8,"seed":0');
  });

  it('forces fields, overwrites input_ids, strips stream options and forwards headers with the routing key', async () => {
    const seen = captureBackend();
    const id = await olderClient.create();
    const body = {
      model: 'm',
      messages: [{ role: 'user', content: 'héllo' }],
      logprobs: false,
      return_meta_info: false,
      no_stop_trim: true,
      input_ids: [9, 9, 9],
      stream: false,
      stream_options: { include_usage: true },
      chat_template_kwargs: {},
    };
    const answer = await fetch(`${older.url}/sessions/${id}/v1/chat/completions?trace=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: 'Bearer t', 'x-custom': 'c' },
      body: JSON.stringify(body),
    });
    expect(answer.status).toBe(200);
    const [backend] = seen;
    expect(new URL(backend!.url).search).toBe('?trace=1');
    expect(backend!.headers.get('x-smg-routing-key')).toBe(id);
    expect(backend!.headers.get('authorization')).toBe('Bearer t');
    expect(backend!.headers.get('x-custom')).toBe('c');
    const sent = JSON.parse(backend!.text);
    expect(sent).toMatchObject({ logprobs: true, return_meta_info: true, no_stop_trim: false });
    expect(sent).not.toHaveProperty('stream');
    expect(sent).not.toHaveProperty('stream_options');
    expect(sent).not.toHaveProperty('chat_template_kwargs');
    expect(sent.input_ids).toEqual([2, expect.any(Number), 3]);
    // Python json.dumps defaults: spaced separators, ASCII escapes.
    expect(backend!.text).toContain('"content": "h\\u00e9llo"');
    expect(Object.keys(sent)).toEqual([
      'model',
      'messages',
      'logprobs',
      'return_meta_info',
      'no_stop_trim',
      'input_ids',
    ]);
  });

  it('overlays request chat_template_kwargs on the launch ones, and refuses a non-object', async () => {
    const launch = await startSessionServer({
      backendUrl: POLICY_ORIGIN,
      chatTemplateKwargs: { enable_thinking: false },
    });
    try {
      const seen = captureBackend();
      const launchClient = createSessionClient(launch.url);
      const a = await launchClient.create();
      const b = await launchClient.create();
      await launchClient.chat(a, { messages: [U1] });
      await launchClient.chat(b, { messages: [U1], chat_template_kwargs: { enable_thinking: true } });
      const [first, second] = seen.map((s) => JSON.parse(s.text));
      expect(first.chat_template_kwargs).toEqual({ enable_thinking: false });
      expect(second.chat_template_kwargs).toEqual({ enable_thinking: true });
      expect(first.input_ids).not.toEqual(second.input_ids);
      const bad = await launchClient.chat(a, { messages: [U1], chat_template_kwargs: ['x'] });
      expect([bad.status, bad.json]).toEqual([400, { error: 'chat_template_kwargs must be an object' }]);
    } finally {
      await launch.close();
    }
  });

  it('forces lora_path and replay flags when configured', async () => {
    const flagged = await startSessionServer({
      backendUrl: POLICY_ORIGIN,
      lora: true,
      returnRoutedExperts: true,
      returnIndexerTopk: true,
    });
    try {
      const seen = captureBackend();
      const c = createSessionClient(flagged.url);
      await c.chat(await c.create(), { messages: [U1] });
      expect(JSON.parse(seen[0]!.text)).toMatchObject({
        lora_path: 'miles_lora',
        return_routed_experts: true,
        return_indexer_topk: true,
      });
    } finally {
      await flagged.close();
    }
  });

  it('answers 400 for malformed JSON and a plain 500 for JSON that is not an object', async () => {
    const id = await client.create();
    const bad = await raw('POST', `/sessions/${id}/v1/chat/completions`, '{"messages": [');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text).error).toBe('invalid JSON body: Expecting value: line 1 column 15 (char 14)');
    const list = await raw('POST', `/sessions/${id}/v1/chat/completions`, '[]');
    expect([list.status, list.text, list.headers.get('content-type')]).toEqual([
      500,
      'Internal Server Error',
      'text/plain; charset=utf-8',
    ]);
  });
  it('answers 500 JSON when the matcher cannot compare a message, and a plain 500 when the render crashes', async () => {
    const id = await client.create();
    expect((await client.chat(id, { messages: ['not a message'] })).text).toBe('Internal Server Error');
    await client.chat(id, { messages: [U1] });
    const answer = await client.chat(id, { messages: ['not a message'] });
    expect([answer.status, answer.text]).toEqual([
      500,
      '{"error":"session message matcher raised an exception"}',
    ]);
  });
});

describe('backend answers', () => {
  it.each([
    [
      'message null',
      completionBody({ content: 'x' }),
      (b: Json) => (b.choices[0].message = null),
      502,
      'assistant message content is None',
    ],
    [
      'content null',
      completionBody({ content: 'x' }),
      (b: Json) => (b.choices[0].message.content = null),
      502,
      'assistant message content is None',
    ],
    [
      'no meta_info',
      completionBody({ content: 'x' }),
      (b: Json) => delete b.choices[0].meta_info,
      502,
      'meta_info and output_token_logprobs must be in choice (requires logprobs=True)',
    ],
    [
      'count mismatch',
      completionBody({ content: 'x' }),
      (b: Json) => (b.choices[0].meta_info.completion_tokens = 7),
      502,
      'invalid chat completion response: len(output_token_logprobs)=2 != completion_tokens=7.',
    ],
    [
      'no choices key',
      completionBody({ content: 'x' }),
      (b: Json) => delete b.choices,
      502,
      'meta_info and output_token_logprobs must be in choice',
    ],
    [
      'empty choices',
      completionBody({ content: 'x' }),
      (b: Json) => (b.choices = []),
      500,
      'Internal Server Error',
    ],
    [
      'no completion_tokens',
      completionBody({ content: 'x' }),
      (b: Json) => delete b.choices[0].meta_info.completion_tokens,
      500,
      'Internal Server Error',
    ],
  ])('validates a 200 with %s', async (_name, body, edit, status, text) => {
    edit(body);
    msw.use(http.post(CHAT, () => HttpResponse.json(body)));
    const id = await client.create();
    const answer = await client.chat(id, { messages: [U1] });
    expect(answer.status).toBe(status);
    expect(answer.text).toContain(text);
    expect((await client.get(id)).metadata.tree.nodes).toEqual([]);
  });

  it('answers a plain 500 for a non-JSON 200', async () => {
    msw.use(http.post(CHAT, () => new HttpResponse('oops', { status: 200 })));
    const answer = await client.chat(await client.create(), { messages: [U1] });
    expect([answer.status, answer.text]).toEqual([500, 'Internal Server Error']);
  });

  it('passes non-200 answers through unrecorded (JSON re-rendered compact, other bodies verbatim)', async () => {
    msw.use(
      http.post(
        CHAT,
        () =>
          HttpResponse.json(
            { error: 'context too long', n: [1, 2] },
            { status: 400, headers: { 'x-up': '1' } },
          ),
        {
          once: true,
        },
      ),
      http.post(
        CHAT,
        () => new HttpResponse('busy', { status: 503, headers: { 'content-type': 'text/plain' } }),
        { once: true },
      ),
    );
    const id = await client.create();
    const first = await client.chat(id, { messages: [U1] });
    expect([first.status, first.text, first.headers.get('x-up')]).toEqual([
      400,
      '{"error":"context too long","n":[1,2]}',
      '1',
    ]);
    const second = await client.chat(id, { messages: [U1] });
    expect([second.status, second.text]).toEqual([503, 'busy']);
    expect((await client.get(id)).records).toEqual([]);
    const other = await client.chat(id, { messages: [{ role: 'user', content: 'a different opening' }] });
    expect(other.status).toBe(200);
    const view = await client.get(id);
    expect(view.records).toHaveLength(1);
    expect((view.records[0]!.request as { messages: unknown }).messages).toEqual([
      { role: 'user', content: 'a different opening' },
    ]);
  });

  it('answers 502 for a transport failure', async () => {
    const dead = await startSessionServer({ backendUrl: 'http://127.0.0.1:9' });
    try {
      const c = createSessionClient(dead.url);
      const answer = await c.chat(await c.create(), { messages: [U1] });
      expect(answer.status).toBe(502);
      expect((answer.json as { error: string }).error).toMatch(/^backend transport error: ConnectError: /);
    } finally {
      await dead.close();
    }
  });

  it('strips routed_experts and indexer_topk from the client copy only, with one server and date header', async () => {
    msw.use(
      http.post(CHAT, () =>
        HttpResponse.json(
          completionBody({ content: 'x' }, { meta: { routed_experts: 'AAA=', indexer_topk: 'BBB=' } }),
        ),
      ),
    );
    const id = await olderClient.create();
    const answer = await olderClient.chat(id, { messages: [U1] });
    const meta = (answer.json as Json).choices[0].meta_info;
    expect(meta).not.toHaveProperty('routed_experts');
    expect(meta).not.toHaveProperty('indexer_topk');
    expect(meta.output_token_logprobs).toHaveLength(2);
    expect(answer.headers.get('server')).not.toContain(',');
    expect(answer.headers.get('date')).not.toBeNull();
    const record = (await olderClient.get(id)).records[0] as Json;
    expect(record.response.choices[0].meta_info).toMatchObject({
      routed_experts: 'AAA=',
      indexer_topk: 'BBB=',
    });
    expect(Object.keys(record)).toEqual([
      'timestamp',
      'request_timestamp',
      'method',
      'path',
      'request',
      'response',
      'status_code',
    ]);
  });
});

describe('fake streaming', () => {
  const toolCall = { id: 'c1', type: 'function', function: { name: 'run', arguments: '{"cmd": "ls"}' } };

  it('answers one chunk and [DONE] from a non-streaming backend call', async () => {
    const seen = captureBackend(() =>
      HttpResponse.json(
        completionBody(
          { content: 'calling', reasoning_content: 'think', tool_calls: [toolCall] },
          { finish: 'tool_calls' },
        ),
      ),
    );
    const id = await client.create();
    const answer = await client.chat(id, {
      messages: [U1],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(answer.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(answer.headers.get('cache-control')).toBe('no-cache');
    const events = answer.text.split('\n\n').filter(Boolean);
    expect(events).toHaveLength(2);
    expect(events[1]).toBe('data: [DONE]');
    const chunk = JSON.parse(events[0]!.slice('data: '.length));
    expect(chunk.object).toBe('chat.completion.chunk');
    expect(chunk.choices[0]).toEqual({
      index: 0,
      delta: {
        role: 'assistant',
        content: 'calling',
        reasoning_content: 'think',
        tool_calls: [{ ...toolCall, index: 0 }],
      },
      finish_reason: 'tool_calls',
    });
    expect(chunk.usage).toMatchObject({ completion_tokens: expect.any(Number) });
    expect(chunk).not.toHaveProperty('choices.0.meta_info');
    const sent = JSON.parse(seen[0]!.text);
    expect(sent).not.toHaveProperty('stream');
    expect(sent).not.toHaveProperty('stream_options');
    // The message rebuilt from the stream (no tool-call index) still matches strictly: the next turn extends.
    const rebuilt = {
      role: 'assistant',
      content: 'calling',
      reasoning_content: 'think',
      tool_calls: [toolCall],
    };
    await client.chat(id, { messages: [U1, rebuilt, { role: 'tool', content: 'done' }] });
    expect((await client.get(id)).metadata.tree.nodes.map((n) => n.parent)).toEqual([null, 0]);
  });

  it('keeps a backend error in stream mode as JSON', async () => {
    msw.use(http.post(CHAT, () => HttpResponse.json({ error: 'bad' }, { status: 400 })));
    const answer = await client.chat(await client.create(), { messages: [U1], stream: true });
    expect([answer.status, answer.text, answer.headers.get('content-type')]).toEqual([
      400,
      '{"error":"bad"}',
      'application/json',
    ]);
  });
});

describe('concurrency', () => {
  it('lets same-session requests overlap at the backend and commits them as siblings', async () => {
    let release!: () => void;
    const bothArrived = new Promise<void>((r) => {
      release = r;
    });
    let arrived = 0;
    const barrier = http.post(CHAT, async () => {
      arrived += 1;
      const n = arrived;
      if (n === 2) release();
      await bothArrived;
      return HttpResponse.json(completionBody({ content: `reply ${n}` }, { id: `cmpl-${n}` }));
    });
    const id = await client.create();
    const a1 = replyMessage((await client.chat(id, { messages: [U1] })).json);
    msw.use(barrier);
    const extend = { messages: [U1, a1, { role: 'tool', content: 't1' }] };
    const [a, b] = await Promise.all([client.chat(id, extend), client.chat(id, extend)]);
    expect([a.status, b.status]).toEqual([200, 200]);
    const tree = (await client.get(id)).metadata.tree;
    expect(tree.nodes.map((n) => n.parent)).toEqual([null, 0, 0]);
    const ids = [a, b].map((r) => (r.json as { id: string }).id).sort();
    expect(ids).toEqual(['cmpl-1', 'cmpl-2']);
    expect(
      tree.nodes
        .slice(1)
        .map((n) => n.response_id)
        .sort(),
    ).toEqual(ids);
  });

  it('lets DELETE finish while a chat is mid-proxy: the chat returns 200 without committing', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let reached!: () => void;
    const atBackend = new Promise<void>((r) => {
      reached = r;
    });
    msw.use(
      http.post(CHAT, async () => {
        reached();
        await gate;
        return HttpResponse.json(completionBody({ content: 'late' }));
      }),
    );
    const id = await client.create();
    const chat = client.chat(id, { messages: [U1] });
    await atBackend;
    const [first, second] = await Promise.all([
      raw('DELETE', `/sessions/${id}`),
      raw('DELETE', `/sessions/${id}`),
    ]);
    expect([first.status, second.status].sort()).toEqual([204, 404]);
    release();
    expect((await chat).status).toBe(200);
    expect((await client.chat(id, { messages: [U1] })).status).toBe(404);
  });

  it('never answers 500 to queued chats racing a delete', async () => {
    const id = await client.create();
    const chats = Array.from({ length: 5 }, () => client.chat(id, { messages: [U1] }));
    const del = raw('DELETE', `/sessions/${id}`);
    const statuses = (await Promise.all(chats)).map((c) => c.status);
    expect((await del).status).toBe(204);
    expect(statuses.every((s) => s === 200 || s === 404)).toBe(true);
  });
  it('survives rapid create/chat/delete cycles', async () => {
    const before = server.sessionCount();
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let k = 0; k < 5; k += 1) {
          const id = await client.create();
          expect((await client.chat(id, { messages: [U1] })).status).toBe(200);
          await client.delete(id);
        }
      }),
    );
    expect(server.sessionCount()).toBe(before);
  });
});

describe('samples route', () => {
  it('wins over the proxy for POST and answers octet-stream no_records for a fresh session', async () => {
    const id = await client.create();
    const answer = await fetch(`${server.url}/sessions/${id}/samples`, { method: 'POST', body: '' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/octet-stream');
    expect((await client.collectSamples(id)).emptyReason).toBe('no_records');
  });

  it('surfaces failures to the typed client as SessionRequestError with status and detail', async () => {
    const error = await client.collectSamples('nonexistent').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SessionRequestError);
    expect(error).toMatchObject({
      status: 404,
      detail: 'session not found: session_id=nonexistent',
      code: 'session.request_failed',
    });
  });

  it('answers a plain 500 for a body that is not a JSON object', async () => {
    const id = await client.create();
    for (const body of ['nope', '[]', 'null']) {
      expect(await raw('POST', `/sessions/${id}/samples`, body)).toMatchObject({
        status: 500,
        text: 'Internal Server Error',
      });
    }
  });

  it('returns the session metadata GET shows, plus the agent', async () => {
    const id = await client.create();
    await client.chat(id, { messages: [U1] });
    const view = await client.get(id);
    const plain = await client.collectSamples(id);
    expect(plain.sessionMetadata).toEqual(view.metadata);
    const withAgent = await client.collectSamples(id, { metadata: { reward: 1, note: 'x' } });
    expect(withAgent.sessionMetadata.agent).toEqual({ reward: 1, note: 'x' });
    expect(withAgent.samples[0]!.reward).toBe(1);
  });

  it("writes the agent's floats as floats and its ints as ints, as Miles' json.dumps does", async () => {
    // Miles parses the body with json.loads and writes the wire meta with json.dumps
    // (radixark/miles@31f1ca96 miles/rollout/session/samples/codec.py encode_samples): 1.0 stays 1.0.
    const id = await client.create();
    await client.chat(id, { messages: [U1] });
    const body = '{"max_seq_len":null,"metadata":{"reward":1.0,"note":"x","steps":2,"score":0.0,"big":1e16}}';
    const response = await fetch(`${server.url}/sessions/${id}/samples`, { method: 'POST', body });
    const tensors = decodeSafetensors(new Uint8Array(await response.arrayBuffer()));
    const meta = Buffer.from(tensors.get('_samples_meta')!.data).toString('utf8');
    const sample = meta.slice(meta.indexOf('"samples":[{'), meta.indexOf('"session_metadata"'));
    expect(sample).toContain('"reward":1.0,"note":"x","steps":2,"score":0.0,"big":1e+16');
    expect(sample).toMatch(/"reward":1\.0,"nulls":/);
    expect(meta).toContain('"agent":{"reward":1.0,"note":"x","steps":2,"score":0.0,"big":1e+16}');
  });
});
