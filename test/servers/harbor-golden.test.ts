import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureIo } from '../../cli/io.ts';
import { main } from '../../cli/main.ts';
import { awaitOutput } from '../helpers/cli-output.ts';
import { startRecordingPolicy } from './recording-policy.ts';

/**
 * Harbor's golden Terminus-2 context-summarization scenario and its XML twin, played through the CLI
 * surface (`harness serve harbor --episodes DIR`, `POST /run`) against a recording policy: every
 * request must equal the expected list in fixtures/harbor-golden/expected byte for byte. That list
 * was derived by scripts/oracles/derive_terminus2_golden.py from Harbor's own tmux session code, parsers,
 * templates and prompt f-strings against a real tmux; here it is also checked against Harbor's golden
 * traces under the normalization Harbor's integration test applies (tests/integration/test_utils.py).
 */

const ROOT = fileURLToPath(new URL('../../fixtures/harbor-golden/', import.meta.url));
const SCENARIOS = ['hello-world-context-summarization', 'hello-world-context-summarization-xml'] as const;

interface Message {
  readonly role: string;
  readonly content: string;
}
interface ExpectedRequest {
  readonly call: 'main' | 'summary' | 'questions' | 'answers';
  readonly status: number;
  readonly messages: readonly Message[];
  readonly reply?: string;
}

const expected = (id: string): ExpectedRequest[] =>
  JSON.parse(readFileSync(join(ROOT, 'expected', `${id}.requests.json`), 'utf8')) as ExpectedRequest[];

describe('Harbor golden scenario through `harness serve harbor`', () => {
  const controller = new AbortController();
  let url = '';
  let exit: Promise<number>;
  const recorded = new Map<string, ReadonlyArray<{ status: number; messages: readonly unknown[] }>>();

  beforeAll(async () => {
    const io = captureIo({}, { signal: controller.signal });
    exit = main(['serve', 'harbor', '--episodes', join(ROOT, 'episodes')], io);
    url = (await awaitOutput(io, exit, /listening (http:\/\/127\.0\.0\.1:\d+)\n/))[1] as string;
    for (const id of SCENARIOS) {
      const policy = await startRecordingPolicy();
      const response = await fetch(`${url}/run`, {
        method: 'POST',
        body: JSON.stringify({ base_url: `${policy.url}/v1`, instance_id: id, model: 'openai/gpt-4o' }),
      });
      const result = (await response.json()) as { exit_status: string };
      expect(result.exit_status).toBe('Submitted');
      recorded.set(id, [...policy.requests]);
      await policy.close();
    }
  });

  afterAll(async () => {
    controller.abort();
    await exit;
  });

  it.each(SCENARIOS)('%s: every request equals the derived one, message by message, byte for byte', (id) => {
    const want = expected(id);
    const got = recorded.get(id) ?? [];
    expect(got.map((r) => r.status)).toEqual(want.map((r) => r.status));
    want.forEach((request, i) => {
      const messages = got[i]?.messages ?? [];
      expect(messages, `request ${i}: message count`).toHaveLength(request.messages.length);
      request.messages.forEach((message, j) => {
        // Role and content only, no extra keys: the exact object Harbor's Chat puts on the wire.
        expect(messages[j], `request ${i} message ${j}`).toStrictEqual({
          role: message.role,
          content: message.content,
        });
      });
    });
  });
});

// ---- Harbor's normalization (tests/integration/test_utils.py normalize_traces, 6c9ba3f0) ----

