import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { TemplateCase } from '../../test/helpers/qwen3-conversations.ts';
import {
  expectedRender,
  type OracleResult,
  TEMPLATE_PATH,
  tsRender,
} from '../../test/helpers/qwen3-template-oracle.ts';
import { renderQwen3 } from './qwen3-template.ts';

/**
 * The renderer against committed vectors Python's jinja2 produced on Miles' template
 * (scripts/fixtures/qwen3-template-vectors.ts), so `npm test` checks it without Python; plus examples of the
 * paths the JS Jinja engine gets wrong.
 */

const vectors = JSON.parse(
  readFileSync(new URL('../../fixtures/templates/qwen3-oracle.json', import.meta.url), 'utf8'),
) as { template_sha256: string; cases: Array<{ case: TemplateCase; result: OracleResult }> };

describe('qwen3_fixed.jinja', () => {
  it('the vectors were made from the template file shipped here', () => {
    const digest = createHash('sha256').update(readFileSync(TEMPLATE_PATH)).digest('hex');
    expect(digest).toBe(vectors.template_sha256);
  });

  const milesRoot = process.env.MILES_ROOT ?? '';
  const upstream = join(milesRoot, 'miles/utils/chat_template_utils/templates/qwen3_fixed.jinja');
  const reason = milesRoot === '' ? 'MILES_ROOT is not set' : `${upstream} does not exist`;
  if (milesRoot === '' || !existsSync(upstream)) console.warn(`[skip] template copy vs Miles: ${reason}`);
  it.skipIf(milesRoot === '' || !existsSync(upstream))(
    "the shipped copy is Miles' file byte for byte",
    () => {
      expect(readFileSync(TEMPLATE_PATH).equals(readFileSync(upstream))).toBe(true);
    },
  );

  it.each(vectors.cases.map((v, k) => [k, v] as const))('renders vector %i as Python jinja2 did', (_k, v) => {
    expect(tsRender(v.case)).toEqual(expectedRender(v.result));
  });
});

describe('the paths @huggingface/jinja renders differently', () => {
  const call = (args: string) => [
    { role: 'user', content: 'go' },
    {
      role: 'assistant',
      content: '',
      tool_calls: [{ type: 'function', function: { name: 'f', arguments: args } }],
    },
  ];
  // Miles fixes clear_thinking=False for qwen3, so every assistant shows its think block.
  const render = (messages: unknown[]) =>
    renderQwen3(messages, { addGenerationPrompt: false, kwargs: { clear_thinking: false } });

  it("strip('\\n') strips newlines only (Miles' dummy assistant has reasoning ' ')", () => {
    const text = render([{ role: 'assistant', content: '', reasoning_content: ' \n x \n\n' }]);
    expect(text).toBe('<|im_start|>assistant\n<think>\n \n x \n</think>\n\n<|im_end|>\n');
    expect(render([{ role: 'assistant', content: '', reasoning_content: ' ' }])).toBe(
      '<|im_start|>assistant\n<think>\n \n</think>\n\n<|im_end|>\n',
    );
  });

  it('tool arguments keep Python floats, -0.0, big integers and key order', () => {
    const text = render(call('{"b":1.0,"2":-0.0,"1":12345678901234567890,"a":1e-7,"b":2.50}'));
    expect(text).toContain('"arguments": {"b": 2.5, "2": -0.0, "1": 12345678901234567890, "a": 1e-07}}');
  });

  it('think blocks inside content are split out when there is no reasoning_content', () => {
    const text = render([{ role: 'assistant', content: '<think>\nwhy\n</think>\n\nanswer' }]);
    expect(text).toBe('<|im_start|>assistant\n<think>\nwhy\n</think>\n\nanswer<|im_end|>\n');
  });
});
