import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJson } from '../common/python-json/loads.ts';
import { IdBuffer } from '../fakes/tokenizer/id-buffer.ts';
import { titoFamily } from '../fakes/tokenizer/tito.ts';
import type { ToyTokenizer } from '../fakes/tokenizer/toy-tokenizer.ts';
import { TOY_TOKENIZER } from './entry-points.ts';

/**
 * The toy tokenizer's two copies against each other: the Python one Miles runs on in toy mode
 * (toy_tokenizer.py, and toy_tito.py's `default` family rendering) and the TypeScript one of the fake
 * (fakes/tokenizer/toy-tokenizer.ts, tito.ts `titoFamily('default')`), on the same generated
 * conversations: each message's render, a fresh prompt (with and without `enable_thinking`), a child
 * prompt over a parent snapshot, the canonical render, and the decode of all of them plus ids neither
 * knows. Both follow fixtures/conformance/README.md; a rule changed in one copy only fails here, in
 * `npm test`, not only in the gated Miles suite. One Python process answers every case. toy_tito.py
 * imports two Miles modules at its top that its rendering does not use (the append-only check is Miles'
 * own code, and every case here appends): the driver stands them in.
 */

const PYTHON = process.env.HARNESS_MILES_PYTHON ?? '/usr/bin/python3';
const python = spawnSync(PYTHON, ['-c', 'pass'], { stdio: 'ignore' });
const missing = python.status === 0 ? null : `${PYTHON} cannot run`;
if (missing !== null) console.warn(`[skip] toy tokenizer, Python against TypeScript: ${missing}`);

const DRIVER = `
import json, sys, types
sys.path.insert(0, sys.argv[1])
def module(name, **attrs):
    m = types.ModuleType(name); m.__dict__.update(attrs); m.__path__ = []; sys.modules[name] = m; return m
for name in ("miles", "miles.utils", "miles.utils.chat_template_utils"):
    module(name)
module("miles.utils.chat_template_utils.message_matcher_hub", assert_messages_append_only_with_allowed_role=lambda *a: None)
module("miles.utils.chat_template_utils.token_seq_comparator", TokenSeqComparator=object)
from toy_tokenizer import ToyTokenizer
from toy_tito import FOUR_ROLES, _render, _render_appended
out = []
tok = ToyTokenizer()  # one for every case, as the TypeScript side: both learn the same words in order
for case in json.load(sys.stdin):
    messages, kwargs, cut = case["messages"], case["kwargs"], case["cut"]
    parent = _render(tok, messages[:cut], True, kwargs)
    ids = {
        "messages": [tok.render_message(m) for m in messages],
        "prompt": _render(tok, messages, True, kwargs),
        "child": parent + _render_appended(tok, messages[:cut], messages, FOUR_ROLES, kwargs),
        "canonical": _render(tok, messages, False, {}),
    }
    ids["decoded"] = tok.decode(ids["canonical"] + case["extra_ids"])
    out.append(ids)
print(json.dumps(out))
`;

// Words that reach the rules' edges: Python's whitespace (str.split) beside non-ASCII and non-BMP text,
// JSON-ish pieces, and role names outside the four.
const word = fc.constantFrom(
  'ls',
  'cd /tmp',
  'é',
  'naïve',
  '😀',
  '中文',
  '{"k":',
  'a\u3000b',
  'x\u2028y',
  'tab\there',
  ' ',
  '\n',
  '',
);
const text = fc.array(word, { maxLength: 8 }).map((ws) => ws.join(' '));
const content = fc.oneof(
  text,
  fc.constant(null),
  fc.array(
    fc.oneof(fc.record({ type: fc.constant('text'), text }), fc.record({ type: fc.constant('image') })),
    {
      maxLength: 3,
    },
  ),
);
const toolCall = fc.record({
  id: fc.constant('call_1'),
  type: fc.constant('function'),
  function: fc.record({
    name: fc.constantFrom('bash', 'écrire'),
    arguments: text.map((t) => JSON.stringify({ cmd: t, n: 1.5 })),
  }),
});
const message = fc.record(
  {
    role: fc.constantFrom('system', 'user', 'assistant', 'tool', 'developer'),
    content,
    reasoning_content: text,
    tool_calls: fc.array(toolCall, { maxLength: 2 }),
  },
  { requiredKeys: ['role'] },
);
const conversationCase = fc
  .record({
    messages: fc.array(message, { minLength: 1, maxLength: 6 }),
    kwargs: fc.constantFrom({}, { enable_thinking: false }, { enable_thinking: true }),
    extra_ids: fc.array(fc.constantFrom(1, 5, 7, 9, 42, 999, 1000, 1234, 100_999), { maxLength: 4 }),
  })
  .chain((c) => fc.integer({ min: 0, max: c.messages.length }).map((cut) => ({ ...c, cut })));

interface PythonAnswer {
  readonly messages: number[][];
  readonly prompt: number[];
  readonly child: number[];
  readonly canonical: number[];
  readonly decoded: string;
}

describe.skipIf(missing !== null)('the toy tokenizer, Python against TypeScript', () => {
  it('renders, merges and decodes generated conversations to the same ids and text (seed 20261205)', () => {
    const cases = fc.sample(conversationCase, { numRuns: 300, seed: 20261205 });
    const run = spawnSync(PYTHON, ['-c', DRIVER, dirname(TOY_TOKENIZER)], {
      input: JSON.stringify(cases),
      encoding: 'utf8',
    });
    expect(run.stderr).toBe('');
    const expected = parseJson(run.stdout) as PythonAnswer[];
    const family = titoFamily('default');
    const tok: ToyTokenizer = family.tokenizer;
    const actual = cases.map((c): PythonAnswer => {
      const parent = family.renderPrompt(c.messages.slice(0, c.cut), c.kwargs);
      const canonical = new IdBuffer();
      family.canonicalRenderInto(canonical, c.messages);
      const canonicalIds = canonical.toArray();
      return {
        messages: c.messages.map((m) => tok.renderMessage(m)),
        prompt: family.renderPrompt(c.messages, c.kwargs),
        child: family.mergeTokens(parent, c.messages.slice(c.cut), c.kwargs),
        canonical: canonicalIds,
        decoded: tok.decode([...canonicalIds, ...c.extra_ids]),
      };
    });
    expect(actual).toEqual(expected);
    // The draw reached what the rules distinguish: tool calls, list content, a non-four role, no thinking.
    const all = cases.flatMap((c) => c.messages);
    expect(all.filter((m) => (m.tool_calls?.length ?? 0) > 0).length).toBeGreaterThan(50);
    expect(all.filter((m) => Array.isArray(m.content)).length).toBeGreaterThan(50);
    expect(all.filter((m) => m.role === 'developer').length).toBeGreaterThan(20);
    expect(cases.filter((c) => c.kwargs.enable_thinking === false).length).toBeGreaterThan(30);
  });
});
