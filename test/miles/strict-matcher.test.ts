import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { strictMatch } from '../../fakes/session/matcher.ts';
import { milesGate } from './gate.ts';

// The fake's strict matcher (fakes/session/matcher.ts: keys instead of pairwise comparison) against
// Miles' own `strict_message_matches` from MILES_ROOT (only the standard library is needed).
const gate = await milesGate({});
const ready = gate.unmet.length === 0;
if (!ready && !gate.required)
  console.warn(
    `[skip] miles strict matcher: ${gate.unmet.join('; ')} (HARNESS_MILES_REQUIRED=1 fails instead)`,
  );

// Miles' own `strict_message_matches` as the oracle (its package's heavy `__init__` imports skipped).
const MILES_STRICT = `
import importlib, json, sys, types
root = sys.argv[1] + '/miles/utils/chat_template_utils/message_matcher_hub'
for name, path in [('miles', None), ('miles.utils', None), ('miles.utils.chat_template_utils', None),
                   ('miles.utils.chat_template_utils.message_matcher_hub', root)]:
    m = types.ModuleType(name); m.__path__ = [path] if path else []; sys.modules[name] = m
funcs = importlib.import_module('miles.utils.chat_template_utils.message_matcher_hub.funcs')
print(json.dumps([funcs.strict_message_matches(a, b) for a, b in json.load(sys.stdin)]))
`;

describe.skipIf(!ready && !gate.required)('strict matcher against Miles', () => {
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
      execFileSync(gate.python, ['-c', MILES_STRICT, gate.milesRoot], {
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