const PROMPT_REDRAW = /(root@CONTAINER_ID:\/app# [^\n]*\n)root@CONTAINER_ID:\/app#\n/g;
const PROMPT_COMMAND_HISTORY = /^root@CONTAINER_ID:\/app# [^\n]*\n(?=root@CONTAINER_ID:\/app# [^\n]*\n)/gm;

function normalizeContent(content: string): string {
  let text = content.replace(/root@[a-f0-9]{12}:/g, 'root@CONTAINER_ID:');
  text = text.replace(/[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}/g, 'NORMALIZED_UUID');
  text = text.replace(
    /bash: cannot set terminal process group \(-?\d+\): Inappropriate ioctl for device\n/g,
    '',
  );
  text = text.replace(/bash: no job control in this shell\n/g, '');
  text = text.replace(/New Terminal Output:\n+/g, 'New Terminal Output:\n\n');
  const marker = 'New Terminal Output:\n\n';
  if (text.includes(marker)) {
    const parts = text.split(marker);
    for (let i = 1; i < parts.length; i += 1)
      parts[i] = (parts[i] as string).replace(PROMPT_COMMAND_HISTORY, '').replace(PROMPT_REDRAW, '$1');
    text = parts.join(marker);
  }
  return text.replace(/\n{3,}/g, '\n\n');
}

const normalize = (conversations: readonly Message[]): Message[] =>
  conversations.map((m) => ({ role: m.role, content: normalizeContent(m.content) }));

/**
 * What Harbor's trace export shows of the requests: each main call with its reply; the summary and
 * answers traces are rebuilt from trajectory steps (`steps_to_include = 1 + (n - 1) // 2` of the n
 * history messages, terminus_2.py `_summarize`), which leaves out the last assistant message.
 */
function tracesView(requests: readonly ExpectedRequest[]): Record<string, Message[][]> {
  const view: Record<string, Message[][]> = { main: [], summary: [], questions: [], answers: [] };
  for (const request of requests) {
    if (request.status !== 200) continue;
    let messages = [...request.messages];
    if (request.call === 'summary' || request.call === 'answers') {
      const tail = request.call === 'summary' ? 1 : 3;
      const history = messages.slice(0, -tail);
      const steps = 1 + Math.floor((history.length - 1) / 2);
      messages = [...history.slice(0, 2 * steps - 1), ...messages.slice(-tail)];
    }
    view[request.call]?.push([...messages, { role: 'assistant', content: request.reply ?? '' }]);
  }
  return view;
}

function golden(file: string): Message[][] {
  const entries = JSON.parse(readFileSync(join(ROOT, 'harbor-6c9ba3f0', file), 'utf8')) as Array<{
    conversations: Message[];
    trace_source?: string;
  }>;
  return entries.filter((e) => (e.trace_source ?? 'main') === 'main').map((e) => e.conversations);
}

describe("the derived requests against Harbor's golden traces (CI: fixture files only)", () => {
  const view = tracesView(expected('hello-world-context-summarization'));
  it.each([
    ['main', 'hello-world-context-summarization.traces.json'],
    ['summary', 'hello-world-context-summarization.summarization-1-summary.traces.json'],
    ['questions', 'hello-world-context-summarization.summarization-1-questions.traces.json'],
    ['answers', 'hello-world-context-summarization.summarization-1-answers.traces.json'],
  ])('%s calls equal %s under Harbor normalization', (call, file) => {
    const want = golden(file).map(normalize);
    const got = (view[call] ?? []).map(normalize);
    expect(got).toEqual(want);
  });

  it('the XML twin differs from the JSON scenario only where the parser does', () => {
    const json = expected('hello-world-context-summarization');
    const xml = expected('hello-world-context-summarization-xml');
    expect(xml.map((r) => [r.call, r.status, r.messages.length])).toEqual(
      json.map((r) => [r.call, r.status, r.messages.length]),
    );
    expect(xml[0]?.messages[0]?.content).toContain('- <plan>: Your plan for the next steps  \n');
    expect(xml.at(-1)?.messages.at(-1)?.content).toMatch(
      /include <task_complete>true<\/task_complete> again\.$/,
    );
  });
});

// ---- The oracle itself: Harbor's code and a real tmux, where they are available ----

const HARBOR_SRC = process.env.HARBOR_SRC ?? '/work/ext/harbor';
const PYTHON = '/usr/bin/python3';
const oracleMissing = [
  existsSync(PYTHON) ? undefined : `${PYTHON} is missing`,
  existsSync(join(HARBOR_SRC, 'src/harbor/agents/terminus_2/tmux_session.py'))
    ? undefined
    : `Harbor's source is not at HARBOR_SRC=${HARBOR_SRC}`,
  existsSync('/usr/bin/tmux') ? undefined : 'tmux is missing',
].filter((reason): reason is string => reason !== undefined);

describe.skipIf(oracleMissing.length > 0)(
  `re-deriving the expected requests with Harbor's own code${oracleMissing.length > 0 ? ` (skipped: ${oracleMissing.join('; ')})` : ''}`,
  () => {
    it.each(SCENARIOS)('%s: derive_terminus2_golden.py reproduces the committed list', (id) => {
      const out = join(mkdtempSync(join(tmpdir(), 'harbor-golden-')), `${id}.json`);
      execFileSync(
        PYTHON,
        [
          fileURLToPath(new URL('../../scripts/oracles/derive_terminus2_golden.py', import.meta.url)),
          join(ROOT, 'episodes', `${id}.json`),
          out,
        ],
        { env: { ...process.env, HARBOR_SRC }, stdio: 'pipe', timeout: 60_000 },
      );
      expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual(expected(id));
    });
  },
);
