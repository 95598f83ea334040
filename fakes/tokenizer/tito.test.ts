import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IdBuffer } from './id-buffer.ts';
import { titoFamily } from './tito.ts';
import { SPECIAL, wordTokenId } from './toy-tokenizer.ts';

const w = (text: string) => text.split(' ').map(wordTokenId);

describe('default TITO family', () => {
  const family = titoFamily('default');

  it('renders a root prompt with the generation token and a completion with the end token', () => {
    const prompt = family.renderPrompt(
      [
        { role: 'system', content: 's' },
        { role: 'user', content: 'u' },
      ],
      {},
    );
    expect(prompt).toEqual([SPECIAL.system, ...w('s'), SPECIAL.user, ...w('u'), SPECIAL.assistant]);
    expect(family.completionIds({ role: 'assistant', content: 'a b' })).toEqual([...w('a b'), SPECIAL.end]);
  });

  it('extends by plain concatenation and never trims', () => {
    expect(family.mergeTokens([1, 2, 5], [{ role: 'tool', content: 'out' }], {})).toEqual([
      1,
      2,
      5,
      SPECIAL.tool,
      ...w('out'),
      SPECIAL.assistant,
    ]);
    expect(family.maxTrimTokens).toBe(0);
    expect(family.allowedAppendRoles).toEqual(['assistant', 'system', 'tool', 'user']);
  });

  it('adds an empty thinking block when enable_thinking is false', () => {
    expect(family.renderPrompt([], { enable_thinking: false })).toEqual([
      SPECIAL.assistant,
      SPECIAL.emptyThink,
    ]);
  });
});

describe('glm47 TITO family', () => {
  const family = titoFamily('glm47');

  it('stops replies on <|observation|> after tool calls and on <|user|> otherwise', () => {
    expect(family.completionIds({ role: 'assistant', content: 'x' })).toEqual([...w('x'), SPECIAL.glmUser]);
    const withTool = { role: 'assistant', content: '', tool_calls: [{ function: { name: 'f' } }] };
    expect(family.completionIds(withTool).at(-1)).toBe(SPECIAL.glmObservation);
  });

  it('drops a trailing <|user|> or <|observation|> at the junction (max_trim_tokens 1)', () => {
    const suffix = [{ role: 'tool', content: 'out' }];
    const tail = [SPECIAL.glmObservation, ...w('out'), SPECIAL.assistant];
    expect(family.mergeTokens([1, 1001, SPECIAL.glmUser], suffix, {})).toEqual([1, 1001, ...tail]);
    expect(family.mergeTokens([1, 1001, SPECIAL.glmObservation], suffix, {})).toEqual([1, 1001, ...tail]);
    expect(family.mergeTokens([1, 1001, SPECIAL.end], suffix, {})).toEqual([1, 1001, SPECIAL.end, ...tail]);
    expect(family.maxTrimTokens).toBe(1);
  });
});

describe('canonical render into a reused buffer', () => {
  // What canonicalRender returned before it wrote into a caller's buffer: each message's render, the
  // default family closing every assistant message with its end token, glm47 only the last one with its
  // stop token (`<|observation|>` after tool calls, else `<|user|>`).
  const families = { default: titoFamily('default'), glm47: titoFamily('glm47') };
  const reference = { default: titoFamily('default').tokenizer, glm47: titoFamily('glm47').tokenizer };
  const before = (model: 'default' | 'glm47', messages: readonly Record<string, unknown>[]) => {
    const tok = reference[model];
    const out: number[] = [];
    for (const m of messages) {
      for (const id of tok.renderMessage(m)) out.push(id);
      if (model === 'default' && m.role === 'assistant') out.push(SPECIAL.end);
    }
    const last = messages.at(-1);
    if (model === 'glm47' && last?.role === 'assistant') {
      const calls = last.tool_calls;
      out.push(Array.isArray(calls) && calls.length > 0 ? SPECIAL.glmObservation : SPECIAL.glmUser);
    }
    return out;
  };
  const text = fc
    .array(fc.constantFrom('a', 'bb', 'é', '"q"', ' ', '\n', '\x85'), { maxLength: 12 })
    .map((p) => p.join(''));
  const message = fc.record(
    {
      role: fc.constantFrom('system', 'user', 'assistant', 'tool', 'developer'),
      content: text,
      reasoning_content: text,
      tool_calls: fc.array(fc.record({ function: fc.record({ name: text, arguments: text }) }), {
        maxLength: 2,
      }),
    },
    { requiredKeys: ['role'] },
  );

  it('gives what the message-by-message render gave, conversation after conversation', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('default' as const, 'glm47' as const),
        fc.array(fc.array(message, { maxLength: 6 }), { minLength: 1, maxLength: 4 }),
        (model, conversations) => {
          const family = families[model];
          const buffer = new IdBuffer(4);
          for (const messages of conversations) {
            buffer.clear();
            family.canonicalRenderInto(buffer, messages);
            expect([...buffer.view()]).toEqual(before(model, messages));
          }
        },
      ),
    );
  });
});
