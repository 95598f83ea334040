import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJson } from '../../common/python-json/loads.ts';
import { milesProfileNamed } from '../../contracts/miles-profile.ts';
import { DIRECTIVE_HEADER } from '../../contracts/policy-headers.ts';
import type { LeafRef } from '../../contracts/wire-sample.ts';
import { createSessionClient, type SessionClient } from '../../fakes/session/client.ts';
import { startSessionServer } from '../../fakes/session/server.ts';
import { completionBody, replyMessage, startStack } from './support.ts';

// The switches of profile 4d412b5a over real HTTP. Expectations are read off the newer Miles files
// (sii-avalanche/miles@4d412b5a, paths under miles/rollout/session/ unless given whole), cited per test;
// each is contrasted with 31f1ca96 where the two differ.

const NEWER = milesProfileNamed('4d412b5a')!;
const OLDER = milesProfileNamed('31f1ca96')!;
const U1 = { role: 'user', content: 'task: make the tests pass' };
const U1_OTHER = { role: 'user', content: 'task: a different first prompt' };
const T1 = { role: 'tool', content: 'tool says hello' };
const T1_DIFF = { role: 'tool', content: 'tool says something else' };
const directive = (d: object) => ({ headers: { [DIRECTIVE_HEADER]: JSON.stringify(d) } });
const leafIds = (samples: ReadonlyArray<{ metadata: Record<string, unknown> }>) =>
  samples.map((s) => (s.metadata.leaf as LeafRef).node_id);

let newer: Awaited<ReturnType<typeof startStack>>;
let older: Awaited<ReturnType<typeof startStack>>;
let rolledBack: Awaited<ReturnType<typeof startStack>>;
beforeAll(async () => {
  newer = await startStack({ milesProfile: NEWER });
  older = await startStack({ milesProfile: OLDER });
  rolledBack = await startStack({
    milesProfile: NEWER,
    pickerPath: 'miles.rollout.session.v2.picker_hub.drop_rolled_back_leaves',
  });
});
afterAll(async () => {
  await newer.close();
  await older.close();
  await rolledBack.close();
});

/** U1 → A1, then [U1, A1, tool] → A2; returns A1. */
async function twoTurns(client: SessionClient, id: string, tool = T1) {
  const a1 = replyMessage((await client.chat(id, { messages: [U1] })).json);
  expect((await client.chat(id, { messages: [U1, a1, tool] })).status).toBe(200);
  return a1;
}

describe('defaultPicker (v2/picker_hub/drop_same_prompt_retries.py, drop_rolled_back_leaves.py)', () => {
  it('a later sibling that sent a different request is a new branch: both leaves are samples', async () => {
    // drop_same_prompt_retries: "a later sibling with a different request is a new branch, so both leaves stay samples".
    for (const [stack, expected] of [
      [newer, [2, 1]],
      [older, [2]],
      [rolledBack, [2]],
    ] as const) {
      const id = await stack.client.create();
      const a1 = await twoTurns(stack.client, id, T1);
      await stack.client.chat(id, { messages: [U1, a1, T1_DIFF] });
      expect(leafIds((await stack.client.collectSamples(id)).samples)).toEqual(expected);
    }
  });

  it('an identical re-send supersedes the earlier leaf', async () => {
    // drop_rolled_back_leaves: with sibling_prompt_must_match, a later sibling with the same prompt tokens trims it.
    const id = await newer.client.create();
    const a1 = await twoTurns(newer.client, id, T1);
    await newer.client.chat(id, { messages: [U1, a1, T1] });
    expect(leafIds((await newer.client.collectSamples(id)).samples)).toEqual([2]);
  });

  it('a re-sent first turn replaces the earlier root; a root with another prompt stays', async () => {
    // drop_rolled_back_leaves: "Roots are siblings when their prompt tokens match: a re-sent first turn opens a new root".
    const id = await newer.client.create();
    await newer.client.chat(id, { messages: [U1] });
    await newer.client.chat(id, { messages: [U1] });
    await newer.client.chat(id, { messages: [U1_OTHER] });
    expect(leafIds((await newer.client.collectSamples(id)).samples)).toEqual([2, 1]);
  });

  it('an unknown picker path is refused at start, naming the known ones', async () => {
    await expect(
      startSessionServer({ backendUrl: 'http://127.0.0.1:9', pickerPath: 'my.picker' }),
    ).rejects.toMatchObject({ code: 'config.session_picker_path' });
  });
});

