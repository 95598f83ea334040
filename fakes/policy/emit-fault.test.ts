import { describe, expect, it } from 'vitest';
import { titoFamily } from '../tokenizer/tito.ts';
import { emitFault } from './emit-fault.ts';

/** The `fault` directive's refusals (docs/policy.md): a fault the family or the reply cannot carry. */

const reply = { role: 'assistant', content: 'I will run the tests: pytest -q' };
const call = {
  id: 'call_0',
  type: 'function',
  function: { name: 'bash', arguments: '{"cmd": "pytest -q"}' },
};

describe('the fault directive', () => {
  it('is refused on toy ids, whose render has no think block or markers', () => {
    expect(emitFault(titoFamily('default'), reply, 'stop', 'char_tokens')).toBe(
      "directive fault char_tokens: the default family's ids cannot express it (Qwen3 only)",
    );
  });

  it('is refused when the reply cannot carry the fault', () => {
    const qwen3 = titoFamily('qwen3');
    expect(emitFault(qwen3, reply, 'stop', 'tool_call_zero_args')).toBe(
      'directive fault tool_call_zero_args: the reply carries no tool call',
    );
    expect(emitFault(qwen3, { ...reply, tool_calls: [call] }, 'tool_calls', 'tool_call_literal_end')).toBe(
      'directive fault tool_call_literal_end: no argument holds </tool_call>',
    );
    expect(
      emitFault(qwen3, { ...reply, tool_calls: [call] }, 'tool_calls', 'tool_call_numbers_as_strings'),
    ).toBe('directive fault tool_call_numbers_as_strings: no argument holds a number');
    expect(emitFault(qwen3, { ...reply, tool_calls: [call] }, 'tool_calls', 'char_tokens')).toBe(
      'directive fault char_tokens: the reply carries tool calls',
    );
  });
});
