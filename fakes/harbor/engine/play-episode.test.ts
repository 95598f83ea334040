import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_EPISODES_DIR, loadEpisodeScripts } from '../episode-catalog.ts';
import {
  type EpisodeScript,
  type EpisodeScriptInput,
  EpisodeScriptSchema,
  resolveEpisode,
} from '../episode-schema.ts';
import { directivePolicy, type RecordedChatRequest } from '../testing/directive-policy.ts';
import { type CallEvent, MAIN_CALL_ATTEMPTS, SUB_CALL_ATTEMPTS } from './episode-calls.ts';
import type { TokenCounter } from './episode-history.ts';
import { playEpisode } from './play-episode.ts';
import {
  answerPrompt,
  firstPrompt,
  handoffPrompt,
  noModelFallbackPrompt,
  parseErrorPrompt,
  questionPrompt,
  shortSummaryHandoff,
  shortSummaryPrompt,
  summaryPrompt,
} from './prompts.ts';

const BASE = 'http://session.test/sessions/s1/v1';
const server = setupServer();
let fixtures: Map<string, EpisodeScript>;

beforeAll(async () => {
  server.listen({ onUnhandledFrame: 'bypass' });
  fixtures = new Map((await loadEpisodeScripts(DEFAULT_EPISODES_DIR)).map((s) => [s.instance_id, s]));
});
afterEach(() => server.resetHandlers());
afterAll(() => server.close());

function fixture(name: string): EpisodeScript {
  const script = fixtures.get(`fixture-${name}`);
  if (!script) throw new Error(`no fixture ${name}`);
  return script;
}

async function play(
  script: EpisodeScript,
  options: {
    obey?: boolean;
    signal?: AbortSignal;
    trial?: number;
    countTokens?: TokenCounter;
    onCall?: (e: CallEvent) => void;
  } = {},
) {
  const policy = directivePolicy({
    baseUrl: BASE,
    ...(options.obey === false ? { obeyDirectives: false } : {}),
  });
  server.use(policy.handler);
  const events: CallEvent[] = [];
  const result = await playEpisode({
    episode: resolveEpisode(script, script.instance_id, options.trial ?? 0),
    baseUrl: BASE,
    samplingParams: { temperature: 1, max_tokens: 8192, stream: true, model: 'ignored' },
    ...(options.signal ? { signal: options.signal } : {}),
    ...(options.countTokens ? { countTokens: options.countTokens } : {}),
    onCall: (e) => {
      events.push(e);
      options.onCall?.(e);
    },
  });
  return { result, requests: policy.requests, events, kinds: events.map((e) => e.kind) };
}

/** The reply the policy gave to request `i`, as the engine stores it in history. */
function replyOf(request: RecordedChatRequest): {
  role: 'assistant';
  content: string;
  reasoning_content?: string;
} {
  const d = request.directive;
  return {
    role: 'assistant',
    content: d?.content ?? '',
    ...(d?.reasoning_content !== undefined ? { reasoning_content: d.reasoning_content } : {}),
  };
}

const userMsg = (content: string) => ({ role: 'user', content });

/** tmux `capture-pane -p` of a 40-row pane showing these lines from the top. */
const paneOf = (lines: readonly string[]): string => `${lines.join('\n')}\n${'\n'.repeat(40 - lines.length)}`;

describe('plain episode', () => {
  it('opens with U0 alone and extends the previous request verbatim on every turn', async () => {
    const script = fixture('no-compaction');
    const { result, requests } = await play(script);
    expect(result.end).toBe('completed');
    expect(requests).toHaveLength(4);
    expect(requests[0]?.messages).toEqual([
      userMsg(
        firstPrompt('xml', script.instruction, `Current Terminal Screen:\n${paneOf(['root@harbor:/app#'])}`),
      ),
    ]);
    for (let i = 1; i < requests.length; i += 1) {
      const prev = requests[i - 1] as RecordedChatRequest;
      const cur = requests[i] as RecordedChatRequest;
      expect(cur.messages.slice(0, prev.messages.length + 1)).toEqual([...prev.messages, replyOf(prev)]);
      expect(cur.messages).toHaveLength(prev.messages.length + 2);
    }
    // Turn 2 marked the task complete, so turn 3's prompt is the confirmation message.
    expect(requests[3]?.messages.at(-1)?.content).toMatch(/^Current terminal state:\nNew Terminal Output:\n/);
    expect(requests[3]?.messages.at(-1)?.content).toContain(
      'Are you sure you want to mark the task as complete?',
    );
    expect(result.metrics).toMatchObject({ turns: 4, n_episodes: 4, summarization_count: 0, tool_calls: 3 });
    expect(result.metrics.api_request_times_msec).toHaveLength(4);
  });

  it('sends the sampling params, strips openai/ from the model and never lets params override the agent keys', async () => {
    const { requests } = await play(fixture('no-compaction'));
    const body = requests[0]?.body ?? {};
    expect(body).toMatchObject({ model: 'model', temperature: 1, max_tokens: 8192 });
    expect(body).not.toHaveProperty('stream');
  });
});