describe('chatReplyStripsMetaInfo (core.py _client_response_body)', () => {
  it('the reply has no meta_info, and logprobs only when the client asked; the record keeps both', async () => {
    const id = await newer.client.create();
    const plain = (await newer.client.chat(id, { messages: [U1] })).json as {
      choices: Array<Record<string, unknown>>;
    };
    expect(Object.keys(plain.choices[0]!)).not.toContain('meta_info');
    expect(Object.keys(plain.choices[0]!)).not.toContain('logprobs');
    const asked = (await newer.client.chat(id, { messages: [U1_OTHER], logprobs: true })).json as {
      choices: Array<Record<string, unknown>>;
    };
    expect(Object.keys(asked.choices[0]!)).toContain('logprobs');
    expect(Object.keys(asked.choices[0]!)).not.toContain('meta_info');
    const record = (await newer.client.get(id)).records[0] as { response: { choices: object[] } };
    expect(Object.keys(record.response.choices[0]!)).toContain('meta_info');
    const oldId = await older.client.create();
    const oldReply = (await older.client.chat(oldId, { messages: [U1] })).json as {
      choices: Array<Record<string, unknown>>;
    };
    expect(Object.keys(oldReply.choices[0]!)).toContain('meta_info');
  });
});

/** A backend that keeps each forwarded body's bytes and answers a plain completion. */
async function recordingBackend() {
  const bodies: string[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString('utf8'));
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(completionBody({ content: 'done' })));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, bodies, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

describe('forwardedRequestDefaults (request_args.py resolve_request_args_by_config; tito_tokenizer/base.py)', () => {
  it('forwards and records the resolved fields in their order, false/{}/null when unset', async () => {
    const backend = await recordingBackend();
    for (const [profile, keys] of [
      [
        NEWER,
        [
          'model',
          'messages',
          'logprobs',
          'return_meta_info',
          'no_stop_trim',
          'return_routed_experts',
          'return_indexer_topk',
          'chat_template_kwargs',
          'tools',
          'input_ids',
        ],
      ],
      [OLDER, ['model', 'messages', 'logprobs', 'return_meta_info', 'no_stop_trim', 'input_ids']],
    ] as const) {
      const server = await startSessionServer({ backendUrl: backend.url, milesProfile: profile });
      const client = createSessionClient(server.url);
      const id = await client.create();
      expect((await client.chat(id, { model: 'm', messages: [U1], stream: false })).status).toBe(200);
      const sent = parseJson(backend.bodies.at(-1)!) as Record<string, unknown>;
      expect(Object.keys(sent)).toEqual(keys);
      if (profile === NEWER)
        expect(sent).toMatchObject({
          return_routed_experts: false,
          return_indexer_topk: false,
          chat_template_kwargs: {},
          tools: null,
        });
      const record = (await client.get(id)).records[0] as { request: object };
      expect(Object.keys(record.request)).toEqual(keys);
      await server.close();
    }
    await backend.close();
  });

  it('refuses what the server owns (input_ids, logprob_start_len, tools inside chat_template_kwargs)', async () => {
    const id = await newer.client.create();
    const refused = async (body: object) => (await newer.client.chat(id, { messages: [U1], ...body })).json;
    expect(await refused({ input_ids: [1] })).toEqual({
      error: 'input_ids=[1] is not accepted: TITO token ids are rendered by the session server',
    });
    expect(await refused({ logprob_start_len: 0 })).toEqual({
      error: 'logprob_start_len=0 is not accepted: not supported on the session chat path',
    });
    expect(await refused({ chat_template_kwargs: { tools: [] } })).toEqual({
      error: 'tools belongs at the top level of the request, not in chat_template_kwargs',
    });
  });
});

describe('refuseBoundedSampling (generate_utils/sampling_mask.py validate_sampling_support_request)', () => {
  it('top_p < 1 or top_k > 0 is a 400 and nothing is committed; the recipe (1.0, -1) passes', async () => {
    const bounded = { error: 'bounded training-request sampling requires bounded rollout sampling' };
    for (const body of [{ top_p: 0.9 }, { top_k: 20 }]) {
      const id = await newer.client.create();
      const answer = await newer.client.chat(id, { messages: [U1], ...body });
      expect([answer.status, answer.json]).toEqual([400, bounded]);
      expect((await newer.client.get(id)).metadata.tree.nodes).toEqual([]);
    }
    const id = await newer.client.create();
    const outOfRange = await newer.client.chat(id, { messages: [U1], top_p: 1.5 });
    expect(outOfRange.json).toEqual({ error: 'training request top_p must be in (0, 1], got 1.5' });
    expect((await newer.client.chat(id, { messages: [U1], top_p: 1.0, top_k: -1 })).status).toBe(200);
    const oldId = await older.client.create();
    expect((await older.client.chat(oldId, { messages: [U1], top_p: 0.9 })).status).toBe(200);
  });
});

