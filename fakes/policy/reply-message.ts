import type { Directive } from '../../contracts/directive.ts';
import type { TraceReply } from '../../contracts/trace.ts';
import type { SyntheticReply } from './synthetic.ts';

/**
 * The assistant message a 200 answer carries and its finish reason, before any cut at `max_tokens`
 * (length-cut.ts): a scripted turn's message or the synthetic reply, with the directive's overrides.
 */

export interface ReplyMessage {
  readonly message: Record<string, unknown>;
  readonly finishReason: string;
}

/** A scripted turn's message (a copy) with the directive's overrides; its finish reason unless the directive names one. */
export function scriptedMessage(reply: TraceReply, directive: Directive | null): ReplyMessage {
  return {
    message: overrideMessage(structuredClone(reply.message) as Record<string, unknown>, directive),
    finishReason: directive?.finish_reason ?? reply.finish_reason,
  };
}

/**
 * The synthetic reply as an assistant message. A reply with tool calls finishes `tool_calls`, SGLang's
 * finish reason for a reply its tool-call parser found calls in; the directive's finish reason wins.
 */
export function syntheticMessage(reply: SyntheticReply, directive: Directive | null): ReplyMessage {
  return {
    message: {
      role: 'assistant',
      content: reply.content,
      reasoning_content: reply.reasoningContent,
      tool_calls: directive?.tool_calls === undefined ? null : toolCallsOf(directive.tool_calls),
    },
    finishReason: directive?.finish_reason ?? (directive?.tool_calls === undefined ? 'stop' : 'tool_calls'),
  };
}

/** Applies a directive's message overrides (content, reasoning, tool calls) to a reply message. */
function overrideMessage(
  message: Record<string, unknown>,
  directive: Directive | null,
): Record<string, unknown> {
  if (directive === null) return message;
  const out = { ...message };
  if (directive.content !== undefined) out.content = directive.content;
  if (directive.reasoning_content !== undefined) out.reasoning_content = directive.reasoning_content;
  if (directive.tool_calls !== undefined) out.tool_calls = toolCallsOf(directive.tool_calls);
  return out;
}

/** A directive's tool calls as SGLang's tool-call parser returns them (arguments stay a JSON string). */
function toolCallsOf(calls: NonNullable<Directive['tool_calls']>): Record<string, unknown>[] {
  return calls.map((call, k) => ({
    id: `call_${k}`,
    type: 'function',
    function: { name: call.name, arguments: call.arguments },
  }));
}