describe('proactive summarization', () => {
  it('sends S, Q, A and M with exactly the message lists of Terminus 2’s _summarize', async () => {
    const script = fixture('proactive-once');
    const { result, requests, kinds } = await play(script);
    expect(result.end).toBe('completed');
    expect(kinds).toEqual([
      'main',
      'main',
      'main',
      'summary',
      'questions',
      'answers',
      'main',
      'main',
      'main',
    ]);
    const [r0, , r2, s, q, a, m, next] = requests as RecordedChatRequest[];
    const h = [...(r2?.messages ?? []), replyOf(r2 as RecordedChatRequest)];
    const sp = summaryPrompt(script.instruction);
    expect(s?.messages).toEqual([...h, userMsg(sp)]);
    const summary = replyOf(s as RecordedChatRequest).content;
    const qp = q?.messages[0]?.content ?? '';
    expect(q?.messages).toHaveLength(1);
    expect(
      qp.startsWith(
        questionPrompt(script.instruction, summary, '').split('**Current Terminal Screen:**')[0] ?? '',
      ),
    ).toBe(true);
    expect(qp).toContain('**Current Terminal Screen:**\n[2:');
    const questions = replyOf(q as RecordedChatRequest).content;
    expect(a?.messages).toEqual([
      ...h,
      userMsg(sp),
      { role: 'assistant', content: summary },
      userMsg(answerPrompt(questions)),
    ]);
    const answers = replyOf(a as RecordedChatRequest).content;
    expect(m?.messages).toEqual([
      r0?.messages[0],
      userMsg(qp),
      { role: 'assistant', content: questions },
      userMsg(handoffPrompt(answers)),
    ]);
    // The pending observation of turn 3 was thrown away; turn 4 continues the post-summary chain.
    // (It still shows on the screen snapshot inside QP, as tmux would show it.)
    const sentAsPrompt = requests.some((r) =>
      r.messages.some((msg) =>
        msg.content.startsWith('New Terminal Output:\nroot@harbor:/app# (this output is thrown away'),
      ),
    );
    expect(sentAsPrompt).toBe(false);
    expect(qp).toContain('(this output is thrown away');
    expect(next?.messages.slice(0, 5)).toEqual([...(m?.messages ?? []), replyOf(m as RecordedChatRequest)]);
    expect(result.metrics).toMatchObject({ summarization_count: 1, turns: 6, n_episodes: 6 });
  });

  it('compacts twice, keeping U0 as the first message of every post-summary root', async () => {
    const { result, requests, kinds } = await play(fixture('proactive-twice'));
    expect(result.metrics.summarization_count).toBe(2);
    expect(kinds.filter((k) => k === 'summary')).toHaveLength(2);
    const u0 = requests[0]?.messages[0];
    const roots = requests.filter(
      (r, i) =>
        kinds[i] === 'main' &&
        r.messages.length === 4 &&
        r.messages[1]?.content.startsWith('You are picking up'),
    );
    expect(roots).toHaveLength(2);
    for (const root of roots) expect(root.messages[0]).toEqual(u0);
  });

  it('replays summary and questions without reasoning_content while history keeps it', async () => {
    const { requests, kinds } = await play(fixture('reasoning-model'));
    const s = requests[kinds.indexOf('summary')] as RecordedChatRequest;
    const a = requests[kinds.indexOf('answers')] as RecordedChatRequest;
    expect(s.directive?.reasoning_content).toBeDefined();
    // History assistants (one per main reply so far) carry their reasoning into the summary request.
    const history = s.messages.filter((m) => m.role === 'assistant');
    expect(history).toHaveLength(kinds.indexOf('summary'));
    expect(history.every((m) => m.reasoning_content !== undefined)).toBe(true);
    const replayed = a.messages.at(-2);
    expect(replayed).toEqual({ role: 'assistant', content: s.directive?.content });
    const m = requests[kinds.indexOf('answers') + 1] as RecordedChatRequest;
    expect(m.messages[2]).not.toHaveProperty('reasoning_content');
  });

  it('swallows a failed proactive summarization and sends the observation with the full history', async () => {
    const { result, requests, kinds } = await play(fixture('proactive-summary-fails'));
    expect(result.end).toBe('completed');
    expect(kinds.slice(3, 3 + SUB_CALL_ATTEMPTS + 1)).toEqual(['summary', 'summary', 'summary', 'main']);
    const afterFailure = requests[3 + SUB_CALL_ATTEMPTS] as RecordedChatRequest;
    expect(afterFailure.messages.at(-1)?.content).toContain('shown: summarization 1 failed');
    expect(result.metrics.summarization_count).toBe(2);
  });
});