describe('upstreamAbortIs503 (core.py extract_completion, errors.py UpstreamGenerationAbortedError)', () => {
  it('an upstream 200 with finish_reason abort is a 503 and nothing is committed', async () => {
    const id = await newer.client.create();
    const answer = await newer.client.chat(id, { messages: [U1] }, directive({ finish_reason: 'abort' }));
    expect([answer.status, answer.text]).toEqual([
      503,
      '{"error":"upstream generation aborted before completion"}',
    ]);
    expect((await newer.client.get(id)).metadata.tree.nodes).toEqual([]);
    const oldId = await older.client.create();
    const oldAnswer = await older.client.chat(
      oldId,
      { messages: [U1] },
      directive({ finish_reason: 'abort' }),
    );
    expect(oldAnswer.status).toBe(200);
  });
});

describe('activeLeaf off (v2/session_state.py SessionStateV2.latest, v2/core.py get_session)', () => {
  it('a request that fails after its attach search leaves GET on the last committed path', async () => {
    for (const [stack, records] of [
      [newer, 2],
      [older, 0],
    ] as const) {
      const id = await stack.client.create();
      await twoTurns(stack.client, id);
      const failed = await stack.client.chat(
        id,
        { messages: [U1_OTHER] },
        directive({ error: { status: 500, message: 'backend down' } }),
      );
      expect(failed.status).toBe(500);
      expect((await stack.client.get(id)).records).toHaveLength(records);
    }
  });
});

describe('turnArgs (request_args.py filter_turn_args; v2/core.py _session_metadata; v2/utils.py)', () => {
  it('GET, the tree nodes and each sample carry the resolved request without input_ids and messages', async () => {
    const id = await newer.client.create();
    await newer.client.chat(id, { messages: [U1], temperature: 0.5 });
    const view = await newer.client.get(id);
    const expected = {
      temperature: 0.5,
      logprobs: true,
      return_meta_info: true,
      no_stop_trim: false,
      return_routed_experts: false,
      return_indexer_topk: false,
      chat_template_kwargs: {},
      tools: null,
    };
    // Key order as Miles writes it: read the raw body (the client's schema reorders keys).
    const raw = parseJson(await (await fetch(`${newer.session.url}/sessions/${id}`)).text()) as {
      metadata: object;
    };
    expect(Object.keys(raw.metadata).slice(-2)).toEqual(['tree', 'turn_args']);
    expect(view.metadata.turn_args).toEqual(expected);
    expect(view.metadata.tree.nodes[0]!.turn_args).toEqual(expected);
    const [sample] = (await newer.client.collectSamples(id)).samples;
    const keys = Object.keys(sample!.metadata);
    expect(keys.slice(keys.indexOf('accumulated_token_ids'), keys.indexOf('leaf') + 1)).toEqual([
      'accumulated_token_ids',
      'turn_args',
      'leaf',
    ]);
    expect(sample!.metadata.turn_args).toEqual(expected);
    const oldId = await older.client.create();
    await older.client.chat(oldId, { messages: [U1] });
    expect(Object.keys((await older.client.get(oldId)).metadata)).not.toContain('turn_args');
  });
});

describe('healthAnthropicField (sessions.py health)', () => {
  it('adds anthropic_intermediate_system_supported after the instance id', async () => {
    const body = parseJson(await (await fetch(`${newer.session.url}/health`)).text()) as Record<
      string,
      unknown
    >;
    expect(Object.keys(body)).toEqual([
      'status',
      'session_server_instance_id',
      'anthropic_intermediate_system_supported',
    ]);
  });
});

