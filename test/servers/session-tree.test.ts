import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isHarnessError } from '../../common/errors.ts';
import { milesProfileNamed } from '../../contracts/miles-profile.ts';
import { DIRECTIVE_HEADER } from '../../contracts/policy-headers.ts';
import type { SessionTrace } from '../../contracts/trace.ts';
import type { LeafRef, WireSample } from '../../contracts/wire-sample.ts';
import { startPolicyServer } from '../../fakes/policy/server.ts';
import { createSessionClient, type SessionClient } from '../../fakes/session/client.ts';
import { startSessionServer } from '../../fakes/session/server.ts';
import { SPECIAL } from '../../fakes/tokenizer/toy-tokenizer.ts';
import { replyMessage, startStack } from './support.ts';

// Tree behaviour over real HTTP (Miles' tests/fast/router/test_sessions_v2.py at 31f1ca96), with the
// synthetic policy steered through the session server by x-harness-directive.

let stack: Awaited<ReturnType<typeof startStack>>;
let client: SessionClient;
beforeAll(async () => {
  stack = await startStack();
  client = stack.client;
});
afterAll(() => stack.close());

const U1 = { role: 'user', content: 'task: make the tests pass' };
const T1 = { role: 'tool', content: 'tool says hello' };
const T1_DIFF = { role: 'tool', content: 'tool says something else' };
const T2 = { role: 'tool', content: 'second tool output' };
const directive = (d: object) => ({ headers: { [DIRECTIVE_HEADER]: JSON.stringify(d) } });

/** Runs turns, each extending the previous history by the reply and the given message. */
async function conversation(id: string, follow: Array<Record<string, unknown>>, on: SessionClient = client) {
  const history: Array<Record<string, unknown>> = [U1];
  const replies: Array<Record<string, unknown>> = [];
  const first = await on.chat(id, { messages: history });
  replies.push(replyMessage(first.json));
  for (const next of follow) {
    history.push(replies.at(-1)!, next);
    const answer = await on.chat(id, { messages: [...history] });
    replies.push(replyMessage(answer.json));
  }
  return { history, replies };
}

const lastRequestMessage = (record: Record<string, unknown>) =>
  (record.request as { messages: unknown[] }).messages.at(-1);