describe('reactive summarization', () => {
  it.each([
    ['reactive-unwind-0', 0],
    ['reactive-unwind-1', 1],
    ['reactive-unwind-2', 2],
  ])('%s unwinds %i pairs before summarizing', async (name, pairs) => {
    const { result, requests, events } = await play(fixture(name));
    expect(result.end).toBe('completed');
    expect(result.metrics.unwound_pairs).toEqual([pairs]);
    const failed = events.findIndex((e) => e.outcome === 'error');
    expect(events[failed]).toMatchObject({
      kind: 'main',
      status: 400,
      failure: 'context_length',
      attempt: 1,
    });
    const failing = requests[failed] as RecordedChatRequest;
    const summary = requests[failed + 1] as RecordedChatRequest;
    // H = the failing request minus its prompt, minus `pairs` user+assistant pairs.
    const h = failing.messages.slice(0, failing.messages.length - 1 - 2 * pairs);
    expect(summary.messages.slice(0, -1)).toEqual(h);
    expect(events[failed + 4]?.kind).toBe('handoff');
    expect(requests[failed + 4]?.messages[1]?.content).toMatch(/^You are picking up work/);
  });

  it('falls back to a short summary that continues the unwound history without resetting it', async () => {
    const script = fixture('reactive-short-summary');
    const { requests, kinds } = await play(script);
    expect(kinds).toEqual([
      'main',
      'main',
      'main',
      'summary',
      'summary',
      'summary',
      'short_summary',
      'handoff',
      'main',
    ]);
    const h = [...(requests[1]?.messages ?? []), replyOf(requests[1] as RecordedChatRequest)];
    const screen = paneOf([
      'root@harbor:/app# ls -la',
      "make: Entering directory '/app'",
      'root@harbor:/app# ls -la',
      'cc -O2 -c src/*.c',
      'root@harbor:/app#',
    ]);
    expect(requests[6]?.messages).toEqual([userMsg(shortSummaryPrompt(script.instruction, screen))]);
    const reply = replyOf(requests[6] as RecordedChatRequest).content;
    expect(requests[7]?.messages).toEqual([...h, userMsg(shortSummaryHandoff(script.instruction, reply))]);
  });

  it('builds the prompt without a model call when the short summary fails too', async () => {
    const script = fixture('reactive-no-model-fallback');
    const { requests, kinds } = await play(script);
    expect(kinds.filter((k) => k === 'short_summary')).toHaveLength(SUB_CALL_ATTEMPTS);
    const handoff = requests[kinds.indexOf('handoff')] as RecordedChatRequest;
    expect(handoff.messages.at(-1)?.content).toBe(
      noModelFallbackPrompt(
        script.instruction,
        paneOf([
          'root@harbor:/app# ls -la',
          "make: Entering directory '/app'",
          'root@harbor:/app# ls -la',
          'cc -O2 -c src/*.c',
          'root@harbor:/app#',
        ]),
      ),
    );
  });

  it('answers with the technical-difficulties stand-in and then the parser error prompt', async () => {
    const { result, requests, kinds } = await play(fixture('reactive-technical-difficulties'));
    expect(result.end).toBe('completed');
    expect(kinds.filter((k) => k === 'handoff')).toHaveLength(SUB_CALL_ATTEMPTS);
    const after = requests[kinds.lastIndexOf('handoff') + 1] as RecordedChatRequest;
    expect(after.messages.at(-1)?.content).toBe(parseErrorPrompt('xml', 'ERROR: No <response> tag found'));
    // The stand-in is not in history: the request continues the unwound history H directly.
    expect(after.messages.slice(0, -1)).toEqual([
      ...(requests[1]?.messages ?? []),
      replyOf(requests[1] as RecordedChatRequest),
    ]);
    expect(result.metrics.turns).toBe(4);
  });

  it('re-raises a context-length error when summarization is off (no retry): AgentError', async () => {
    const { result, events } = await play(fixture('context-error-summarize-off'));
    expect(result.end).toBe('agent_error');
    expect(result.error?.type).toBe('ContextLengthExceededError');
    expect(events.filter((e) => e.outcome === 'error')).toHaveLength(1);
  });
});