describe('validateCreateSession (types.py CreateSessionRequest, sessions.py create_session)', () => {
  const create = (base: string, body: string) =>
    fetch(`${base}/sessions`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });

  it('answers an invalid body 400 with pydantic 2.13 text (checked with pydantic 2.13.4)', async () => {
    const answer = await create(newer.session.url, '{"zz":1,"top_k":"x","aa":2}');
    expect(answer.status).toBe(400);
    expect(parseJson(await answer.text())).toEqual({
      error:
        "3 validation errors for CreateSessionRequest\nzz\n  Extra inputs are not permitted [type=extra_forbidden, input_value=1, input_type=int]\n    For further information visit https://errors.pydantic.dev/2.13/v/extra_forbidden\naa\n  Extra inputs are not permitted [type=extra_forbidden, input_value=2, input_type=int]\n    For further information visit https://errors.pydantic.dev/2.13/v/extra_forbidden\ntop_k\n  Input should be a valid integer [type=int_type, input_value='x', input_type=str]\n    For further information visit https://errors.pydantic.dev/2.13/v/int_type",
    });
    const list = await create(newer.session.url, '[]');
    expect(parseJson(await list.text())).toEqual({
      error:
        '1 validation error for CreateSessionRequest\n  Input should be an object [type=model_type, input_value=[], input_type=list]\n    For further information visit https://errors.pydantic.dev/2.13/v/model_type',
    });
    expect((await create(older.session.url, '[]')).status).toBe(200);
  });

  it("answers a body that is not JSON, or not UTF-8, with pydantic's json_invalid and the bytes' repr", async () => {
    // pydantic 2.13.4 CreateSessionRequest.model_validate_json on these bytes (jiter: not UTF-8 is invalid JSON).
    const invalid = (repr: string) =>
      `1 validation error for CreateSessionRequest\n  Invalid JSON: expected value at line 1 column 1 [type=json_invalid, input_value=${repr}, input_type=bytes]\n    For further information visit https://errors.pydantic.dev/2.13/v/json_invalid`;
    const post = (bytes: number[]) =>
      fetch(`${newer.session.url}/sessions`, { method: 'POST', body: new Uint8Array(bytes) });
    const notUtf8 = await post([0xff]);
    expect([notUtf8.status, parseJson(await notUtf8.text())]).toEqual([400, { error: invalid("b'\\xff'") }]);
    // b'\x00\x01\x7f"\\\''
    const odd = await post([0x00, 0x01, 0x7f, 0x22, 0x5c, 0x27]);
    expect([odd.status, parseJson(await odd.text())]).toEqual([
      400,
      { error: invalid(`b'\\x00\\x01\\x7f"\\\\\\''`) },
    ]);
  });

  it("fills the session's sampling defaults into chats, and refuses a different training temperature", async () => {
    // request_args.py apply_session_sampling_defaults; StrictFloat keeps 1 as the float 1.0.
    const backend = await recordingBackend();
    const server = await startSessionServer({ backendUrl: backend.url, milesProfile: NEWER });
    const { session_id: id } = parseJson(
      await (await create(server.url, '{"temperature": 1, "top_k": -1}')).text(),
    ) as { session_id: string };
    const client = createSessionClient(server.url);
    expect((await client.chat(id, { messages: [U1] })).status).toBe(200);
    expect(backend.bodies.at(-1)).toContain('"temperature": 1.0, "top_k": -1');
    expect((await client.chat(id, { messages: [U1], temperature: 0.7 })).json).toEqual({
      error: 'temperature=0.7 does not match the training session temperature=1.0',
    });
    await server.close();
    await backend.close();
  });
});

describe('refuseToolsChanged (tito_tokenizer/base.py resolve_tools)', () => {
  it('a continued turn with other tools is a 400; omitted tools inherit the recorded ones', async () => {
    const tool = (name: string) => ({ type: 'function', function: { name, parameters: {} } });
    const id = await newer.client.create();
    const first = await newer.client.chat(id, { messages: [U1], tools: [tool('a')] });
    const a1 = replyMessage(first.json);
    const changed = await newer.client.chat(id, { messages: [U1, a1, T1], tools: [tool('b')] });
    expect([changed.status, changed.json]).toEqual([
      400,
      {
        error:
          'tools changed on a continued turn: the turn being continued was rendered with different tools, and this model family renders tools in the prompt prefix',
      },
    ]);
    expect((await newer.client.chat(id, { messages: [U1, a1, T1] })).status).toBe(200);
    const view = await newer.client.get(id);
    expect(view.metadata.turn_args).toMatchObject({ tools: [tool('a')] });
  });
});

describe("samplesWire 'spans' (utils/types.py WeightVersionsPerCall.from_meta_info, samples/codec.py)", () => {
  it('one span list per turn over its prompt + output tokens, and spec_info on every sample', async () => {
    const id = await newer.client.create();
    await twoTurns(newer.client, id);
    const reply = await newer.client.collectSamples(id);
    const nodes = reply.sessionMetadata.tree.nodes;
    const [sample] = reply.samples;
    // No trim in the default family: each call's output is its node's completion span.
    expect(sample!.weight_versions).toEqual(
      nodes.map((n) => [
        { version: expect.anything(), abs_start: n.completion_span[0], abs_end: n.completion_span[1] },
      ]),
    );
    expect(sample!.spec_info).toEqual({
      spec_num_correct_drafts: 0,
      spec_num_proposed_drafts: 0,
      spec_verify_ct: 0,
      completion_tokens: 0,
    });
    const oldId = await older.client.create();
    await twoTurns(older.client, oldId);
    const [oldSample] = (await older.client.collectSamples(oldId)).samples;
    expect(oldSample!.weight_versions.every((v) => typeof v === 'string')).toBe(true);
    expect(oldSample!.spec_info).toBeUndefined();
  });
});

