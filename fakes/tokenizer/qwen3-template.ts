import { pythonJsonDumps } from '../../common/python-json/dumps.ts';
import { pythonJsonRedump, type RedumpedJson } from '../../common/python-json/redump.ts';
import { isJsonObject, pythonRepr, pythonTruthy } from '../../common/python-json/values.ts';

/**
 * Miles' Qwen3 chat template, `qwen3_fixed.jinja` (radixark/miles@31f1ca96
 * miles/utils/chat_template_utils/templates/qwen3_fixed.jinja; a copy with its provenance is
 * fixtures/templates/qwen3_fixed.jinja), rendered as Miles renders it: `normalize_tool_arguments(…,
 * "dict")` first (template.py: an assistant's `content: None` becomes `""`, string tool arguments are
 * `json.loads`ed), then HF's `render_jinja_template` (Python jinja2, its own `tojson` =
 * `json.dumps(ensure_ascii=False)`).
 *
 * A direct TypeScript rendering of that one template rather than a general Jinja engine: the JS engine
 * (`@huggingface/jinja` 0.5.11) ignores `strip('\n')`'s argument and prints numbers as JS does, and
 * the template's semantics are small. Python's behaviour is kept where it shows: `is string` tests,
 * `str.split/strip` with an argument, Python truthiness, `str()` of a non-string name, and tool
 * arguments re-dumped from their text (key order, `1.0`, `-0.0`, big integers: common/python-json/redump.ts).
 * Checked byte for byte against Python jinja2 (qwen3-template.test.ts, qwen3-template.python.test.ts).
 *
 * Tools are printed as given: the qwen3 family canonicalizes them first, as Miles' `extract_tool_dicts`
 * does (tool-dicts.ts).
 */

export interface Qwen3RenderOptions {
  readonly addGenerationPrompt: boolean;
  readonly tools?: unknown;
  /** Template kwargs (`enable_thinking`, `clear_thinking`, …). */
  readonly kwargs?: Readonly<Record<string, unknown>>;
}

/** A template failure (jinja2's `TemplateError`, a `TypeError`, a `JSONDecodeError`): Miles fails too. */
export class TemplateRenderError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'TemplateRenderError';
  }
}

type Message = Record<string, unknown>;

/** A tool call after normalization: its `arguments`, parsed when they were a JSON string. */
interface ToolCallView {
  readonly name: unknown;
  readonly arguments: RedumpedJson | { readonly kind: 'value'; readonly value: unknown } | undefined;
}

/** `normalize_tool_arguments(messages, "dict")`, read-only: the tool calls each assistant shows. */
function normalizedToolCalls(message: Message): ToolCallView[] | null {
  const calls = message.tool_calls;
  if (!pythonTruthy(calls)) return null;
  if (!Array.isArray(calls)) {
    // jinja2 iterates a dict's keys or a string's characters, and `Undefined | tojson` then raises.
    throw new TemplateRenderError(`Object of type Undefined is not JSON serializable`);
  }
  return calls.map((item) => {
    if (!isJsonObject(item)) {
      throw new TemplateRenderError(`'${pythonTypeOf(item)}' object has no attribute 'get'`);
    }
    const fn = item.function;
    // `if tool_call.function`: a truthy function object replaces the call; otherwise the call itself.
    if (pythonTruthy(fn)) {
      if (!isJsonObject(fn))
        throw new TemplateRenderError(`'${pythonTypeOf(fn)}' object has no attribute 'get'`);
      return { name: fn.name, arguments: argumentsOf(fn, true) };
    }
    return { name: item.name, arguments: argumentsOf(item, false) };
  });
}

function argumentsOf(holder: Message, normalized: boolean): ToolCallView['arguments'] {
  if (!('arguments' in holder)) return undefined;
  const args = holder.arguments;
  // Only a truthy `function`'s arguments are parsed by the normalization.
  if (normalized && typeof args === 'string') {
    try {
      return pythonJsonRedump(args);
    } catch (error) {
      throw new TemplateRenderError((error as Error).message);
    }
  }
  return { kind: 'value', value: args };
}

function pythonTypeOf(v: unknown): string {
  if (v === null) return 'NoneType';
  if (typeof v === 'string') return 'str';
  if (typeof v === 'boolean') return 'bool';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int' : 'float';
  if (Array.isArray(v)) return 'list';
  return 'dict';
}

/** What `{{ value }}` prints: `str(value)`, nothing for an undefined. */
function printed(value: unknown): string {
  if (value === undefined) return '';
  return typeof value === 'string' ? value : pythonRepr(value);
}

/** `value | tojson` with HF's filter (`json.dumps(x, ensure_ascii=False)`). */
function tojson(value: unknown): string {
  if (value === undefined) throw new TemplateRenderError('Object of type Undefined is not JSON serializable');
  return pythonJsonDumps(value, { ensureAscii: false });
}

function argumentsText(args: ToolCallView['arguments']): string {
  if (args === undefined) return tojson(undefined);
  if (args.kind === 'string') return args.value;
  if (args.kind === 'other') return args.json;
  return typeof args.value === 'string' ? args.value : tojson(args.value);
}