describe('failures', () => {
  it('ends on finish_reason length under the abort policy', async () => {
    const { result } = await play(fixture('truncation'));
    expect(result.end).toBe('sequence_length');
    expect(result.error?.type).toBe('SingleTurnMaxSeqLenExceededError');
    expect(result.metrics.turns).toBe(2);
  });

  it('retries a failing main call 9 times, then fails the run', async () => {
    const { result, events } = await play(fixture('agent-error'));
    expect(result.end).toBe('agent_error');
    expect(result.error?.type).toBe('APIError');
    expect(events.filter((e) => e.outcome === 'error')).toHaveLength(MAIN_CALL_ATTEMPTS);
  });

  it('re-sends a discarded completion with the identical request', async () => {
    const { requests, events } = await play(fixture('retried-turn'));
    expect(events[2]).toMatchObject({ outcome: 'discarded', attempt: 1 });
    expect(events[3]).toMatchObject({ outcome: 'ok', attempt: 2 });
    expect(requests[3]?.messages).toEqual(requests[2]?.messages);
  });

  it('reports a session server that refuses connections as an APIConnectionError', async () => {
    const { createServer } = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => resolve(p));
      });
    });
    const script = fixture('no-compaction');
    const result = await playEpisode({
      episode: resolveEpisode(script, script.instance_id, 0),
      baseUrl: `http://127.0.0.1:${port}/sessions/x/v1`,
    });
    expect(result.end).toBe('agent_error');
    expect(result.error?.type).toBe('APIConnectionError');
    expect(result.calls).toHaveLength(MAIN_CALL_ATTEMPTS);
  });

  it('stops at once when its signal fires, reporting the reason', async () => {
    const script = EpisodeScriptSchema.parse({
      instance_id: 'slow',
      description: 'a slow command',
      instruction: 'wait',
      turns: [{ exec_ms: 60_000 }, { observation: 'done' }],
    } satisfies EpisodeScriptInput);
    // The signal fires once the first model call is done, so the 60 s command is what it interrupts.
    const controller = new AbortController();
    const { result } = await play(script, {
      signal: controller.signal,
      onCall: () => controller.abort(new Error('stop now')),
    });
    expect(result.end).toBe('aborted');
    expect((result.abortReason as Error).message).toBe('stop now');
  });
});

describe('script knobs', () => {
  it('ends the run as an AgentError when the agent crashes at a turn', async () => {
    const script = EpisodeScriptSchema.parse({
      instance_id: 'crash',
      description: 'sandbox dies',
      instruction: 'i',
      turns: [{}, { observation: 'o', crash: 'tmux session died' }, { observation: 'never' }],
    } satisfies EpisodeScriptInput);
    const { result, requests } = await play(script);
    expect(result.end).toBe('agent_error');
    expect(result.error).toEqual({ type: 'RuntimeError', message: 'tmux session died' });
    expect(requests).toHaveLength(1);
    expect(result.metrics).toMatchObject({ turns: 1, n_episodes: 2 });
  });

  it('pads generated replies to `words` and falls back to completion_words for oversized content', async () => {
    const big = 'word '.repeat(3000);
    const script = EpisodeScriptSchema.parse({
      instance_id: 'sizes',
      description: 'reply sizes',
      instruction: 'i',
      turns: [{ words: 200 }, { observation: 'o', content: big }],
    } satisfies EpisodeScriptInput);
    const { requests } = await play(script);
    const padded = requests[0]?.directive?.content ?? '';
    expect(padded.split(/\s+/).filter(Boolean).length).toBeGreaterThanOrEqual(200);
    expect(requests[1]?.directive).toMatchObject({ completion_words: 3000 });
    expect(requests[1]?.directive).not.toHaveProperty('content');
  });
});

