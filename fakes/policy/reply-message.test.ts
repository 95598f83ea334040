import { describe, expect, it } from 'vitest';
import { scriptedMessage, syntheticMessage } from './reply-message.ts';

/**
 * The message a 200 answer carries (docs/policy.md "The directive header"): a directive's content,
 * reasoning and tool calls replace the scripted ones; tool calls take SGLang's shape (`call_k`,
 * `function`, arguments a JSON string) and make a synthetic reply finish `tool_calls`; a named finish
 * reason wins.
 */

const CALLS = [
  { name: 'bash', arguments: '{"cmd": "ls"}' },
  { name: 'done', arguments: '{}' },
];
const SGLANG_CALLS = [
  { id: 'call_0', type: 'function', function: { name: 'bash', arguments: '{"cmd": "ls"}' } },
  { id: 'call_1', type: 'function', function: { name: 'done', arguments: '{}' } },
];

describe('reply messages', () => {
  it('a scripted turn: a copy of its message, the directive overriding what it names', () => {
    const reply = { message: { role: 'assistant', content: 'old', extra: [1] }, finish_reason: 'stop' };
    const plain = scriptedMessage(reply, null);
    expect(plain).toEqual({ message: reply.message, finishReason: 'stop' });
    expect(plain.message).not.toBe(reply.message);
    expect(plain.message.extra).not.toBe(reply.message.extra);
    const steered = scriptedMessage(reply, {
      content: 'new',
      reasoning_content: 'why',
      tool_calls: CALLS,
      finish_reason: 'abort',
    });
    expect(steered).toEqual({
      message: {
        role: 'assistant',
        content: 'new',
        extra: [1],
        reasoning_content: 'why',
        tool_calls: SGLANG_CALLS,
      },
      finishReason: 'abort',
    });
    expect(scriptedMessage(reply, { completion_words: 3 })).toEqual(plain);
  });

  it('the synthetic reply: `stop`, or `tool_calls` when the directive gives calls, unless it names one', () => {
    const reply = { content: 'text', reasoningContent: null };
    expect(syntheticMessage(reply, null)).toEqual({
      message: { role: 'assistant', content: 'text', reasoning_content: null, tool_calls: null },
      finishReason: 'stop',
    });
    expect(syntheticMessage(reply, { tool_calls: CALLS })).toEqual({
      message: { role: 'assistant', content: 'text', reasoning_content: null, tool_calls: SGLANG_CALLS },
      finishReason: 'tool_calls',
    });
    expect(syntheticMessage(reply, { tool_calls: CALLS, finish_reason: 'length' }).finishReason).toBe(
      'length',
    );
    expect(syntheticMessage(reply, { finish_reason: 'abort' }).finishReason).toBe('abort');
  });
});
