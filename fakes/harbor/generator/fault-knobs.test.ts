import fc from 'fast-check';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { EMIT_FAULTS } from '../../../contracts/directive.ts';
import { QWEN3_IDS, qwen3Tokenizer } from '../../tokenizer/qwen3-tokenizer.ts';
import type { TitoModel } from '../../tokenizer/tito.ts';
import type { CallEvent } from '../engine/episode-calls.ts';
import { playEpisode } from '../engine/play-episode.ts';
import type { ChatMessage } from '../engine/token-estimate.ts';
import { EpisodeScriptSchema, resolveEpisode } from '../episode-schema.ts';
import { directivePolicy, type RecordedChatRequest } from '../testing/directive-policy.ts';
import { generateTask } from './generate.ts';
import { type GeneratorParams, type GeneratorParamsInput, GeneratorParamsSchema } from './params.ts';

/**
 * One property per fault knob (`params.faults`, docs/field-failures.md "In fuzzing"): at rate 1 the
 * generated episode, played by the engine against the fake policy, shows the catalogue row's fault in the
 * requests it sends and the ids it is answered with; at rate 0 it never does. The predicates read only the
 * wire (messages, finish reasons, Qwen3 ids decoded with the tokenizer file), never the script keys.
 */

const BASE = 'http://session.test/sessions/s1/v1';
const server = setupServer();
beforeAll(() => server.listen({ onUnhandledFrame: 'bypass' }));
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

const RESPONSE_LIMIT = 1024;
/** Short episodes in a large context: nothing compacts and no ending but submission, unless a knob says so. */
const QUIET: GeneratorParamsInput = {
  samples_per_task: 3,
  context_limit: 32_768,
  response_limit: RESPONSE_LIMIT,
  turns: { median: 7, min: 6, max: 9 },
  observation: {
    small: { weight: 1, min: 5, max: 30 },
    medium: { weight: 0, min: 0, max: 0 },
    large: { weight: 0, min: 0, max: 0 },
  },
  reply: { median: 30, sigma: 0.3, max: 80 },
  reasoning_rate: 1,
  retry_rate: 0,
  transient_error_rate: 0,
  crash_rate: 0,
  policy_failure_rate: 0,
  first_turn_failure_rate: 0,
  timeout_rate: 0,
  truncation_rate: 0,
};

type Knob = keyof GeneratorParams['faults'];

/** One HTTP request as the agent's fetch saw it: sent at `start`, answered at `end` (one clock for both). */
interface Span {
  readonly messages: ChatMessage[];
  readonly start: number;
  end: number;
  status: number;
}

interface Played {
  readonly requests: RecordedChatRequest[];
  readonly events: CallEvent[];
  readonly spans: Span[];
}

/** A fetch that records when each request leaves and when its answer arrives. */
function timedFetch(spans: Span[]): typeof fetch {
  let clock = 0;
  return async (input, init) => {
    const body = JSON.parse(String(init?.body)) as { messages: ChatMessage[] };
    const span: Span = { messages: body.messages, start: clock++, end: Number.POSITIVE_INFINITY, status: 0 };
    spans.push(span);
    const response = await fetch(input, init);
    span.end = clock++;
    span.status = response.status;
    return response;
  };
}

/** Plays variants `0..count-1` of a task generated with `knob` at `rate`; one record per variant. */
async function play(
  knob: Knob,
  rate: number,
  seed: number,
  tokenizer: TitoModel,
  count = 1,
): Promise<Played[]> {
  const params = GeneratorParamsSchema.parse({ ...QUIET, faults: { [knob]: rate } });
  const task = generateTask(seed, 'fault-knob-task', params);
  const script = EpisodeScriptSchema.parse(task.script);
  const played: Played[] = [];
  for (let k = 0; k < count; k++) {
    const policy = directivePolicy({ baseUrl: BASE, tokenizer });
    server.use(policy.handler);
    const events: CallEvent[] = [];
    const spans: Span[] = [];
    await playEpisode({
      episode: resolveEpisode(script, script.instance_id, k),
      baseUrl: BASE,
      samplingParams: { temperature: 1, max_tokens: RESPONSE_LIMIT },
      fetchImpl: timedFetch(spans),
      onCall: (e) => events.push(e),
    });
    server.resetHandlers();
    played.push({ requests: policy.requests, events, spans });
  }
  return played;
}

interface Choice {
  readonly finish_reason: string;
  readonly message: {
    content: string | null;
    reasoning_content?: string | null;
    tool_calls?: { id: string; function: { arguments: string } }[] | null;
  };
}

function choiceOf(request: RecordedChatRequest): Choice | undefined {
  const body = request.response as { choices?: Choice[] } | null;
  return body?.choices?.[0];
}