describe('a `messages` that is not a list (session_state.py attach_point_for_request, request_args.py)', () => {
  // Expectations are what each Miles answered to the same bodies in `harness conformance --miles-root` (its
  // raw requests, replay/conformance/raw-requests.ts): the newer Miles positions before it reads
  // chat_template_kwargs, 31f1ca96 after; on an empty tree the walk never touches `messages`.
  const KWARGS = { error: 'chat_template_kwargs must be an object' };
  const MATCHER = { error: 'session message matcher raised an exception' };
  const PLAIN = 'Internal Server Error';
  type Expected = readonly [number, unknown];
  const answer = async (stack: typeof newer, id: string, body: unknown): Promise<Expected> => {
    const r = await stack.client.chat(id, body);
    return [r.status, r.status === 500 && r.text === PLAIN ? PLAIN : r.json];
  };
  const cases: ReadonlyArray<{ body: unknown; tree: boolean; newer: Expected; older: Expected }> = [
    // The shrunk counterexample of the malformed-request property (CI, 2026-12-05).
    {
      body: { messages: '', chat_template_kwargs: 0 },
      tree: false,
      newer: [400, KWARGS],
      older: [400, KWARGS],
    },
    {
      body: { messages: 5, chat_template_kwargs: 0 },
      tree: false,
      newer: [400, KWARGS],
      older: [400, KWARGS],
    },
    { body: { messages: 'ab' }, tree: false, newer: [500, PLAIN], older: [500, PLAIN] },
    { body: { messages: null }, tree: false, newer: [500, PLAIN], older: [500, PLAIN] },
    { body: { messages: 5, chat_template_kwargs: 0 }, tree: true, newer: [500, PLAIN], older: [400, KWARGS] },
    {
      body: { messages: '', chat_template_kwargs: 0 },
      tree: true,
      newer: [400, KWARGS],
      older: [400, KWARGS],
    },
    {
      body: { messages: 'ab', chat_template_kwargs: 0 },
      tree: true,
      newer: [500, MATCHER],
      older: [400, KWARGS],
    },
    { body: { messages: 'ab' }, tree: true, newer: [500, MATCHER], older: [500, MATCHER] },
    { body: { messages: {} }, tree: true, newer: [500, PLAIN], older: [500, PLAIN] },
    { body: { messages: { role: 'user' } }, tree: true, newer: [500, PLAIN], older: [500, PLAIN] },
  ];

  it.each(cases)('$body on a tree: $tree', async (c) => {
    for (const [stack, expected] of [
      [newer, c.newer],
      [older, c.older],
    ] as const) {
      const id = await stack.client.create();
      if (c.tree) await stack.client.chat(id, { messages: [U1] });
      expect(await answer(stack, id, c.body)).toEqual(expected);
    }
  });

  it('an empty object is rendered and sent upstream, then the commit raises: a 500 and no node', async () => {
    // `{}` passes the walk (len 0) and the render, so Miles calls the engine; only the commit's
    // `list({}[0:])` raises. A number raises in the walk, before any call.
    for (const stack of [newer, older]) {
      const id = await stack.client.create();
      await stack.client.chat(id, { messages: [U1] });
      const calls = stack.policy.log.byRoutingKey(id).length;
      expect(await answer(stack, id, { messages: {} })).toEqual([500, PLAIN]);
      expect(stack.policy.log.byRoutingKey(id).length).toBe(calls + 1);
      expect(await answer(stack, id, { messages: 5 })).toEqual([500, PLAIN]);
      expect(stack.policy.log.byRoutingKey(id).length).toBe(calls + 1);
      expect((await stack.client.get(id)).metadata.tree.nodes).toHaveLength(1);
    }
  });

  it('an empty string is an empty conversation: a new root whose delta is the reply alone', async () => {
    for (const stack of [newer, older]) {
      const id = await stack.client.create();
      await stack.client.chat(id, { messages: [U1] });
      expect((await stack.client.chat(id, { messages: '' })).status).toBe(200);
      const nodes = (await stack.client.get(id)).metadata.tree.nodes;
      expect(nodes.map((n) => n.parent)).toEqual([null, null]);
    }
  });
});
