import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PythonFloat } from '../../common/python-json.ts';
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

// Miles' own `strict_message_matches` as the oracle (its package's heavy `__init__` imports skipped).
const MILES_STRICT = `
import importlib, json, sys, types
root = '/work/ext/miles/miles/utils/chat_template_utils/message_matcher_hub'
for name, path in [('miles', None), ('miles.utils', None), ('miles.utils.chat_template_utils', None),
                   ('miles.utils.chat_template_utils.message_matcher_hub', root)]:
    m = types.ModuleType(name); m.__path__ = [path] if path else []; sys.modules[name] = m
funcs = importlib.import_module('miles.utils.chat_template_utils.message_matcher_hub.funcs')
print(json.dumps([funcs.strict_message_matches(a, b) for a, b in json.load(sys.stdin)]))
`;

describe('strict matcher against Miles', () => {
  it('matches exactly when strict_message_matches does, on messages built to collide', () => {
    // Texts and values that a careless key would confuse: separators, quotes, lengths, 1 / 1.0 / true.
    const text = fc.constantFrom('', 'a', 'a|b', 'a:', '1:a', 's1:a', '"a"', 'a,b', '{}', '[]', 'é');
    const scalar = fc.oneof(text, fc.constantFrom(0, 1, true, false, null, 2.5));
    const json = fc.oneof(
      scalar,
      fc.array(scalar, { maxLength: 2 }),
      fc.dictionary(text, scalar, { maxKeys: 2 }),
    );
    const call = fc.record(
      { id: text, index: fc.nat(2), function: fc.record({ name: text, arguments: json }) },
      { requiredKeys: ['function'] },
    );
    const message = fc.record(
      {
        role: fc.constantFrom('user', 'assistant', 'tool'),
        content: fc.oneof(text, fc.array(json, { maxLength: 2 })),
        reasoning_content: fc.oneof(text, fc.constant(null)),
        tool_calls: fc.oneof(fc.constant(null), fc.array(call, { maxLength: 2 })),
        name: text,
      },
      { requiredKeys: ['role'] },
    );
    const base = fc.sample(message, { numRuns: 120, seed: 5 });
    // Pairs whose fields would run together in a key without delimiting: different, though one text.
    const crafted = [
      [
        { role: 'user', content: 'x|reasoning_content=sa' },
        { role: 'user', content: 'x', reasoning_content: 'a' },
      ],
      [
        { role: 'user', content: [{ 'a"': 1 }] },
        { role: 'user', content: [{ a: '1' }] },
      ],
      [
        { role: 'user', content: ['a,sb'] },
        { role: 'user', content: ['a', 'b'] },
      ],
    ] as const;
    const pairs = [...crafted, ...base.flatMap((a, i) => base.slice(i, i + 12).map((b) => [a, b] as const))];
    const expected = JSON.parse(
      execFileSync('/usr/bin/python3', ['-c', MILES_STRICT], {
        input: JSON.stringify(pairs),
        encoding: 'utf8',
      }),
    ) as boolean[];
    expect(pairs.map(([a, b]) => strictMatch(a, b))).toEqual(expected);
    // Both answers came up: the pairs include each message with itself and near misses.
    expect(expected.filter(Boolean).length).toBeGreaterThan(120);
    expect(expected.filter((e) => !e).length).toBeGreaterThan(100);
  });
});
