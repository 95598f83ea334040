import { describe, expect, it } from 'vitest';
import { PythonFloat } from '../../common/python-json/values.ts';
import { MatcherError, strictMatch } from './matcher.ts';

describe('strict matcher', () => {
  it('compares a float from a request equal to the same number from a reply, as Python does (1.0 == 1)', () => {
    const call = (x: unknown) => ({
      role: 'assistant',
      content: '',
      tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: { x } } }],
    });
    expect(strictMatch(call(new PythonFloat(1)), call(1))).toBe(true);
    expect(strictMatch(call(new PythonFloat(1.5)), call(1))).toBe(false);
  });

  it('compares only role, content, reasoning_content and tool_calls', () => {
    expect(
      strictMatch(
        { role: 'tool', content: 'x', tool_call_id: 'a', name: 'n' },
        { role: 'tool', content: 'x' },
      ),
    ).toBe(true);
    expect(strictMatch({ role: 'user', content: 'x' }, { role: 'user', content: 'y' })).toBe(false);
    expect(
      strictMatch(
        { role: 'assistant', content: 'x' },
        { role: 'assistant', content: 'x', reasoning_content: 'r' },
      ),
    ).toBe(false);
  });

  it('treats null, "" and [] as absent', () => {
    const a = { role: 'assistant', content: '', tool_calls: null, reasoning_content: null };
    expect(strictMatch(a, { role: 'assistant', tool_calls: [] })).toBe(true);
  });

  it('drops tool-call index, ignores key order, keeps list order and argument bytes', () => {
    const call = (extra: object, args = '{"a": 1}') => ({
      id: 'c',
      type: 'function',
      function: { name: 'f', arguments: args },
      ...extra,
    });
    const stored = { role: 'assistant', content: '', tool_calls: [call({ index: 0 })] };
    expect(strictMatch(stored, { content: '', role: 'assistant', tool_calls: [call({})] })).toBe(true);
    expect(strictMatch(stored, { role: 'assistant', tool_calls: [call({}, '{"a":1}')] })).toBe(false);
    const two = { role: 'assistant', tool_calls: [call({ id: 'x' }), call({ id: 'y' })] };
    const swapped = { role: 'assistant', tool_calls: [call({ id: 'y' }), call({ id: 'x' })] };
    expect(strictMatch(two, swapped)).toBe(false);
  });

  it('follows Python == for numbers and booleans', () => {
    expect(strictMatch({ role: 'user', content: [{ n: 1 }] }, { role: 'user', content: [{ n: true }] })).toBe(
      true,
    );
    expect(strictMatch({ role: 'user', content: [{ n: 1 }] }, { role: 'user', content: [{ n: '1' }] })).toBe(
      false,
    );
  });

  it('raises for a message that is not an object', () => {
    expect(() => strictMatch('user', { role: 'user' })).toThrow(MatcherError);
  });
});