describe('rollback pins (the view moves, nothing is deleted)', () => {
  it('pure drop of the last assistant re-attaches at the parent', async () => {
    const id = await client.create();
    const { replies } = await conversation(id, [T1]);
    expect((await client.chat(id, { messages: [U1, replies[0], T1] })).status).toBe(200);
    const view = await client.get(id);
    expect(view.records).toHaveLength(2);
    expect(lastRequestMessage(view.records[1]!)).toEqual(T1);
    expect(view.metadata.tree.nodes.map((n) => n.parent)).toEqual([null, 0, 0]);
  });

  it('a changed tool result branches from the parent', async () => {
    const id = await client.create();
    const { replies } = await conversation(id, [T1]);
    await client.chat(id, { messages: [U1, replies[0], T1_DIFF] });
    const view = await client.get(id);
    expect(view.records).toHaveLength(2);
    expect(lastRequestMessage(view.records[1]!)).toEqual(T1_DIFF);
  });

  it('deep divergence positions at the deep anchor and both leaves emit samples', async () => {
    const id = await client.create();
    const { replies } = await conversation(id, [T1, T2]);
    await client.chat(id, { messages: [U1, replies[0], T1_DIFF] });
    const view = await client.get(id);
    expect(view.records).toHaveLength(2);
    expect(view.metadata.tree.nodes).toHaveLength(4);
    expect(view.metadata.tree.leaves.map((l) => l.path_node_ids.length).sort()).toEqual([2, 3]);
    const reply = await client.collectSamples(id);
    expect(reply.samples).toHaveLength(2);
    for (const s of reply.samples) {
      const lifecycle = s.metadata.lifecycle as Array<{ req_ts: number | null }>;
      expect(lifecycle.every((seg) => typeof seg.req_ts === 'number')).toBe(true);
    }
  });

  it('a different opening opens a second root, and both roots emit samples', async () => {
    const id = await client.create();
    await client.chat(id, { messages: [U1] });
    await client.chat(id, { messages: [{ role: 'user', content: 'another opening' }] });
    const view = await client.get(id);
    expect(view.records).toHaveLength(1);
    expect(view.metadata.tree.nodes.map((n) => n.parent)).toEqual([null, null]);
    expect((await client.collectSamples(id)).samples).toHaveLength(2);
  });

  it('a degenerate resend (no new message) adds a child with only the assistant', async () => {
    const id = await client.create();
    const { replies } = await conversation(id, []);
    expect((await client.chat(id, { messages: [U1, replies[0]] })).status).toBe(200);
    expect((await client.get(id)).records).toHaveLength(2);
  });

  it('a disallowed appended role is a 400, after the view has moved', async () => {
    // The moved view is 31f1ca96's active leaf (GET shows its path); 4d412b5a's GET shows the last
    // committed path instead (miles-profile-4d412b5a.test.ts), so this case runs under 31f1ca96.
    const server = await startSessionServer({
      backendUrl: stack.policy.url,
      milesProfile: milesProfileNamed('31f1ca96')!,
    });
    const older = createSessionClient(server.url);
    try {
      const id = await older.create();
      const { replies } = await conversation(id, [T1], older);
      const answer = await older.chat(id, {
        messages: [U1, replies[0], { role: 'developer', content: 'x' }],
      });
      expect(answer.status).toBe(400);
      const error = (answer.json as { error: string }).error;
      expect(error).toBe(
        "appended message role='developer' not allowed (allowed=['assistant', 'system', 'tool', 'user']); the selected TITO fixed template does not support appending this role",
      );
      expect((await older.get(id)).records).toHaveLength(1);
      const missing = await older.chat(id, { messages: [U1, replies[0], { content: 'no role' }] });
      expect((missing.json as { error: string }).error).toMatch(/^appended message role=None not allowed/);
    } finally {
      await server.close();
    }
  });

  it('samples after a retry: one sample with a consistent mask', async () => {
    const id = await client.create();
    const { replies } = await conversation(id, [T1]);
    await client.chat(id, { messages: [U1, replies[0], T1] });
    const reply = await client.collectSamples(id);
    expect(reply.emptyReason).toBeNull();
    expect(reply.samples).toHaveLength(1);
    const [s] = reply.samples;
    expect(s!.response_length).toBeGreaterThan(0);
    expect(s!.loss_mask).toHaveLength(s!.response_length);
  });

  it('a few-shot prompt assistant is never an anchor', async () => {
    const id = await client.create();
    const fewShot = [
      U1,
      { role: 'assistant', content: 'example answer' },
      { role: 'user', content: 'now you' },
    ];
    const first = await client.chat(id, { messages: fewShot });
    const a = replyMessage(first.json);
    await client.chat(id, { messages: [...fewShot, a, T1] });
    await client.chat(id, { messages: [...fewShot, a, T1_DIFF] });
    expect((await client.get(id)).records).toHaveLength(2);
  });

  it('a failed first turn records nothing and the next opening is accepted', async () => {
    const id = await client.create();
    const failed = await client.chat(
      id,
      { messages: [U1] },
      directive({ error: { status: 400, message: 'context too long' } }),
    );
    expect(failed.status).toBe(400);
    expect((await client.get(id)).records).toEqual([]);
    expect((await client.collectSamples(id)).emptyReason).toBe('no_records');
    const other = [{ role: 'user', content: 'different' }];
    expect((await client.chat(id, { messages: other })).status).toBe(200);
    expect((await client.get(id)).records).toHaveLength(1);
  });
});