describe('against a real policy (directives ignored)', () => {
  it('answers free text that is not a Terminus reply with the parser-error prompt, turn after turn', async () => {
    const ignoring = await play(fixture('no-compaction'), { obey: false });
    expect(ignoring.result.end).toBe('completed');
    expect(ignoring.requests[0]?.directive).toBeDefined();
    const error = parseErrorPrompt('xml', 'ERROR: No <response> tag found');
    for (const request of ignoring.requests.slice(1)) expect(request.messages.at(-1)?.content).toBe(error);
    expect(ignoring.result.metrics.tool_calls).toBe(0);
  });

  it('plays a JSON-parser episode and counts the commands of JSON replies', async () => {
    const script = EpisodeScriptSchema.parse({
      instance_id: 'json-episode',
      description: 'json parser',
      instruction: 'list files',
      parser: 'json',
      turns: [
        {
          commands: [
            { keystrokes: 'ls\n', duration: 0.1 },
            { keystrokes: 'pwd\n', duration: 0.1 },
          ],
        },
        { observation: 'a b c' },
      ],
    } satisfies EpisodeScriptInput);
    const { result, requests } = await play(script);
    expect(requests[0]?.messages[0]?.content).toContain('Format your response as JSON');
    expect(result.metrics.tool_calls).toBe(3);
  });
});

