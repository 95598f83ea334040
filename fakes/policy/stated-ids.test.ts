import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DIRECTIVE_HEADER, TRACE_TURN_HEADER } from '../../contracts/policy-headers.ts';
import type { SessionTrace } from '../../contracts/trace.ts';
import { createPolicy } from './handlers.ts';

/**
 * Stated completion ids (docs/policy.md, docs/field-failures.md): a scripted turn's `completion_ids` and
 * the directive's `completion_ids` are emitted as they are, one `[logprob, id]` pair each, whatever the
 * message renders to; without them the ids are the render. Ids written out, not computed.
 */

const stated = [11, 22, 33, 151643];
const trace: SessionTrace = {
  format: 'session-trace/1',
  turns: [
    {
      request: { messages: [] },
      response: {
        message: { role: 'assistant', content: 'ok' },
        finish_reason: 'stop',
        completion_ids: stated,
      },
    },
    {
      request: { messages: [] },
      response: { message: { role: 'assistant', content: 'ok' }, finish_reason: 'stop' },
    },
  ],
};
const policy = createPolicy({ mode: 'script', origin: 'http://stated.test', script: trace });
const server = setupServer(...policy.handlers);
beforeAll(() => server.listen({ onUnhandledFrame: 'error' }));
afterAll(() => server.close());

async function outputIds(headers: Record<string, string>): Promise<number[]> {
  const response = await fetch('http://stated.test/v1/chat/completions', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
  });
  const body = (await response.json()) as {
    choices: Array<{
      meta_info: { output_token_logprobs: Array<[number, number]>; completion_tokens: number };
    }>;
  };
  const meta = body.choices[0]!.meta_info;
  expect(meta.completion_tokens).toBe(meta.output_token_logprobs.length);
  return meta.output_token_logprobs.map((pair) => pair[1]);
}

describe('stated completion ids', () => {
  it("emits a scripted turn's completion_ids as they are", async () => {
    expect(await outputIds({ [TRACE_TURN_HEADER]: '0' })).toEqual(stated);
  });

  it('renders the message when the turn states none, unless the directive states ids', async () => {
    // The toy render of "ok": one word id, then the toy end token (not the stated ids).
    expect(await outputIds({ [TRACE_TURN_HEADER]: '1' })).not.toEqual(stated);
    expect(await outputIds({ [TRACE_TURN_HEADER]: '1' })).toHaveLength(2);
    const directive = JSON.stringify({ completion_ids: [5, 6] });
    expect(await outputIds({ [TRACE_TURN_HEADER]: '1', [DIRECTIVE_HEADER]: directive })).toEqual([5, 6]);
  });

  it('emits an aborted reply without its stop token, as the engine stopped it', async () => {
    // "ok" is one toy word: a finished reply is [word, end], an aborted one [word].
    const finished = await outputIds({ [TRACE_TURN_HEADER]: '1' });
    const abort = JSON.stringify({ finish_reason: 'abort' });
    expect(await outputIds({ [TRACE_TURN_HEADER]: '1', [DIRECTIVE_HEADER]: abort })).toEqual(
      finished.slice(0, 1),
    );
  });

  it('refuses end_token endoftext on the toy family, which has no <|endoftext|>', async () => {
    const response = await fetch('http://stated.test/v1/chat/completions', {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [TRACE_TURN_HEADER]: '1',
        [DIRECTIVE_HEADER]: JSON.stringify({ end_token: 'endoftext' }),
      },
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string }).message).toBe(
      "directive end_token endoftext: the default family's tokenizer has no <|endoftext|>",
    );
  });
});
