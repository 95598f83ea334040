import { Agent } from 'node:http';
import { crc32 } from 'node:zlib';
import { readBody } from '../../common/http/body.ts';
import { startHttpServer } from '../../common/http/server.ts';
import { buildChatCompletion } from '../../fakes/policy/completion.ts';
import { syntheticReply } from '../../fakes/policy/synthetic.ts';
import { titoFamily } from '../../fakes/tokenizer/tito.ts';
import { postJson } from './post-json.ts';
import { retryOnReset } from './reset-retry.ts';

type Message = Record<string, unknown>;

/**
 * The servers the fake session server is measured against (chat-bench.ts, and the realistic step in
 * realistic-probe.ts), all bare `node:http` on loopback.
 */

/**
 * The assistant message every baseline answers: a reply of the fake policy's own generator at its
 * default length (fakes/policy/answer.ts: 12 words, Terminus-2 JSON), so the history a client re-sends
 * grows by the same bytes per turn against every server (the issue's "same body sizes": a canned
 * `ls -la` left the baselines' bodies half the fake's by turn 50).
 */
const CANNED_MESSAGE = {
  role: 'assistant',
  // The seed is the CRC-32 of the prompt ids' int32 bytes (fakes/policy/fast/prompt-hashes.ts); any prompt will do.
  content: syntheticReply(
    crc32(Buffer.from(Int32Array.from([1, 2, 3]).buffer)),
    { completionWords: 12, reasoningWords: 0, format: 'json' },
    null,
  ).content,
  reasoning_content: null,
  tool_calls: null,
};

function cannedCompletion(completionIds: number[]): Buffer {
  return Buffer.from(
    JSON.stringify(
      buildChatCompletion({
        id: 'chatcmpl-canned',
        model: 'canned',
        created: 0,
        message: CANNED_MESSAGE,
        finishReason: 'stop',
        promptTokens: 10,
        completionIds,
        weightVersion: 'default',
        latency: 0,
      }),
    ),
  );
}

/**
 * The baselines: (a) one hop, a canned completion; (b) a two-hop proxy that passes the bytes through to
 * a backend answering a completion the size of the fake policy's (meta_info with per-token log-probs);
 * (c) the same two hops, but each hop parses and writes JSON natively, the proxy adding `input_ids`
 * (one id per word, as the session server does) and dropping `meta_info` on the way back.
 */
/** The body of a 200 reply to `postJson`; a baseline's backend never answers anything else. */
async function postJsonBytes(agent: Agent, url: string, body: Buffer | string): Promise<Buffer> {
  const reply = await postJson(agent, url, body);
  if (reply.status !== 200) throw new Error(`baseline backend answered ${reply.status}`);
  return reply.body;
}

/** The ids the fake policy would send with the canned message (its completion, end token included). */
const sizedCompletion = () => cannedCompletion(titoFamily('default').completionIds(CANNED_MESSAGE));

/** (c)'s backend: parses the body, answers the sized completion with the prompt's length in `usage`. */
export function startJsonBackend() {
  const sized = sizedCompletion();
  return startHttpServer(async (req, res) => {
    const body = JSON.parse((await readBody(req)).toString('utf8')) as { input_ids: number[] };
    const reply = JSON.parse(sized.toString('utf8')) as { usage: Record<string, number> };
    reply.usage.prompt_tokens = body.input_ids.length;
    const text = Buffer.from(JSON.stringify(reply));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(text.length) });
    res.end(text);
  });
}

/**
 * (c)'s proxy: parses the client's body, adds `input_ids` (one id per word, as the session server
 * does), posts it to `backendUrl`, and answers the backend's reply without `meta_info`.
 */
export function startJsonProxy(agent: Agent, backendUrl: string) {
  return startHttpServer(async (req, res) => {
    const body = JSON.parse((await readBody(req)).toString('utf8')) as {
      messages: Array<Record<string, unknown>>;
    };
    const ids: number[] = [];
    for (const m of body.messages)
      for (const w of String(m.content ?? '').split(' ')) ids.push(w.length + ids.length);
    const forwarded = JSON.stringify({ ...body, input_ids: ids, logprobs: true });
    // A keep-alive socket the backend is closing can be picked for the hop (a full benchmark run once
    // died of it): sent again, as proxies do and as the fake session server's client does.
    const upstream = await retryOnReset(() =>
      postJsonBytes(agent, `${backendUrl}/v1/chat/completions`, forwarded),
    );
    const reply = JSON.parse(upstream.toString('utf8')) as { choices: Array<Record<string, unknown>> };
    for (const c of reply.choices) delete c.meta_info;
    const text = Buffer.from(JSON.stringify(reply));
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(text.length) });
    res.end(text);
  });
}

export async function startBaselines() {
  const agent = new Agent({ keepAlive: true, maxSockets: 1024 });
  const canned = cannedCompletion([1, 2, 3]);
  const sized = sizedCompletion();
  const bare = await startHttpServer(async (req, res) => {
    await readBody(req);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(canned.length) });
    res.end(canned);
  });
  const backend = await startHttpServer(async (req, res) => {
    await readBody(req);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(sized.length) });
    res.end(sized);
  });
  const jsonBackend = await startJsonBackend();
  const proxy = await startHttpServer(async (req, res) => {
    const forwarded = await readBody(req);
    const text = await retryOnReset(() =>
      postJsonBytes(agent, `${backend.url}/v1/chat/completions`, forwarded),
    );
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(text.length) });
    res.end(text);
  });
  const jsonProxy = await startJsonProxy(agent, jsonBackend.url);
  return {
    bareUrl: bare.url,
    twoHopUrl: proxy.url,
    twoHopJsonUrl: jsonProxy.url,
    close: async () => {
      for (const server of [bare, backend, jsonBackend, proxy, jsonProxy]) await server.close();
      agent.destroy();
    },
  };
}

/** One chat call to a baseline: the history posted as `{messages}`, the reply's assistant message back. */
export async function postBaselineChat(url: string, messages: readonly Message[]): Promise<Message> {
  const response = await retryOnReset(() =>
    fetch(`${url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ messages }),
    }),
  );
  if (response.status !== 200) throw new Error(`baseline answered ${response.status}`);
  const json = (await response.json()) as { choices: Array<{ message: Message }> };
  return json.choices[0]?.message as Message;
}
