import { execFileSync } from 'node:child_process';
import { compareSequences } from '../../fakes/session/mismatch.ts';
import { IdBuffer } from '../../fakes/tokenizer/id-buffer.ts';
import { type Qwen3Tokenizer, qwen3TokenizerPath } from '../../fakes/tokenizer/qwen3-tokenizer.ts';
import type { TitoFamily } from '../../fakes/tokenizer/tito.ts';
import { TEMPLATE_PATH } from './qwen3-template-oracle.ts';

/**
 * Cases for Miles' own Qwen3 TITO code (scripts/oracles/qwen3_tito_oracle.py): fresh prompts, canonical
 * renders, merges at the `<|im_end|>` junction, and comparisons of a session's stored tokens (built the
 * way the fake builds them: prompt, completion, merge, completion, …) and perturbed copies with the
 * canonical render. The fake's family only makes the inputs (stored ids, perturbations); every
 * expectation is what Miles' code answers.
 */

export type TitoCase =
  | { op: 'prompt'; messages: unknown[]; kwargs?: Record<string, unknown> }
  | { op: 'canonical'; messages: unknown[] }
  | { op: 'merge'; old: unknown[]; new: unknown[]; pretokenized: number[] }
  | { op: 'compare'; label: string; expected: number[]; actual: number[] };

export type TitoResult = { ids: number[] } | { mismatches: unknown[] } | { error: string };

const call = (id: string, name: string, args: string) => ({
  id,
  type: 'function',
  function: { name, arguments: args },
});

/** Conversations ending with an assistant turn; each prefix ending with an assistant is a session turn. */
export const CONVERSATIONS: ReadonlyArray<{ name: string; messages: unknown[] }> = [
  {
    name: 'thinking',
    messages: [
      { role: 'system', content: 'You are a terminal agent.' },
      { role: 'user', content: 'List the files.' },
      { role: 'assistant', content: 'Running ls.', reasoning_content: 'The user wants ls.\n' },
      { role: 'user', content: 'Now count them.' },
      { role: 'assistant', content: 'There are 3.', reasoning_content: '\n\nthree lines\n' },
    ],
  },
  {
    name: 'tool-calls',
    messages: [
      { role: 'user', content: 'Check the weather in Paris and Tokyo.' },
      {
        role: 'assistant',
        content: '',
        reasoning_content: 'Two calls.',
        tool_calls: [
          call('call_1', 'get_weather', '{"city": "Paris", "days": 1.0, "2": -0.0}'),
          call('call_2', 'get_weather', '{"city":"東京","big":12345678901234567890}'),
        ],
      },
      { role: 'tool', content: '{"temp": 21.5}', tool_call_id: 'call_1' },
      { role: 'tool', content: '{"temp": 18}', tool_call_id: 'call_2' },
      { role: 'assistant', content: '<think>\ncompare\n</think>\n\nParis is warmer 😀.' },
      { role: 'user', content: '<tool_response>raw</tool_response>' },
      { role: 'assistant', content: 'Noted.', tool_calls: [call('call_3', 'log', '{}')] },
    ],
  },
  {
    name: 'system-midway',
    messages: [
      { role: 'user', content: 'e\u0301t\u00e9 — naïve café, 中文, \t tabs  and  spaces\r\n' },
      { role: 'assistant', content: '\n\nLeading newlines.', reasoning_content: ' ' },
      { role: 'system', content: 'Context was summarized.' },
      { role: 'user', content: 'Continue.' },
      { role: 'assistant', content: null, reasoning_content: null },
    ],
  },
];

const assistantAt = (messages: readonly unknown[]) =>
  messages.flatMap((m, k) => ((m as { role: string }).role === 'assistant' ? [k] : []));

/** A session's stored ids for a conversation, built turn by turn as the fake's chat route does. */
export function sessionIds(family: TitoFamily, messages: readonly unknown[]): number[] {
  let stored: number[] = [];
  let done = 0;
  for (const k of assistantAt(messages)) {
    const prompt =
      done === 0
        ? family.renderPrompt(messages.slice(0, k), {})
        : family.mergeTokens(stored, messages.slice(done, k), {}, { lastStored: messages[done - 1] });
    stored = [...prompt, ...family.completionIds(messages[k])];
    done = k + 1;
  }
  return stored;
}

