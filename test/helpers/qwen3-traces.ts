import fc from 'fast-check';

/**
 * Session traces (session-trace/1) that reach the Qwen3 paths Miles special-cases, for `harness
 * conformance --tokenizer qwen3` on generated traces (scripts/fixtures/conformance-traces.ts writes them; the
 * `miles` suite samples them): replies with `reasoning_content`, with `<think>…</think>` inside the
 * content, with tool calls (JSON-string arguments with floats, `-0.0`, big integers, integer-like keys,
 * Unicode) answered by runs of tool messages, the request's `tools`, `enable_thinking` false, truncated
 * (`length`) replies, backend errors, lone surrogates in an observation, retries (a request sent again: a sibling), compactions (a new root
 * with a summary), a system message appended mid-session, `max_seq_len` and agent metadata. The next
 * request always carries the reply as the policy sent it, so Miles' strict matcher extends the branch.
 */

type Message = Record<string, unknown>;
type Reply = { message: Message; finish_reason: string } | { status: number; body: unknown };

interface Turn {
  request: Record<string, unknown>;
  response: Reply;
}

export interface GeneratedTrace {
  format: 'session-trace/1';
  max_seq_len?: number | null;
  agent_metadata?: unknown;
  turns: Turn[];
}

const words = fc.constantFrom(
  'ls',
  '-la',
  'cat',
  'README.md',
  'make',
  'test',
  'fix',
  'the',
  'build',
  'failed:',
  "it's",
  "DON'T",
  'héllo',
  'naïve',
  '漢字',
  '😀',
  '👍🏽',
  'Ω≈ç√',
  '1.0',
  '-0.0',
  '12345',
  '{"a": 1}',
  '$',
  '\\n',
  '\t',
  '  ',
  '\u00a0',
  'e\u0301',
  '<tool_response>',
  '</tool_response>',
);
// Text with newlines between runs of words (the template strips and splits on them).
const text = fc
  .array(fc.tuple(words, fc.constantFrom(' ', ' ', ' ', '\n', '\n\n', '')), { minLength: 1, maxLength: 10 })
  .map((parts) => parts.map(([w, sep]) => w + sep).join(''));

// Now and then a lone surrogate (a terminal's broken output): Miles' tokenizer refuses the render (a
// UnicodeEncodeError, Python's UTF-8 encoder), and so must the fake, with the same answers.
const observation = fc.oneof(
  { weight: 19, arbitrary: text },
  {
    weight: 1,
    arbitrary: fc.tuple(text, fc.constantFrom('\ud800', '\udc00\udfff', '\udbff')).map(([t, s]) => t + s),
  },
);

// Argument JSON as an agent's client writes it: floats Python keeps as written, big integers, keys a JS
// object would reorder, nesting, Unicode, and spacing json.dumps normalizes.
const argValue = fc.oneof(
  fc.constantFrom('1.0', '-0.0', '0', '2.5e-7', '1e+20', '12345678901234567890', '3.14', 'true', 'null'),
  text.map((t) => JSON.stringify(t)),
  fc.constantFrom('[1, 2.0, "x"]', '{"nested": {"k": 0.5}}', '[]', '{}'),
);
const argKey = fc.constantFrom('cmd', 'path', 'timeout', '2', '10', '1', 'é', 'n');
const argumentsText = fc
  .uniqueArray(fc.tuple(argKey, argValue), { selector: ([k]) => k, maxLength: 4 })
  .chain((members) =>
    fc
      .constantFrom(', ', ',', ',\n')
      .map((sep) => `{${members.map(([k, v]) => `${JSON.stringify(k)}: ${v}`).join(sep)}}`),
  );

const toolCalls = fc.array(
  fc.record({
    name: fc.constantFrom('bash', 'read_file', 'ünïcode_tool'),
    arguments: argumentsText,
  }),
  { minLength: 1, maxLength: 3 },
);

type ReplyShape =
  | { kind: 'plain'; content: string; length: boolean }
  | { kind: 'reasoning'; reasoning: string; content: string }
  | { kind: 'inline_think'; reasoning: string; content: string }
  | {
      kind: 'tools';
      reasoning: string | null;
      content: string;
      calls: Array<{ name: string; arguments: string }>;
    }
  | { kind: 'error'; status: number };

const replyShape: fc.Arbitrary<ReplyShape> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('plain' as const), content: text, length: fc.boolean() }),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('reasoning' as const), reasoning: text, content: text }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('inline_think' as const), reasoning: text, content: text }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant('tools' as const),
      reasoning: fc.option(text, { nil: null }),
      content: fc.oneof(fc.constant(''), text),
      calls: toolCalls,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({ kind: fc.constant('error' as const), status: fc.constantFrom(400, 500) }),
  },
);

