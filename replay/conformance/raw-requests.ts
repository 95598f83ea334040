import { parseJson } from '../../common/python-json/loads.ts';
import { TRACE_ID_HEADER, TRACE_TURN_HEADER } from '../../contracts/policy-headers.ts';
import type { SessionTrace } from '../../contracts/trace.ts';
import type { PolicyEvents } from '../../fakes/policy/events.ts';
import type { Exchange, ExchangeRecord } from './exchanges.ts';

/**
 * Requests outside the traces' happy path, sent to both servers in this order on one fresh session (and
 * on unknown ids): the error classes (docs/session-server.md "Routes"), the route table's 405s and
 * fall-throughs to the raw proxy, and the samples op's refusals. The scripted policy answers what gets
 * proxied.
 */

interface RawRequest {
  readonly step: string;
  readonly method: string;
  /** `{id}` is the fresh session's id. */
  readonly path: string;
  readonly body?: string;
  /** Sent with the scripted policy's headers for `RAW_SCRIPT` turn 0. */
  readonly scripted?: boolean;
}

/** The policy script of the one chat that succeeds (id `RAW_SCRIPT_ID`). */
export const RAW_SCRIPT_ID = 'raw-requests';
export const RAW_SCRIPT: SessionTrace = {
  format: 'session-trace/1',
  turns: [
    {
      request: { messages: [{ role: 'user', content: 'hi' }] },
      response: { message: { role: 'assistant', content: 'hello there' }, finish_reason: 'stop' },
    },
  ],
};

const UNKNOWN = '0123456789abcdef0123456789abcdef';
const USER = '{"messages":[{"role":"user","content":"hi"}]}';

const RAW_REQUESTS: readonly RawRequest[] = [
  { step: 'health', method: 'GET', path: '/health' },
  { step: 'get unknown session', method: 'GET', path: `/sessions/${UNKNOWN}` },
  { step: 'delete unknown session', method: 'DELETE', path: `/sessions/${UNKNOWN}` },
  {
    step: 'chat on unknown session',
    method: 'POST',
    path: `/sessions/${UNKNOWN}/v1/chat/completions`,
    body: USER,
  },
  { step: 'samples on unknown session', method: 'POST', path: `/sessions/${UNKNOWN}/samples`, body: '{}' },
  { step: 'list sessions (405)', method: 'GET', path: '/sessions' },
  { step: 'post to a session (405)', method: 'POST', path: '/sessions/{id}', body: '{}' },
  { step: 'unknown path (404)', method: 'GET', path: '/nope' },
  {
    step: 'malformed JSON',
    method: 'POST',
    path: '/sessions/{id}/v1/chat/completions',
    body: '{"messages": [',
  },
  {
    step: 'chat_template_kwargs not an object',
    method: 'POST',
    path: '/sessions/{id}/v1/chat/completions',
    body: '{"messages":[{"role":"user","content":"hi"}],"chat_template_kwargs":[1]}',
  },
  // A `messages` that is not a list: Python positions it anyway (`len()` and indexing decide whether that
  // raises), so which error wins depends on the tree and on the profile's order of checks.
  {
    step: 'messages a string, kwargs not an object, empty tree',
    method: 'POST',
    path: '/sessions/{id}/v1/chat/completions',
    body: '{"messages":"","chat_template_kwargs":0}',
  },
  {
    step: 'messages a number, kwargs not an object, empty tree',
    method: 'POST',
    path: '/sessions/{id}/v1/chat/completions',
    body: '{"messages":5,"chat_template_kwargs":0}',
  },
  {
    step: 'messages a string, empty tree',
    method: 'POST',
    path: '/sessions/{id}/v1/chat/completions',
    body: '{"messages":"ab"}',
  },
  {
    step: 'messages an object, empty tree',
    method: 'POST',
    path: '/sessions/{id}/v1/chat/completions',
    body: '{"messages":{"role":"user"}}',
  },
  {
    step: 'messages null, empty tree',
    method: 'POST',
    path: '/sessions/{id}/v1/chat/completions',
    body: '{"messages":null}',
  },
  { step: 'samples on an empty session', method: 'POST', path: '/sessions/{id}/samples', body: '' },
  { step: 'samples body not an object', method: 'POST', path: '/sessions/{id}/samples', body: '[]' },
  { step: 'samples body not JSON', method: 'POST', path: '/sessions/{id}/samples', body: 'nope' },
  { step: 'get the empty session', method: 'GET', path: '/sessions/{id}' },
  { step: 'chat', method: 'POST', path: '/sessions/{id}/v1/chat/completions', body: USER, scripted: true },
  {
    step: 'chat with float fields and float tool arguments',
    method: 'POST',
    path: '/sessions/{id}/v1/chat/completions',
    body: '{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"hello there"},{"role":"user","content":"again","tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":{"x":1.0,"y":2}}}]}],"temperature":1.0,"top_p":0.5}',
    scripted: true,
  },
  { step: 'get after float fields', method: 'GET', path: '/sessions/{id}' },
  {
    step: 'messages a number, kwargs not an object, a tree',
    method: 'POST',
    path: '/sessions/{id}/v1/chat/completions',
    body: '{"messages":5,"chat_template_kwargs":0}',
  },
  {
    step: 'messages an empty string, kwargs not an object, a tree',
    method: 'POST',
    path: '/sessions/{id}/v1/chat/completions',
    body: '{"messages":"","chat_template_kwargs":0}',
  },
  {
    step: 'messages a string, kwargs not an object, a tree',
    method: 'POST',
    path: '/sessions/{id}/v1/chat/completions',
    body: '{"messages":"ab","chat_template_kwargs":0}',
  },
  {
    step: 'messages a string, a tree',
    method: 'POST',
    path: '/sessions/{id}/v1/chat/completions',
    body: '{"messages":"ab"}',
  },
  {
    step: 'messages an empty object, kwargs not an object, a tree',
    method: 'POST',
    path: '/sessions/{id}/v1/chat/completions',
    body: '{"messages":{},"chat_template_kwargs":0}',
  },
  {
    step: 'messages an object, a tree',
    method: 'POST',
    path: '/sessions/{id}/v1/chat/completions',
    body: '{"messages":{"role":"user"}}',
  },
  {
    step: 'messages an empty string, a tree: a new root',
    method: 'POST',
    path: '/sessions/{id}/v1/chat/completions',
    body: '{"messages":""}',
    scripted: true,
  },
  {
    step: 'messages an empty object, a tree: answered, then the commit fails',
    method: 'POST',
    path: '/sessions/{id}/v1/chat/completions',
    body: '{"messages":{}}',
    scripted: true,
  },

  {
    step: 'samples with a float as agent metadata (422)',
    method: 'POST',
    path: '/sessions/{id}/samples',
    body: '{"metadata":1.0}',
  },
  {
    step: 'samples with a list as agent metadata (422)',
    method: 'POST',
    path: '/sessions/{id}/samples',
    body: '{"metadata":[1]}',
  },
  {
    step: 'empty body: no messages, a second root',
    method: 'POST',
    path: '/sessions/{id}/v1/chat/completions',
    body: '',
    scripted: true,
  },
  { step: 'get after two roots', method: 'GET', path: '/sessions/{id}' },
  {
    step: 'samples with max_seq_len 3',
    method: 'POST',
    path: '/sessions/{id}/samples',
    body: '{"max_seq_len":3,"metadata":{"reward":0.0}}',
  },
  { step: 'GET samples falls through to the proxy', method: 'GET', path: '/sessions/{id}/samples' },
  {
    step: 'PUT chat falls through to the proxy',
    method: 'PUT',
    path: '/sessions/{id}/v1/chat/completions',
    body: USER,
  },
  { step: 'trailing slash goes to the proxy', method: 'GET', path: '/sessions/{id}/' },
  { step: 'delete', method: 'DELETE', path: '/sessions/{id}' },
  { step: 'delete again', method: 'DELETE', path: '/sessions/{id}' },
  { step: 'chat after delete', method: 'POST', path: '/sessions/{id}/v1/chat/completions', body: USER },
];