export function titoCases(family: TitoFamily<Qwen3Tokenizer>): TitoCase[] {
  const cases: TitoCase[] = [];
  const tokenizer = family.tokenizer;
  for (const { name, messages } of CONVERSATIONS) {
    const turns = assistantAt(messages);
    cases.push({ op: 'prompt', messages: messages.slice(0, turns[0]) });
    cases.push({ op: 'prompt', messages: messages.slice(0, turns[0]), kwargs: { enable_thinking: false } });
    cases.push({ op: 'canonical', messages });
    let done = 0;
    let stored: number[] = [];
    for (const k of turns) {
      if (done > 0) {
        const old = messages.slice(0, done);
        const next = messages.slice(0, k);
        cases.push({ op: 'merge', old, new: next, pretokenized: stored });
        // Without the stop token the junction adds nothing.
        cases.push({ op: 'merge', old, new: next, pretokenized: stored.slice(0, -1) });
        stored = family.mergeTokens(stored, messages.slice(done, k), {}, { lastStored: messages[done - 1] });
      } else stored = family.renderPrompt(messages.slice(0, k), {});
      stored = [...stored, ...family.completionIds(messages[k])];
      done = k + 1;
    }
    const rendered = new IdBuffer();
    family.canonicalRenderInto(rendered, messages);
    const expected = rendered.toArray();
    const actual = sessionIds(family, messages);
    cases.push({ op: 'compare', label: `${name}: the session's tokens`, expected, actual });
    // Perturbations reaching each mismatch class.
    // The first user message's first content token: after `<|im_start|>`, `user`, `\n`.
    const userContent = actual.findIndex((id, k) => id === 872 && actual[k - 1] === 151644) + 2;
    const lastAssistant = actual.lastIndexOf(151644) + 3;
    const imEnd = actual.indexOf(151645);
    const swap = (at: number, id: number) => actual.map((x, k) => (k === at ? id : x));
    cases.push({
      op: 'compare',
      label: `${name}: a user token changed`,
      expected,
      actual: swap(userContent, 1234),
    });
    cases.push({
      op: 'compare',
      label: `${name}: an assistant token changed`,
      expected,
      actual: swap(lastAssistant, 1234),
    });
    cases.push({
      op: 'compare',
      label: `${name}: <|im_end|> became <|endoftext|>`,
      expected,
      actual: swap(imEnd, 151643),
    });
    cases.push({
      op: 'compare',
      label: `${name}: a special dropped`,
      expected,
      actual: actual.filter((_, k) => k !== imEnd),
    });
    cases.push({
      op: 'compare',
      label: `${name}: trailing newlines`,
      expected,
      actual: [...actual, 198, 198],
    });
    // A reply that stopped on <|endoftext|>: the junction inserts no \n after it.
    cases.push({
      op: 'compare',
      label: `${name}: a reply stopped on <|endoftext|>`,
      expected,
      actual: actual.flatMap((x, k) => (k === imEnd ? [151643] : k === imEnd + 1 && x === 198 ? [] : [x])),
    });
    cases.push({
      op: 'compare',
      label: `${name}: an assistant retokenized`,
      expected,
      actual: [
        ...actual.slice(0, lastAssistant),
        ...tokenizer.encode('retokenized text'),
        ...actual.slice(lastAssistant + 1),
      ],
    });
  }
  cases.push({ op: 'prompt', messages: [{ role: 'user', content: 'lone \ud800 surrogate' }] });
  cases.push({ op: 'canonical', messages: [] });
  return cases;
}

const here = (path: string) => new URL(path, import.meta.url).pathname;

/**
 * What Miles' own code answers for `cases`: scripts/oracles/qwen3_tito_oracle.py under Debian's python3,
 * importing Miles from `milesRoot`, with HF's Rust tokenizer through a Node child.
 */
export function milesTitoAnswers(cases: readonly TitoCase[], milesRoot: string): TitoResult[] {
  const out = execFileSync(
    '/usr/bin/python3',
    [
      here('../../scripts/oracles/qwen3_tito_oracle.py'),
      process.execPath,
      here('../../scripts/oracles/rust-tokenizer-pipe.ts'),
      TEMPLATE_PATH,
      qwen3TokenizerPath(),
    ],
    {
      input: JSON.stringify(cases),
      encoding: 'utf8',
      maxBuffer: 1 << 26,
      env: { ...process.env, MILES_ROOT: milesRoot },
    },
  );
  return JSON.parse(out) as TitoResult[];
}

/** The fake's answer to a case, in the oracle's terms (errors compared as the fact of one). */
export function fakeTitoAnswer(family: TitoFamily, c: TitoCase): TitoResult | { error: true } {
  try {
    switch (c.op) {
      case 'prompt':
        return { ids: family.renderPrompt(c.messages, c.kwargs ?? {}) };
      case 'canonical': {
        const out = new IdBuffer();
        family.canonicalRenderInto(out, c.messages);
        return { ids: out.toArray() };
      }
      case 'merge':
        return {
          ids: family.mergeTokens(
            c.pretokenized,
            c.new.slice(c.old.length),
            {},
            { lastStored: c.old.at(-1) },
          ),
        };
      case 'compare':
        return { mismatches: compareSequences(family, c.expected, c.actual) };
    }
  } catch {
    return { error: true };
  }
}

/** What `fakeTitoAnswer` must give for an oracle answer. */
export function expectedTitoAnswer(result: TitoResult): TitoResult | { error: true } {
  return 'error' in result ? { error: true } : result;
}