function idsOf(request: RecordedChatRequest): number[] {
  const body = request.response as {
    choices?: { meta_info?: { output_token_logprobs?: [number, number][] } }[];
  };
  return (body.choices?.[0]?.meta_info?.output_token_logprobs ?? []).map(([, id]) => id);
}

const same = (a: readonly ChatMessage[], b: readonly ChatMessage[]) =>
  JSON.stringify(a) === JSON.stringify(b);
const okRequests = (p: Played) => p.requests.filter((r) => r.status === 200);

/** Each knob's fault, read off one played episode (docs/field-failures.md, the row's `fault`). */
const SHOWS: Record<Exclude<Knob, 'uneven_group'>, (p: Played) => boolean> = {
  // resent-first-turn: the first request sent again after a reply was committed.
  resend_first: (p) => p.requests.slice(1).some((r) => same(r.messages, p.requests[0]!.messages)),
  // rollback-then-longer: a request whose history is the first exchange only, after a longer one, then extended.
  rollback: (p) =>
    p.requests.some((r, j) => {
      const before = p.requests[j - 1];
      const after = p.requests[j + 1];
      return (
        before !== undefined &&
        r.messages.length === 3 &&
        before.messages.length > 3 &&
        same(r.messages.slice(0, 2), before.messages.slice(0, 2)) &&
        (after === undefined || same(after.messages.slice(0, 3), r.messages))
      );
    }),
  // concurrent-requests: two requests in flight together, both answered, on the same history and with
  // different last messages (parallel branches), one of them the dropped twin (attempt 0).
  concurrent: (p) =>
    p.spans.some((a, j) =>
      p.spans.some(
        (b, k) =>
          j < k &&
          b.start < a.end &&
          a.start < b.end &&
          a.status === 200 &&
          b.status === 200 &&
          same(a.messages.slice(0, -1), b.messages.slice(0, -1)) &&
          !same(a.messages.slice(-1), b.messages.slice(-1)),
      ),
    ) && p.events.some((e) => e.attempt === 0),
  // upstream-abort: a 200 with finish_reason abort, then the same request again.
  upstream_abort: (p) =>
    p.requests.some(
      (r, j) => choiceOf(r)?.finish_reason === 'abort' && same(p.requests[j + 1]?.messages ?? [], r.messages),
    ),
  // length-recover: the cut reply re-sent as an assistant turn, followed by the re-issue prompt.
  length_recover: (p) =>
    p.requests.some((r, j) => {
      if (choiceOf(r)?.finish_reason !== 'length') return false;
      const next = p.requests[j + 1]?.messages ?? [];
      const cut = next.at(-2);
      return (
        cut?.role === 'assistant' &&
        cut.content === choiceOf(r)?.message.content &&
        (next.at(-1)?.content ?? '').startsWith('ERROR!! NONE of the actions')
      );
    }),
  // thinking-stripped: an assistant turn the policy answered with reasoning re-sent without it.
  strip_thinking: (p) =>
    p.requests.some((r) =>
      r.messages.some((m) => m.role === 'assistant' && m.reasoning_content === undefined && m.content !== ''),
    ),
  // newline-after-im-end: an assistant tool call answered by a `tool` message (the assistant→tool boundary).
  tool_response: (p) =>
    p.requests.some((r) =>
      r.messages.some(
        (m, j) =>
          m.role === 'tool' && r.messages[j - 1]?.tool_calls !== undefined && m.tool_call_id !== undefined,
      ),
    ),
  // empty-think-rerendered: the think block in the content the agent re-sends.
  think_in_content: (p) =>
    okRequests(p).some(
      (r) => (choiceOf(r)?.message.content ?? '').startsWith('<think>\n') && idsOf(r)[0] === QWEN3_IDS.think,
    ),
  // retokenized-text: ids that re-encode to fewer ids: a tokenization the tokenizer would not give the text.
  char_tokens: (p) =>
    okRequests(p).some((r) => {
      const ids = idsOf(r);
      return qwen3Tokenizer().encode(qwen3Tokenizer().decode(ids)).length < ids.length;
    }),
  // tool-call-zero-args: a whole <tool_call> block with empty arguments, no call returned, finish tool_calls.
  tool_call_zero_args: (p) =>
    okRequests(p).some((r) => {
      const choice = choiceOf(r);
      const text = qwen3Tokenizer().decode(idsOf(r));
      return (
        choice?.finish_reason === 'tool_calls' &&
        !choice.message.tool_calls &&
        text.includes('"arguments": {}}') &&
        idsOf(r).includes(QWEN3_IDS.toolCall)
      );
    }),
  // tool-call-literal-end: </tool_call> inside the call's ids, the block returned as content.
  tool_call_literal_end: (p) =>
    okRequests(p).some((r) => {
      const ends = idsOf(r).filter((id) => id === QWEN3_IDS.toolCallEnd).length;
      return (
        ends >= 2 &&
        (choiceOf(r)?.message.content ?? '').includes('<tool_call>') &&
        !choiceOf(r)?.message.tool_calls
      );
    }),
  // tool-call-split-markers: no marker ids, yet the marker text in the content the parser returns.
  tool_call_split_markers: (p) =>
    okRequests(p).some((r) => {
      const ids = idsOf(r);
      const content = choiceOf(r)?.message.content ?? '';
      return (
        !ids.includes(QWEN3_IDS.toolCall) &&
        qwen3Tokenizer().decode(ids).includes('<tool_call>') &&
        content.includes('</tool_call>')
      );
    }),
  // tool-call-numbers-as-strings: a number sampled bare, returned quoted.
  tool_call_numbers_as_strings: (p) =>
    okRequests(p).some((r) => {
      const args = choiceOf(r)?.message.tool_calls?.[0]?.function.arguments ?? '';
      return (
        /"duration": "\d+\.0"/.test(args) && /"duration": \d+\.0/.test(qwen3Tokenizer().decode(idsOf(r)))
      );
    }),
};

