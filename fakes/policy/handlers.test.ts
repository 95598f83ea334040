import { createHash } from 'node:crypto';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DIRECTIVE_HEADER, TRACE_ID_HEADER, TRACE_TURN_HEADER } from '../../contracts/policy-headers.ts';
import type { SessionTrace } from '../../contracts/trace.ts';
import { titoFamily } from '../tokenizer/tito.ts';
import { SPECIAL } from '../tokenizer/toy-tokenizer.ts';
import { createPolicy } from './handlers.ts';
import { PolicyRequestLog } from './request-log.ts';

const family = titoFamily('default');
const trace: SessionTrace = {
  format: 'session-trace/1',
  turns: [
    {
      request: { messages: [{ role: 'user', content: 'hi' }] },
      response: { message: { role: 'assistant', content: 'first reply' }, finish_reason: 'stop' },
    },
    { request: { messages: [] }, response: { status: 400, body: { error: 'context length exceeded' } } },
    {
      request: { messages: [] },
      response: {
        message: { role: 'assistant', content: 'third', reasoning_content: 'why' },
        finish_reason: 'length',
      },
    },
  ],
};

const synthetic = createPolicy({ mode: 'synthetic', origin: 'http://synthetic.test', contextLength: 40 });
const scripted = createPolicy({
  mode: 'script',
  origin: 'http://script.test',
  scripts: { a: trace, b: trace },
});
const single = createPolicy({
  mode: 'script',
  origin: 'http://single.test',
  script: trace,
  log: new PolicyRequestLog(2),
});
const server = setupServer(...synthetic.handlers, ...scripted.handlers, ...single.handlers);

beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterEach(() => {
  for (const p of [synthetic, scripted, single]) p.log.clear();
});
afterAll(() => server.close());

