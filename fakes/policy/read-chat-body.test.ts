import { describe, expect, it } from 'vitest';
import { bodyBytesReader } from './compose.ts';
import type { PolicyRequestLike } from './policy-request.ts';
import { readChatBody } from './read-chat-body.ts';

/**
 * Reading a chat body: the session server's layout from the bytes comes back at once (not a promise,
 * so the chat route uses the reused ids before anything else can read that session's next body);
 * everything else is the whole text parsed, and a body that does not parse is refused with the
 * parser's reason.
 */

const LAYOUT = '{"messages": [{"role": "user", "content": "hi"}], "max_tokens": 5, "input_ids": [7, 8, 9]}';

function request(text: string, withBytes: boolean): PolicyRequestLike {
  return {
    method: 'POST',
    url: 'http://policy.test/v1/chat/completions',
    headers: { get: () => null },
    text: async () => text,
    ...(withBytes ? { bodyBytes: () => new Uint8Array(Buffer.from(text)) } : {}),
  };
}

describe('reading a chat body', () => {
  it('reads the session server’s layout from the bytes at once, with the ids apart', () => {
    const read = readChatBody(request(LAYOUT, true), 'sess', { bytesReader: bodyBytesReader(false) });
    expect(read).not.toBeInstanceOf(Promise);
    expect(read).toMatchObject({ ok: true, body: { max_tokens: 5 }, summary: { count: 1, lastHead: 'hi' } });
    if (!(read instanceof Promise) && read.ok) expect([...(read.splitIds ?? [])]).toEqual([7, 8, 9]);
  });

  it('a log that keeps the messages gets them all parsed, ids still apart', () => {
    const read = readChatBody(request(LAYOUT, true), 'sess', { bytesReader: bodyBytesReader(true) });
    expect(read).not.toBeInstanceOf(Promise);
    expect(read).toMatchObject({
      ok: true,
      body: { messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 },
      summary: null,
    });
  });

  it('parses any other body whole, from its text', async () => {
    const reading = { bytesReader: bodyBytesReader(false) };
    const other = '{"input_ids": [1, 2], "messages": []}';
    const fromBytes = readChatBody(request(other, true), 'sess', reading);
    expect(fromBytes).toBeInstanceOf(Promise);
    expect(await fromBytes).toEqual({
      ok: true,
      body: { input_ids: [1, 2], messages: [] },
      splitIds: null,
      summary: null,
    });
    expect(await readChatBody(request(LAYOUT, false), 'sess', reading)).toMatchObject({
      ok: true,
      body: { input_ids: [7, 8, 9] },
      splitIds: null,
    });
  });

  it('refuses a body that does not parse, with the reason', async () => {
    const reading = { bytesReader: bodyBytesReader(false) };
    for (const withBytes of [false, true]) {
      expect(await readChatBody(request('', withBytes), null, reading)).toEqual({
        ok: false,
        problem: 'invalid JSON body: Unexpected end of JSON input',
      });
    }
  });
});