const TOY_KNOBS: readonly Knob[] = [
  'resend_first',
  'rollback',
  'concurrent',
  'upstream_abort',
  'length_recover',
  'strip_thinking',
];
/** Qwen3-only: the tool-response boundary and every emission fault the policy can play. */
const QWEN3_KNOBS: readonly Knob[] = ['tool_response', ...EMIT_FAULTS];

const seeds = fc.nat({ max: 1_000_000 });

describe.each([
  ...TOY_KNOBS.map((knob) => [knob, 'default'] as const),
  ...QWEN3_KNOBS.map((knob) => [knob, 'qwen3'] as const),
])('fault knob %s (%s ids)', (knob, tokenizer) => {
  const shows = SHOWS[knob as Exclude<Knob, 'uneven_group'>];
  it('shows the fault at rate 1 and never at rate 0', async () => {
    await fc.assert(
      fc.asyncProperty(seeds, async (seed) => {
        const [faulty] = await play(knob, 1, seed, tokenizer);
        const [clean] = await play(knob, 0, seed, tokenizer);
        expect(shows(faulty!)).toBe(true);
        expect(shows(clean!)).toBe(false);
      }),
      { numRuns: 3 },
    );
  });
});

describe('fault knob upstream_abort under a session that answers the abort 503', () => {
  // Miles profile 4d412b5a: the session server answers a 200 `abort` 503 and commits nothing
  // (fakes/session/responses.ts); the agent's retry must then be an ordinary attempt, once.
  it('retries the aborted attempt once and completes the episode', async () => {
    const params = GeneratorParamsSchema.parse({ ...QUIET, faults: { upstream_abort: 1 } });
    const script = EpisodeScriptSchema.parse(generateTask(7, 'fault-knob-task', params).script);
    const policy = directivePolicy({ baseUrl: BASE });
    server.use(policy.handler);
    const as503: typeof fetch = async (input, init) => {
      const response = await fetch(input, init);
      const text = await response.clone().text();
      return text.includes('"finish_reason":"abort"')
        ? new Response('{"error": "aborted"}', { status: 503 })
        : response;
    };
    const events: CallEvent[] = [];
    const result = await playEpisode({
      episode: resolveEpisode(script, script.instance_id, 0),
      baseUrl: BASE,
      samplingParams: { max_tokens: RESPONSE_LIMIT },
      fetchImpl: as503,
      onCall: (e) => events.push(e),
    });
    expect(result.end).toBe('completed');
    const perTurn = new Map<number, string[]>();
    for (const e of events.filter((e) => e.kind === 'main'))
      perTurn.set(e.turn, [...(perTurn.get(e.turn) ?? []), `${e.outcome}${e.status ?? ''}`]);
    expect([...perTurn.values()].every((outcomes) => outcomes.join(',') === 'error503,ok200')).toBe(true);
  });
});

describe('fault knob uneven_group', () => {
  it("compacts the group's first rollout and no other at rate 1, none at rate 0", async () => {
    // Compacted: some summarization sub-call was answered (the summary with its questions and answers, or
    // the short summary Terminus falls back to when every summary attempt overflows; seed 179538). Each is
    // a root of its own in the session tree, so the rollout brings more rows than its siblings.
    const compacted = (p: Played) => p.events.some((e) => e.kind !== 'main' && e.outcome === 'ok');
    await fc.assert(
      fc.asyncProperty(seeds, async (seed) => {
        expect((await play('uneven_group', 1, seed, 'default', 3)).map(compacted)).toEqual([
          true,
          false,
          false,
        ]);
        expect((await play('uneven_group', 0, seed, 'default', 3)).map(compacted)).toEqual([
          false,
          false,
          false,
        ]);
      }),
      { numRuns: 3 },
    );
  });
});
