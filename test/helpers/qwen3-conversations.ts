import fc from 'fast-check';
import { wildString } from './text-arbitraries.ts';

/**
 * Conversations that reach the branches of Miles' `qwen3_fixed.jinja`: system first or not, user
 * queries and wrapped tool responses, assistants with `reasoning_content`, with `<think>` inside the
 * content, with tool calls (JSON-string arguments holding floats, `-0.0`, big integers, integer-like
 * keys, duplicate keys, nesting; dict arguments; a call without `function`), runs of tool messages,
 * `content: None` and part lists, and the kwargs the template reads.
 */

/** A template render case, as scripts/oracles/qwen3_template_oracle.py reads it. */
export interface TemplateCase {
  readonly messages: unknown[];
  readonly tools?: unknown[];
  readonly add_generation_prompt: boolean;
  readonly kwargs: Record<string, unknown>;
}

// Text with the template's own markers and newlines mixed in, so the strip/split paths run.
const text = fc.oneof(
  { weight: 3, arbitrary: wildString({ maxLength: 12 }) },
  {
    weight: 2,
    arbitrary: fc
      .array(
        fc.constantFrom(
          '\n',
          '\n\n',
          '<think>',
          '</think>',
          '<tool_response>',
          '</tool_response>',
          ' ',
          'ls -la',
          'héllo',
          '😀',
          'x',
        ),
        { maxLength: 6 },
      )
      .map((parts) => parts.join('')),
  },
);

// Number spellings Python and JS print differently, and keys a JS object would reorder.
const numberText = fc.constantFrom(
  '1.0',
  '-0.0',
  '0',
  '-0',
  '1e5',
  '1E-7',
  '2.5e+300',
  '1e400',
  '12345678901234567890123',
  '-9007199254740993',
  '0.1',
  '3.14159',
  '100',
  'NaN',
  '-Infinity',
);
const keyText = fc.constantFrom('a', '2', '10', '1', 'name', 'é', '"q"', 'x\ny');

const jsonText: fc.Arbitrary<string> = fc.letrec<{ value: string }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberText,
    wildString({ maxLength: 6 }).map((s) => JSON.stringify(s)),
    fc.constantFrom('true', 'false', 'null'),
    fc
      .array(fc.tuple(keyText, tie('value'), fc.constantFrom('', ' ', '\n')), { maxLength: 4 })
      .map((members) => `{${members.map(([k, v, ws]) => `${JSON.stringify(k)}:${ws}${v}`).join(',')}}`),
    fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(', ')}]`),
  ),
})).value;

const argumentsValue = fc.oneof(
  { weight: 5, arbitrary: jsonText.filter((t) => t.startsWith('{')) },
  { weight: 1, arbitrary: jsonText },
  // Not JSON: json.loads raises, and so does the render.
  { weight: 1, arbitrary: fc.constantFrom('{', '{"a": }', '', 'nul') },
  // Dict arguments (no floats or integer-like keys: a JS object cannot carry those as Python does).
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom('cmd', 'path', 'n'), fc.oneof(text, fc.integer())) },
);

const toolCall = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      id: fc.constantFrom('call_0', 'call_1'),
      type: fc.constant('function'),
      function: fc.record({
        name: fc.constantFrom('bash', 'read_file', 'ünïcode'),
        arguments: argumentsValue,
      }),
    }),
  },
  // No `function`: the template reads `name` and `arguments` off the call itself, unparsed.
  { weight: 1, arbitrary: fc.record({ name: fc.constantFrom('bash', 7), arguments: argumentsValue }) },
);

const content = fc.oneof(
  { weight: 8, arbitrary: text },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: fc.constant([{ type: 'text', text: 'part' }]) },
);

const user = fc.record({
  role: fc.constant('user'),
  content: fc.oneof(
    { weight: 4, arbitrary: text },
    { weight: 1, arbitrary: text.map((t) => `<tool_response>${t}</tool_response>`) },
  ),
});
// A first system message's content is concatenated: anything but a string raises.
const system = fc.record({
  role: fc.constant('system'),
  content: fc.oneof({ weight: 9, arbitrary: text }, { weight: 1, arbitrary: fc.constant(null) }),
});
const tool = fc.record({ role: fc.constant('tool'), content, tool_call_id: fc.constant('call_0') });
const assistant = fc.record(
  {
    role: fc.constant('assistant'),
    content,
    reasoning_content: fc.oneof(text, fc.constant(null)),
    tool_calls: fc.array(toolCall, { maxLength: 3 }),
  },
  { requiredKeys: ['role', 'content'] },
);

export const templateCase: fc.Arbitrary<TemplateCase> = fc.record({
  messages: fc
    .tuple(
      fc.option(system, { nil: undefined }),
      fc.array(fc.oneof({ weight: 2, arbitrary: user }, { weight: 3, arbitrary: assistant }, tool, system), {
        minLength: 1,
        maxLength: 7,
      }),
    )
    .map(([head, rest]) => (head === undefined ? rest : [head, ...rest])),
  tools: fc.constantFrom(
    [],
    [
      {
        type: 'function',
        function: { name: 'bash', description: 'Run ünïcode', parameters: { type: 'object' } },
      },
    ],
  ),
  add_generation_prompt: fc.boolean(),
  kwargs: fc.record(
    {
      enable_thinking: fc.constantFrom(true, false, null),
      clear_thinking: fc.constantFrom(true, false, null),
    },
    { requiredKeys: [] },
  ),
});