describe('the agent loop as Harbor runs it (terminus_2.py _run_agent_loop, 6c9ba3f0)', () => {
  const PANE = (lines: readonly string[]) => paneOf(lines);
  const episode = (turns: EpisodeScriptInput['turns'], extra: Partial<EpisodeScriptInput> = {}) =>
    EpisodeScriptSchema.parse({
      instance_id: 'loop',
      description: 'loop',
      instruction: 'do it',
      turns,
      ...extra,
    });
  const lastPrompt = (request: RecordedChatRequest | undefined) => request?.messages.at(-1)?.content;

  it('answers a reply without a <response> block with the parse-error prompt and runs nothing', async () => {
    const { requests, result } = await play(
      episode([
        { content: 'I will run ls now.' },
        { observation: 'never printed', content: 'still prose' },
        { observation: 'x' },
      ]),
    );
    expect(lastPrompt(requests[1])).toBe(
      'Previous response had parsing errors:\nERROR: No <response> tag found\n\nPlease fix these issues and provide a proper response.',
    );
    expect(lastPrompt(requests[2])).toBe(lastPrompt(requests[1]));
    // Only the last turn's generated reply ran a command; the prose never reached the terminal.
    expect(result.metrics.tool_calls).toBe(1);
    expect(lastPrompt(requests[2])).not.toContain('never printed');
  });

  it('names the missing JSON fields and asks for a proper JSON response', async () => {
    const { requests } = await play(
      episode([{ content: 'Sure: {"analysis": "a"} done' }, { observation: 'x' }], { parser: 'json' }),
    );
    expect(lastPrompt(requests[1])).toBe(
      'Previous response had parsing errors:\nERROR: Missing required fields: plan, commands\nWARNINGS: - Extra text detected before JSON object\n- Extra text detected after JSON object\n\nPlease fix these issues and provide a proper JSON response.',
    );
  });

  it('runs a reply with warnings and prefixes them to the terminal output', async () => {
    const reply =
      'Here you go:\n<response><analysis>a</analysis><plan>p</plan><commands><keystrokes>ls\n</keystrokes></commands></response>';
    const { requests, result } = await play(episode([{ content: reply }, { observation: 'a.txt' }]));
    expect(lastPrompt(requests[1])).toBe(
      `Previous response had warnings:\nWARNINGS: - Extra text detected before <response> tag\n- Command 1: Missing duration attribute, using default 1.0\n\nNew Terminal Output:\n${PANE(['root@harbor:/app# ls', 'a.txt', 'root@harbor:/app#'])}`,
    );
    expect(result.metrics.tool_calls).toBe(2);
  });

  it('ends after two task_complete replies in a row, confirming in between, even with turns left', async () => {
    const { requests, result } = await play(
      episode([
        { complete: true, commands: [] },
        { observation: '', complete: true, commands: [] },
        { observation: 'unused' },
      ]),
    );
    expect(requests).toHaveLength(2);
    expect(result.end).toBe('completed');
    expect(lastPrompt(requests[1])).toBe(
      `Current terminal state:\nNew Terminal Output:\n${PANE(['root@harbor:/app#'])}\n\nAre you sure you want to mark the task as complete? This will trigger your solution to be graded and you won't be able to make any further corrections. If so, include <task_complete>true</task_complete> again.`,
    );
  });

  it('resets the confirmation when a reply in between is not complete', async () => {
    const { requests } = await play(
      episode([
        { complete: true, commands: [] },
        { observation: '' },
        { observation: 'x', complete: true, commands: [] },
        { observation: '', complete: true, commands: [] },
        { observation: 'unused' },
      ]),
    );
    expect(requests).toHaveLength(4);
    expect(lastPrompt(requests[1])).toMatch(/^Current terminal state:\n/);
    expect(lastPrompt(requests[2])).toMatch(/^New Terminal Output:\n/);
    expect(lastPrompt(requests[3])).toMatch(/Are you sure you want to mark the task as complete\?/);
  });

  it('answers a send that times out with templates/timeout.txt, the duration as Python prints min(d, 60)', async () => {
    const { requests } = await play(
      episode([
        {
          content:
            '<response><analysis>a</analysis><plan>p</plan><commands><keystrokes duration="75">sleep 100\n</keystrokes></commands></response>',
          send_timeout: true,
        },
        {
          observation: 'x',
          content:
            '<response><analysis>a</analysis><plan>p</plan><commands><keystrokes duration="60">make\n</keystrokes></commands></response>',
          send_timeout: true,
        },
        { observation: 'y' },
      ]),
    );
    const tail =
      '\n\nIt is possible that the command is not yet finished executing. If that is the case, then do nothing. It is also possible that you have entered an interactive shell and should continue sending keystrokes as normal.\n\nHere is the current state of the terminal:\n\n';
    expect(lastPrompt(requests[1])).toBe(
      `Previous command:\nsleep 100\n\n\nThe previous command timed out after 60 seconds${tail}New Terminal Output:\n${PANE(['root@harbor:/app#'])} `,
    );
    expect(lastPrompt(requests[2])).toMatch(
      /^Previous command:\nmake\n\n\nThe previous command timed out after 60\.0 seconds\n/,
    );
  });

  it('shows a command that outlives its duration without its output, which the next read then shows', async () => {
    const { requests } = await play(
      episode([
        { commands: [{ keystrokes: 'make\n', duration: 1 }], outlives_wait: true },
        { observation: 'built', commands: [{ keystrokes: '', duration: 10 }] },
        { observation: '' },
      ]),
    );
    expect(lastPrompt(requests[1])).toBe(`New Terminal Output:\n${PANE(['root@harbor:/app# make'])}`);
    expect(lastPrompt(requests[2])).toBe(
      `New Terminal Output:\n${PANE(['root@harbor:/app# make', 'built', 'root@harbor:/app#'])}`,
    );
  });

  it('decides summarization with a pluggable counter: free = limit - count(history) below the threshold', async () => {
    const seen: number[] = [];
    const counter: TokenCounter = (messages) => {
      seen.push(messages.length);
      return messages.length === 2 ? 32768 - 7999 : 0;
    };
    const { kinds } = await play(episode([{}, { observation: 'a' }, { observation: 'b' }]), {
      countTokens: counter,
    });
    expect(kinds).toEqual(['main', 'summary', 'questions', 'answers', 'main', 'main']);
    expect(seen).toEqual([2, 5]);
    const untouched = await play(episode([{}, { observation: 'a' }]), { countTokens: () => 32768 - 8000 });
    expect(untouched.kinds).toEqual(['main', 'main']);
  });
});