describe('truncation', () => {
  it('refuses to extend a length-truncated generation (409, state unchanged), and a fresh opening works', async () => {
    const id = await client.create();
    const first = await client.chat(id, { messages: [U1] }, directive({ finish_reason: 'length' }));
    const cut = replyMessage(first.json);
    const before = await client.get(id);
    for (const messages of [
      [U1, cut, T1],
      [U1, cut],
    ]) {
      const answer = await client.chat(id, { messages });
      expect(answer.status).toBe(409);
      expect((answer.json as { error: string }).error).toContain('truncated generation cannot be extended');
    }
    expect(await client.get(id)).toEqual(before);
    expect((await client.chat(id, { messages: [{ role: 'user', content: 'fresh' }] })).status).toBe(200);
    expect((await client.chat(id, { messages: [U1] })).status).toBe(200);
    const view = await client.get(id);
    expect(view.metadata.tree.nodes.map((n) => [n.parent, n.truncated])).toEqual([
      [null, true],
      [null, false],
      [null, false],
    ]);
  });
});

describe('compaction shapes', () => {
  it('a carried assistant summary becomes part of a child delta, never a new root', async () => {
    const id = await client.create();
    const a1 = replyMessage((await client.chat(id, { messages: [U1] })).json);
    const carried = { role: 'assistant', content: 'compacted summary of the work so far' };
    const answer = await client.chat(id, { messages: [U1, a1, T1, carried, T2] });
    expect(answer.status).toBe(200);
    const view = await client.get(id);
    expect(view.metadata.tree.nodes.map((n) => n.parent)).toEqual([null, 0]);
    // The carried assistant sits in the prompt: only generated completions are trained.
    const [sample] = (await client.collectSamples(id)).samples;
    const trained = sample!.loss_mask!.filter((b) => b === 1).length;
    const completions = view.metadata.tree.nodes.map((n) => n.completion_span[1] - n.completion_span[0]);
    expect(trained).toBe(completions.reduce((a, b) => a + b, 0));
  });

  it('a fresh prompt after summarization opens a second root; both samples train their own completions', async () => {
    const id = await client.create();
    const { replies } = await conversation(id, [T1, { role: 'user', content: 'summarize' }]);
    const summary = replies.at(-1)!.content as string;
    await client.chat(id, { messages: [{ role: 'user', content: `task and ${summary}` }] });
    const reply = await client.collectSamples(id, { metadata: { reward: 1, note: 'x' } });
    const leaves = reply.samples.map((s) => (s.metadata.leaf as LeafRef).path_node_ids);
    expect(leaves).toEqual([[0, 1, 2], [3]]);
    expect(reply.samples.map((s) => [s.reward, s.metadata.note])).toEqual([
      [1, 'x'],
      [1, 'x'],
    ]);
  });
});

describe('node cap', () => {
  it('answers a plain 500 past the cap, commits nothing, and keeps the view at the attach point', async () => {
    const capped = await startSessionServer({ backendUrl: stack.policy.url, maxNodes: 2 });
    try {
      const c = createSessionClient(capped.url);
      const id = await c.create();
      const a1 = replyMessage((await c.chat(id, { messages: [U1] })).json);
      const a2 = replyMessage((await c.chat(id, { messages: [U1, a1, T1] })).json);
      const third = await c.chat(id, { messages: [U1, a1, T1, a2, T2] });
      expect([third.status, third.text, third.headers.get('content-type')]).toEqual([
        500,
        'Internal Server Error',
        'text/plain; charset=utf-8',
      ]);
      const view = await c.get(id);
      expect(view.metadata.tree.nodes).toHaveLength(2);
      expect(view.records).toHaveLength(2);
    } finally {
      await capped.close();
    }
  });
});