type Next = 'continue' | 'retry' | 'compact' | 'system';
const next: fc.Arbitrary<Next> = fc.oneof(
  { weight: 6, arbitrary: fc.constant('continue' as const) },
  { weight: 1, arbitrary: fc.constant('retry' as const) },
  { weight: 1, arbitrary: fc.constant('compact' as const) },
  { weight: 1, arbitrary: fc.constant('system' as const) },
);

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'bash',
      description: 'Run a command in the ünïcode shell',
      parameters: {
        type: 'object',
        properties: { cmd: { type: 'string' }, timeout: { type: 'number', default_seconds: 1 } },
        required: ['cmd'],
      },
    },
  },
  { type: 'function', function: { name: 'read_file', parameters: { type: 'object', properties: {} } } },
];

function replyOf(shape: ReplyShape, turn: number): Reply {
  switch (shape.kind) {
    case 'plain':
      return {
        message: { role: 'assistant', content: shape.content },
        finish_reason: shape.length ? 'length' : 'stop',
      };
    case 'reasoning':
      return {
        message: { role: 'assistant', content: shape.content, reasoning_content: shape.reasoning },
        finish_reason: 'stop',
      };
    case 'inline_think':
      return {
        message: { role: 'assistant', content: `<think>\n${shape.reasoning}\n</think>\n\n${shape.content}` },
        finish_reason: 'stop',
      };
    case 'tools': {
      const message: Message = {
        role: 'assistant',
        content: shape.content,
        tool_calls: shape.calls.map((call, k) => ({
          id: `call_${turn}_${k}`,
          type: 'function',
          function: { name: call.name, arguments: call.arguments },
        })),
      };
      if (shape.reasoning !== null) message.reasoning_content = shape.reasoning;
      return { message, finish_reason: 'tool_calls' };
    }
    case 'error':
      return { status: shape.status, body: { error: { message: 'backend refused', code: shape.status } } };
  }
}

/** What follows a reply in the agent's next request: the tool results, or the next observation. */
function observationsAfter(reply: Reply, observation: string): Message[] {
  if (!('message' in reply)) return [];
  const calls = reply.message.tool_calls as Array<{ id: string }> | undefined;
  if (calls !== undefined) {
    return calls.map((call, k) => ({
      role: 'tool',
      tool_call_id: call.id,
      content: k === 0 ? observation : '',
    }));
  }
  return [{ role: 'user', content: observation }];
}

export const qwen3Trace: fc.Arbitrary<GeneratedTrace> = fc
  .record({
    system: text,
    task: text,
    tools: fc.boolean(),
    thinking: fc.constantFrom<'default' | 'off' | 'on'>('default', 'default', 'off', 'on'),
    steps: fc.array(fc.record({ reply: replyShape, next, observation }), {
      minLength: 1,
      maxLength: 7,
    }),
    maxSeqLen: fc.option(fc.integer({ min: 40, max: 4000 }), { nil: undefined }),
    reward: fc.constantFrom(0.0, 1.0, 0.5),
  })
  .map(({ system, task, tools, thinking, steps, maxSeqLen, reward }) => {
    const extras: Record<string, unknown> = {};
    if (tools) extras.tools = TOOLS;
    if (thinking !== 'default') extras.chat_template_kwargs = { enable_thinking: thinking === 'on' };
    const root = (): Message[] => [
      { role: 'system', content: system },
      { role: 'user', content: task },
    ];
    let messages = root();
    const turns: Turn[] = [];
    steps.forEach((step, k) => {
      const reply = replyOf(step.reply, k);
      turns.push({ request: { messages: [...messages], ...extras }, response: reply });
      // A failed request is sent again, as an agent retries it.
      if (!('message' in reply) || step.next === 'retry') return;
      if (step.next === 'compact') {
        messages = [
          { role: 'system', content: system },
          { role: 'user', content: `Summary of the work so far:\n${step.observation}` },
        ];
        return;
      }
      messages = [...messages, reply.message, ...observationsAfter(reply, step.observation)];
      if (step.next === 'system') messages.push({ role: 'system', content: 'Context is nearly full.' });
    });
    const trace: GeneratedTrace = { format: 'session-trace/1', agent_metadata: { reward }, turns };
    if (maxSeqLen !== undefined) trace.max_seq_len = maxSeqLen;
    return trace;
  });

/** Samples `count` traces from `seed` and writes them as `qwen3-gen-<seed>-<k>.json` under `dir`. */
export function writeQwen3Traces(
  dir: string,
  { seed, count }: { seed: number; count: number },
  write: (path: string, text: string) => void,
): string[] {
  return fc.sample(qwen3Trace, { seed, numRuns: count }).map((trace, k) => {
    const path = `${dir}/qwen3-gen-${seed}-${String(k).padStart(3, '0')}.json`;
    // Python floats that JS prints as integers, written as an agent's client writes them: the tool
    // schema's default (dumped by `{{ tool | tojson }}`) and the reward.
    const text = JSON.stringify(trace, null, 1)
      .replace(/"default_seconds": 1$/gm, '"default_seconds": 1.0')
      .replace(/"reward": (0|1)$/gm, '"reward": $1.0');
    write(path, `${text}\n`);
    return path;
  });
}
