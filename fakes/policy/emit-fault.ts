import type { EmitFault } from '../../contracts/directive.ts';
import { QWEN3_IDS, qwen3Tokenizer } from '../tokenizer/qwen3-tokenizer.ts';
import type { TitoFamily } from '../tokenizer/tito.ts';

/**
 * The directive's `fault`: a reply whose sampled ids and parsed message disagree the way the field reports
 * (docs/field-failures.md; each case names its catalogue row). The ids are what the engine samples
 * (`output_token_logprobs`), the message what its parsers return; the agent re-sends the message, so the
 * session's stored ids and its render of the history differ. Qwen3 only: on toy ids a word is one id and
 * the toy render has no think block or tool-call markers (replay/faults/kinds.ts).
 */

type Message = Record<string, unknown>;

export interface FaultyReply {
  readonly ids: number[];
  readonly message: Message;
  readonly finishReason: string;
}

const TOOL_CALL_TEXT = '<tool_call>';
const TOOL_CALL_END_TEXT = '</tool_call>';
/** A JSON number after a key, not already in quotes: `"timeout": 30` (sgl-project/sglang#35564). */
const UNQUOTED_NUMBER = /(":\s*)(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?=\s*[,}\]])/g;

interface ToolCallWire {
  readonly id?: unknown;
  readonly type?: unknown;
  readonly function: { readonly name: string; readonly arguments: string };
}

function toolCallsOf(message: Message): ToolCallWire[] {
  return Array.isArray(message.tool_calls) ? (message.tool_calls as ToolCallWire[]) : [];
}

/** Each character of `text` encoded on its own: a tokenization the tokenizer never produces for a word. */
function charIds(text: string): number[] {
  const tokenizer = qwen3Tokenizer();
  return [...text].flatMap((ch) => tokenizer.encode(ch));
}

/** The ids without their stop token, decoded: what a parser that found no call returns as content. */
function rawText(ids: readonly number[]): string {
  const body = ids.at(-1) === QWEN3_IDS.imEnd ? ids.slice(0, -1) : ids;
  return qwen3Tokenizer().decode(body);
}

function withoutCalls(message: Message, content: string): Message {
  return { ...message, content, reasoning_content: null, tool_calls: null };
}

/** The four tool-call parser faults; each needs the reply to carry a call. */
function toolCallFault(family: TitoFamily, message: Message, fault: EmitFault): FaultyReply | string {
  const calls = toolCallsOf(message);
  if (calls.length === 0) return `directive fault ${fault}: the reply carries no tool call`;
  const ids = family.completionIds(message);
  switch (fault) {
    case 'tool_call_zero_args': {
      // vllm-project/vllm#44326: a call without arguments is dropped; the finish reason still says tool_calls.
      const zero = calls.map((c) => ({ ...c, function: { ...c.function, arguments: '{}' } }));
      const sampled = family.completionIds({ ...message, tool_calls: zero });
      return { ids: sampled, message: { ...message, tool_calls: null }, finishReason: 'tool_calls' };
    }
    case 'tool_call_literal_end': {
      // local-inference-lab/vllm#639: `</tool_call>` inside an argument is the marker token; the parser ends
      // the call there, cannot parse it, and returns the whole block as content.
      if (!calls.some((c) => c.function.arguments.includes(TOOL_CALL_END_TEXT)))
        return `directive fault ${fault}: no argument holds ${TOOL_CALL_END_TEXT}`;
      return { ids, message: withoutCalls(message, rawText(ids)), finishReason: 'stop' };
    }
    case 'tool_call_split_markers': {
      // vllm-project/vllm#58315: the markers spelled with ordinary tokens; the parser finds no call.
      const split = ids.flatMap((id) =>
        id === QWEN3_IDS.toolCall
          ? charIds(TOOL_CALL_TEXT)
          : id === QWEN3_IDS.toolCallEnd
            ? charIds(TOOL_CALL_END_TEXT)
            : [id],
      );
      return { ids: split, message: withoutCalls(message, rawText(split)), finishReason: 'stop' };
    }
    default: {
      // sgl-project/sglang#35564: the parser returns the sampled numbers as strings.
      const quoted = calls.map((c) => ({
        ...c,
        function: { ...c.function, arguments: c.function.arguments.replace(UNQUOTED_NUMBER, '$1"$2"') },
      }));
      if (quoted.every((c, k) => c.function.arguments === calls[k]!.function.arguments))
        return `directive fault ${fault}: no argument holds a number`;
      return { ids, message: { ...message, tool_calls: quoted }, finishReason: 'tool_calls' };
    }
  }
}

/** The reply with the fault, or the reason it cannot have it (answered 400, as `end_token` is). */
export function emitFault(
  family: TitoFamily,
  message: Message,
  finishReason: string,
  fault: EmitFault,
): FaultyReply | string {
  if (family.model !== 'qwen3')
    return `directive fault ${fault}: the ${family.model} family's ids cannot express it (Qwen3 only)`;
  if (fault === 'think_in_content') {
    // radixark/miles#3113: no reasoning parser, so the think block the model wrote stays in the content.
    const ids = family.completionIds(message);
    const reasoning = typeof message.reasoning_content === 'string' ? message.reasoning_content : '';
    const content = typeof message.content === 'string' ? message.content : '';
    const shown = {
      ...message,
      content: `<think>\n${reasoning}\n</think>\n\n${content}`,
      reasoning_content: null,
    };
    return { ids, message: shown, finishReason };
  }
  if (fault === 'char_tokens') {
    // rllm-org/rllm#272: a non-canonical tokenization of the content, one token per character.
    if (toolCallsOf(message).length > 0) return `directive fault ${fault}: the reply carries tool calls`;
    const content = typeof message.content === 'string' ? message.content : '';
    const prefix = family.completionIds({ ...message, content: '' }).slice(0, -1);
    return { ids: [...prefix, ...charIds(content), QWEN3_IDS.imEnd], message, finishReason };
  }
  return toolCallFault(family, message, fault);
}