/**
 * Sends the raw requests to one server; with the policy's `events`, each exchange also counts the chat
 * requests the server sent upstream while it ran (the policy reports an answer before it sends it, so the
 * count is complete when the server's reply arrives).
 */
export async function recordRawRequests(serverUrl: string, events?: PolicyEvents): Promise<ExchangeRecord> {
  let calls = 0;
  const offs = [
    events?.on('chat:answered', () => {
      calls += 1;
    }),
    events?.on('request:crashed', () => {
      calls += 1;
    }),
  ];
  try {
    return await sendRawRequests(serverUrl, () => calls);
  } finally {
    for (const off of offs) off?.();
  }
}

async function sendRawRequests(serverUrl: string, calls: () => number): Promise<ExchangeRecord> {
  const created = await fetch(`${serverUrl}/sessions`, { method: 'POST' });
  const sessionId = (parseJson(await created.text()) as { session_id: string }).session_id;
  const exchanges: Exchange[] = [];
  for (const request of RAW_REQUESTS) {
    const before = calls();
    const response = await fetch(`${serverUrl}${request.path.replace('{id}', sessionId)}`, {
      method: request.method,
      redirect: 'manual',
      headers: {
        ...(request.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(request.scripted ? { [TRACE_ID_HEADER]: RAW_SCRIPT_ID, [TRACE_TURN_HEADER]: '0' } : {}),
      },
      ...(request.body === undefined ? {} : { body: request.body }),
    });
    exchanges.push({
      step: request.step,
      status: response.status,
      contentType: response.headers.get('content-type') ?? '',
      body: new Uint8Array(await response.arrayBuffer()),
      upstreamCalls: calls() - before,
    });
  }
  return { sessionId, exchanges };
}