describe('sample hooks over HTTP', () => {
  it('answers 422 text/plain naming the hooks when the picker raises', async () => {
    const policyBug = () => {
      throw new Error('policy bug');
    };
    const server = await startSessionServer({ backendUrl: stack.policy.url, picker: policyBug });
    try {
      const c = createSessionClient(server.url);
      const id = await c.create();
      await c.chat(id, { messages: [U1] });
      const answer = await fetch(`${server.url}/sessions/${id}/samples`, { method: 'POST', body: '{}' });
      expect(answer.status).toBe(422);
      expect(answer.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(await answer.text()).toBe(
        'session sample hook failed (picker=policyBug, postprocessor=miles.rollout.session.v2.postprocessor_hub.default_postprocess): policy bug',
      );
      expect((await c.health()).status).toBe('ok');
    } finally {
      await server.close();
    }
  });

  it('refuses an async hook at start', async () => {
    const error = await startSessionServer({
      backendUrl: stack.policy.url,
      picker: (async (s: WireSample[]) => s) as never,
    }).catch((e: unknown) => e);
    expect(isHarnessError(error) && error.code).toBe('config.session_async_hook');
  });

  it('a keep-all picker emits both concurrent siblings', async () => {
    const server = await startSessionServer({ backendUrl: stack.policy.url, picker: (s) => s });
    try {
      const c = createSessionClient(server.url);
      const id = await c.create();
      const a1 = replyMessage((await c.chat(id, { messages: [U1] })).json);
      await Promise.all([c.chat(id, { messages: [U1, a1, T1] }), c.chat(id, { messages: [U1, a1, T1] })]);
      const reply = await c.collectSamples(id);
      expect(reply.samples.map((s) => (s.metadata.leaf as LeafRef).node_id).sort()).toEqual([1, 2]);
    } finally {
      await server.close();
    }
  });
});

describe('glm47 junction', () => {
  it('rewrites the stop token at the junction and trims it from the non-last turn', async () => {
    const toolCall = { id: 'c1', type: 'function', function: { name: 'run', arguments: '{"cmd": "ls"}' } };
    const reply1 = { role: 'assistant', content: 'calling a tool', tool_calls: [toolCall] };
    const reply2 = { role: 'assistant', content: 'all done' };
    const trace: SessionTrace = {
      format: 'session-trace/1',
      turns: [
        { request: { messages: [U1] }, response: { message: reply1, finish_reason: 'tool_calls' } },
        {
          request: { messages: [U1, reply1, { role: 'user', content: 'go on' }] },
          response: { message: reply2, finish_reason: 'stop' },
        },
      ],
    };
    const policy = await startPolicyServer({ mode: 'script', script: trace, tokenizer: 'glm47' });
    const server = await startSessionServer({ backendUrl: policy.url, titoModel: 'glm47' });
    try {
      const c = createSessionClient(server.url);
      const id = await c.create();
      for (const turn of trace.turns) expect((await c.chat(id, turn.request)).status).toBe(200);
      const view = await c.get(id);
      expect(view.metadata.max_trim_tokens).toBe(1);
      const [n0, n1] = view.metadata.tree.nodes;
      const snapshot = view.metadata.accumulated_token_ids;
      // Turn 1 stopped on <|observation|>; the user message that follows opens with <|user|> in its place.
      const firstResponse = view.records[0]!.response as {
        choices: Array<{ meta_info: { output_token_logprobs: Array<[number, number]> } }>;
      };
      expect(firstResponse.choices[0]!.meta_info.output_token_logprobs.at(-1)![1]).toBe(
        SPECIAL.glmObservation,
      );
      expect(snapshot[n0!.completion_span[1] - 1]).toBe(SPECIAL.glmUser);
      expect(snapshot.at(-1)).toBe(SPECIAL.glmUser);
      const [sample] = (await c.collectSamples(id)).samples;
      expect(sample!.tokens).toEqual(snapshot);
      const rs = sample!.tokens.length - sample!.response_length;
      const trainedAbs = sample!.loss_mask!.flatMap((b, k) => (b === 1 ? [k + rs] : []));
      const span0 = Array.from(
        { length: n0!.completion_span[1] - 1 - n0!.completion_span[0] },
        (_, k) => n0!.completion_span[0] + k,
      );
      const span1 = Array.from(
        { length: n1!.completion_span[1] - n1!.completion_span[0] },
        (_, k) => n1!.completion_span[0] + k,
      );
      expect(trainedAbs).toEqual([...span0, ...span1]);
    } finally {
      await server.close();
      await policy.close();
    }
  });
});