async function chat(origin: string, body: unknown, headers: Record<string, string> = {}) {
  const response = await fetch(`${origin}/v1/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  // biome-ignore lint/suspicious/noExplicitAny: the tests read deep into completion JSON
  return { status: response.status, json: (await response.json()) as Record<string, any> };
}

const messages = [
  { role: 'system', content: 'you are terminus' },
  { role: 'user', content: 'fix the build' },
];

describe('synthetic policy', () => {
  it('answers a deterministic Terminus-2 JSON reply with consistent token accounting', async () => {
    const a = await chat('http://synthetic.test', { messages });
    const b = await chat('http://synthetic.test', { messages });
    expect(a.status).toBe(200);
    const choice = a.json.choices[0];
    expect(choice.message.content).toBe(b.json.choices[0].message.content);
    expect(Object.keys(JSON.parse(choice.message.content))).toEqual([
      'analysis',
      'plan',
      'commands',
      'task_complete',
    ]);
    expect(choice.finish_reason).toBe('stop');
    const pairs = choice.meta_info.output_token_logprobs as Array<[number, number]>;
    expect(choice.meta_info.completion_tokens).toBe(pairs.length);
    expect(pairs.map((p) => p[1])).toEqual(family.completionIds(choice.message));
    expect(pairs.at(-1)![1]).toBe(SPECIAL.end);
    expect(a.json.usage.prompt_tokens).toBe(family.renderPrompt(messages, {}).length);
    expect(a.json.id).not.toBe(b.json.id);
  });

  it('derives the reply from input_ids when the session server sends them', async () => {
    const a = await chat('http://synthetic.test', { messages, input_ids: [1, 2, 3] });
    const b = await chat('http://synthetic.test', { messages, input_ids: [1, 2, 4] });
    expect(a.json.usage.prompt_tokens).toBe(3);
    expect(a.json.choices[0].message.content).not.toBe(b.json.choices[0].message.content);
  });

  it('obeys x-harness-directive: content, reasoning, finish reason, length, error', async () => {
    const steered = await chat(
      'http://synthetic.test',
      { messages },
      {
        [DIRECTIVE_HEADER]: JSON.stringify({
          content: 'done now',
          reasoning_content: 'sure',
          finish_reason: 'length',
        }),
      },
    );
    expect(steered.json.choices[0].message).toMatchObject({ content: 'done now', reasoning_content: 'sure' });
    expect(steered.json.choices[0].finish_reason).toBe('length');
    const short = await chat(
      'http://synthetic.test',
      { messages },
      { [DIRECTIVE_HEADER]: '{"completion_words": 2}' },
    );
    expect(JSON.parse(short.json.choices[0].message.content).analysis.split(' ')).toHaveLength(1);
    const failed = await chat(
      'http://synthetic.test',
      { messages },
      {
        [DIRECTIVE_HEADER]: JSON.stringify({ error: { status: 503, message: 'engine restarting' } }),
      },
    );
    expect(failed).toEqual({
      status: 503,
      json: {
        object: 'error',
        message: 'engine restarting',
        type: 'ServiceUnavailableError',
        param: null,
        code: 503,
      },
    });
    const bad = await chat(
      'http://synthetic.test',
      { messages },
      { [DIRECTIVE_HEADER]: '{"finish_reason": "done"}' },
    );
    expect(bad.status).toBe(400);
    expect(bad.json.message).toMatch(/^invalid x-harness-directive: finish_reason/);
  });

  it("answers SGLang's context-length 400 above the context length", async () => {
    const tooLong = await chat('http://synthetic.test', {
      messages,
      input_ids: Array.from({ length: 40 }, () => 1000),
    });
    expect(tooLong.status).toBe(400);
    expect(tooLong.json.message).toBe(
      "The input (40 tokens) is longer than the model's context length (40 tokens).",
    );
    const withBudget = await chat('http://synthetic.test', {
      messages,
      input_ids: [1, 2, 3],
      max_tokens: 38,
    });
    expect(withBudget.json.message).toMatch(
      /^Requested token count exceeds the model's maximum context length of 40/,
    );
  });

  it('cuts a reply at max_tokens with finish_reason length and no stop token', async () => {
    const cut = await chat('http://synthetic.test', { messages, max_tokens: 3 });
    const choice = cut.json.choices[0];
    expect(choice.finish_reason).toBe('length');
    expect(choice.meta_info.completion_tokens).toBe(3);
    expect(choice.meta_info.output_token_logprobs.map((p: number[]) => p[1])).not.toContain(SPECIAL.end);
  });

  it('logs every request with its routing key, id and message digests and directive', async () => {
    await chat(
      'http://synthetic.test',
      // Keys out of order: the digest is of the canonical (sorted-key) form.
      { messages: [{ content: 'you are terminus', role: 'system' }, messages[1]], input_ids: [1, 2, 3] },
      { 'x-smg-routing-key': 'sess-1' },
    );
    const [entry] = synthetic.log.entries();
    // Oracles written out by hand: sorted-key JSON text, and the ids as little-endian float64 bytes.
    const sha = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');
    const ids = Buffer.alloc(24);
    for (const [i, id] of [1, 2, 3].entries()) ids.writeDoubleLE(id, i * 8);
    expect(entry).toMatchObject({
      routingKey: 'sess-1',
      messageCount: 2,
      messagesDigest: sha(
        '[{"content":"you are terminus","role":"system"},{"content":"fix the build","role":"user"}]',
      ),
      lastMessageHead: 'fix the build',
      inputIdsLength: 3,
      inputIdsDigest: sha(ids),
      status: 200,
      directive: null,
    });
    expect(entry).not.toHaveProperty('messages');
    expect(entry).not.toHaveProperty('inputIds');
    expect(synthetic.log.byResponseId(entry!.responseId!)).toBe(entry);
  });
});

describe('scripted policy', () => {
  it('answers the turn named by x-harness-trace-turn, non-200s included', async () => {
    const third = await chat(
      'http://script.test',
      { messages },
      { [TRACE_ID_HEADER]: 'a', [TRACE_TURN_HEADER]: '2' },
    );
    expect(third.json.id).toBe('resp-2');
    expect(third.json.choices[0]).toMatchObject({ finish_reason: 'length', message: { content: 'third' } });
    const ids = third.json.choices[0].meta_info.output_token_logprobs.map((p: number[]) => p[1]);
    expect(ids).toEqual(family.completionIds({ content: 'third', reasoning_content: 'why' }));
    const second = await chat(
      'http://script.test',
      { messages },
      { [TRACE_ID_HEADER]: 'b', [TRACE_TURN_HEADER]: '1' },
    );
    expect(second).toEqual({ status: 400, json: { error: 'context length exceeded' } });
  });

  it('refuses ambiguous or exhausted scripts', async () => {
    expect((await chat('http://script.test', { messages })).status).toBe(500);
    const unknown = await chat('http://script.test', { messages }, { [TRACE_ID_HEADER]: 'zzz' });
    expect(unknown.json.message).toMatch(/unknown trace id/);
    const exhausted = await chat('http://single.test', { messages }, { [TRACE_TURN_HEADER]: '3' });
    expect(exhausted.status).toBe(500);
  });

  it('falls back to arrival order and keeps a bounded log', async () => {
    const first = await chat('http://single.test', { messages });
    const second = await chat('http://single.test', { messages });
    const third = await chat(
      'http://single.test',
      { messages },
      { [DIRECTIVE_HEADER]: '{"content": "over"}' },
    );
    expect([first.json.id, second.status, third.json.id]).toEqual(['resp-0', 400, 'resp-2']);
    expect(third.json.choices[0].message.content).toBe('over');
    expect(single.log.size).toBe(2);
    expect(single.log.droppedCount).toBe(1);
    expect(single.log.entries().map((e) => e.traceTurn)).toEqual([1, 2]);
  });
});