/** Python's `s.strip(chars)` family for a one-character set. */
function lstripChar(s: string, ch: string): string {
  let i = 0;
  while (i < s.length && s[i] === ch) i += 1;
  return s.slice(i);
}

function rstripChar(s: string, ch: string): string {
  let j = s.length;
  while (j > 0 && s[j - 1] === ch) j -= 1;
  return s.slice(0, j);
}

/** `'<|im_start|>system\n' + x`: Python's `str + x` needs a string. */
function concatText(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) throw new TemplateRenderError("'dict object' has no attribute 'content'");
  throw new TemplateRenderError(`can only concatenate str (not "${pythonTypeOf(value)}") to str`);
}

function roleOf(message: Message): unknown {
  return message.role;
}

/** The rendered text of `messages` (what `apply_chat_template(..., tokenize=False)` returns in Miles). */
export function renderQwen3(messages: readonly unknown[], options: Qwen3RenderOptions): string {
  const kwargs = options.kwargs ?? {};
  const msgs: Message[] = messages.map((m) => {
    if (!isJsonObject(m)) throw new TemplateRenderError(`'${pythonTypeOf(m)}' object has no attribute 'get'`);
    return m;
  });
  // Each assistant's tool calls are normalized before rendering, for every message (as Miles does).
  const toolCalls = msgs.map((m) => (roleOf(m) === 'assistant' ? normalizedToolCalls(m) : null));
  const first = msgs[0];
  if (first === undefined) throw new TemplateRenderError("'list object' has no attribute 'role'");
  let out = '';
  if (pythonTruthy(options.tools)) {
    out += '<|im_start|>system\n';
    if (roleOf(first) === 'system') out += `${concatText(first.content)}\n\n`;
    out +=
      '# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>';
    for (const tool of iterate(options.tools)) out += `\n${tojson(tool)}`;
    out +=
      '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n';
  } else if (roleOf(first) === 'system') {
    out += `<|im_start|>system\n${concatText(first.content)}<|im_end|>\n`;
  }
  // The last user query: the latest user message that is not a wrapped tool response.
  let lastQueryIndex = msgs.length - 1;
  for (let index = msgs.length - 1; index >= 0; index -= 1) {
    const m = msgs[index]!;
    const content = m.content;
    if (
      roleOf(m) === 'user' &&
      typeof content === 'string' &&
      !(content.startsWith('<tool_response>') && content.endsWith('</tool_response>'))
    ) {
      lastQueryIndex = index;
      break;
    }
  }
  const keepThinking = !pythonTruthy('clear_thinking' in kwargs ? kwargs.clear_thinking : true);
  msgs.forEach((message, index) => {
    const role = roleOf(message);
    let content = typeof message.content === 'string' ? message.content : '';
    // normalize_tool_arguments: an assistant's `content: None` is "" (already '' above).
    if (role === 'user' || (role === 'system' && index > 0)) {
      out += `<|im_start|>${role}\n${content}<|im_end|>\n`;
    } else if (role === 'assistant') {
      let reasoning = '';
      if (typeof message.reasoning_content === 'string') reasoning = message.reasoning_content;
      else if (content.includes('</think>')) {
        reasoning = lstripChar(
          rstripChar(content.split('</think>')[0]!, '\n').split('<think>').at(-1)!,
          '\n',
        );
        content = lstripChar(content.split('</think>').at(-1)!, '\n');
      }
      if (keepThinking || index > lastQueryIndex) {
        out += `<|im_start|>${role}\n<think>\n${rstripChar(lstripChar(reasoning, '\n'), '\n')}\n</think>\n\n${lstripChar(content, '\n')}`;
      } else {
        out += `<|im_start|>${role}\n${content}`;
      }
      const calls = toolCalls[index];
      if (calls !== null && calls !== undefined) {
        calls.forEach((call, k) => {
          if ((k === 0 && content !== '') || k > 0) out += '\n';
          out += `<tool_call>\n{"name": "${printed(call.name)}", "arguments": ${argumentsText(call.arguments)}}\n</tool_call>`;
        });
      }
      out += '<|im_end|>\n';
    } else if (role === 'tool') {
      if (index === 0 || roleOf(msgs[index - 1]!) !== 'tool') out += '<|im_start|>user';
      out += `\n<tool_response>\n${content}\n</tool_response>`;
      if (index === msgs.length - 1 || roleOf(msgs[index + 1]!) !== 'tool') out += '<|im_end|>\n';
    }
  });
  if (options.addGenerationPrompt) {
    out += '<|im_start|>assistant\n';
    if (kwargs.enable_thinking === false) out += '<think>\n\n</think>\n\n';
  }
  return out;
}

/** What a jinja2 `for` walks: a list's items, a dict's keys, a string's characters. */
function iterate(value: unknown): readonly unknown[] {
  if (Array.isArray(value)) return value;
  if (typeof value === 'string') return [...value];
  if (isJsonObject(value)) return Object.keys(value);
  throw new TemplateRenderError(`'${pythonTypeOf(value)}' object is not iterable`);
}
