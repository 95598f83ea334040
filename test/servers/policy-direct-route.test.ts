import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningServer } from '../../common/http/server.ts';
import { pythonJsonDumps } from '../../common/python-json/dumps.ts';
import { serveHandlers } from '../../fakes/policy/bridge.ts';
import {
  createPolicy,
  DIRECTIVE_HEADER,
  type PolicyServerHandle,
  startPolicyServer,
} from '../../fakes/policy/index.ts';

/**
 * The policy's chat route on plain node:http against the same policy served through msw (the bridge
 * with no direct route): the same status, headers and bytes, and the same log entries, for good and
 * broken requests alike.
 */

interface Raw {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

function send(
  base: string,
  path: string,
  body: Buffer | string,
  headers: Record<string, string> = {},
): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${base}${path}`, { method: 'POST', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const { date: _date, ...rest } = res.headers;
        resolve({
          status: res.statusCode ?? 0,
          headers: rest,
          body: Buffer.concat(chunks).toString('latin1'),
        });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const CLOCK = () => 1_700_000_000_000;
let direct: PolicyServerHandle;
let viaMsw: RunningServer;
let mswPolicy: ReturnType<typeof createPolicy>;

beforeAll(async () => {
  direct = await startPolicyServer({ mode: 'synthetic', clock: CLOCK, contextLength: 64 });
  mswPolicy = createPolicy({ mode: 'synthetic', clock: CLOCK, contextLength: 64 });
  viaMsw = await serveHandlers(mswPolicy.handlers);
});
afterAll(async () => {
  await direct.close();
  await viaMsw.close();
});

const chat = (extra: Record<string, unknown> = {}) =>
  JSON.stringify({ messages: [{ role: 'user', content: 'list the files é' }], ...extra });

const pyChat = (ids: number[], extra: Record<string, unknown> = {}) =>
  pythonJsonDumps({ messages: [{ role: 'user', content: 'list the files é' }], ...extra, input_ids: ids });

describe('policy chat route on plain node:http', () => {
  it.each([
    ['a chat', '/v1/chat/completions', chat(), {}],
    ['prompt ids', '/v1/chat/completions', chat({ input_ids: [1, 2, 3], max_tokens: 3 }), {}],
    ['a query string', '/v1/chat/completions?x=1', chat(), {}],
    ['a trailing slash (msw decides)', '/v1/chat/completions/', chat(), {}],
    ['a context-length 400', '/v1/chat/completions', chat({ input_ids: Array(80).fill(1) }), {}],
    // The session server's layout (Python's separators, `input_ids` last): the ids read from the bytes.
    [
      'prompt ids as the session server writes them',
      '/v1/chat/completions',
      pyChat([1, -2, 30, 0], { max_tokens: 2 }),
      {},
    ],
    ['a context-length 400 in that layout', '/v1/chat/completions', pyChat(Array(80).fill(7)), {}],
    [
      'ids the bytes reader leaves to JSON.parse',
      '/v1/chat/completions',
      pyChat([1, 2]).replace('[1, 2]', '[01, 2]'),
      {},
    ],
    ['invalid JSON', '/v1/chat/completions', '{"messages": [', {}],
    ['an empty body', '/v1/chat/completions', '', {}],
    [
      'a UTF-8 BOM',
      '/v1/chat/completions',
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(chat())]),
      {},
    ],
    ['invalid UTF-8', '/v1/chat/completions', Buffer.from([0x7b, 0xff, 0x7d]), {}],
    [
      'a directive',
      '/v1/chat/completions',
      chat(),
      { [DIRECTIVE_HEADER]: '{"finish_reason":"length","content":"x"}' },
    ],
    ['a bad directive', '/v1/chat/completions', chat(), { [DIRECTIVE_HEADER]: '{nope' }],
  ])('answers %s exactly as the msw handlers do', async (_name, path, body, headers) => {
    direct.log.clear();
    mswPolicy.log.clear();
    const [a, b] = [await send(direct.url, path, body, headers), await send(viaMsw.url, path, body, headers)];
    expect(a).toEqual(b);
    expect(direct.log.entries().map(({ at: _at, ...e }) => e)).toEqual(
      mswPolicy.log.entries().map(({ at: _at, ...e }) => e),
    );
  });
});
