import type { IdBuffer } from './id-buffer.ts';
import { renderQwen3 } from './qwen3-template.ts';
import { QWEN3_IDS, type Qwen3Tokenizer, qwen3Tokenizer } from './qwen3-tokenizer.ts';
import type { MergeContext, TemplateKwargs, TitoFamily } from './tito.ts';
import { extractToolDicts } from './tool-dicts.ts';

/**
 * The `qwen3` TITO family with real ids (radixark/miles@31f1ca96
 * miles/utils/chat_template_utils/tito_tokenizer.py `Qwen3TITOTokenizer`; docs/tokenizers.md):
 * - renders with Miles' `qwen3_fixed.jinja` and the family's fixed kwarg `clear_thinking=False` (every
 *   assistant keeps its think block, so renders stay append-only);
 * - a child prompt's incremental tokens are `TITOTokenizer.tokenize_additional_messages`'s: the suffix
 *   rendered after a dummy `[system, assistant]` prefix (the assistant keeps the stored turn's tool
 *   calls), with the generation prompt, minus the prefix's own render, encoded without special tokens;
 * - the junction: the model stops at `<|im_end|>` without the `\n` the template writes after it, so a
 *   prefix ending in `<|im_end|>` gets that `\n` (198) before the incremental tokens;
 * - the comparator trims trailing `\n` ids, segments on the tokenizer's special ids, and reads content
 *   after `<|im_start|>assistant` as assistant text.
 */

const FIXED_KWARGS: TemplateKwargs = { clear_thinking: false };

/** `_DUMMY_SYSTEM` and `_build_dummy_assistant` (tito_tokenizer.py). */
const DUMMY_SYSTEM = { role: 'system', content: 'dummy system' };

function dummyAssistant(stored: unknown): Record<string, unknown> {
  const calls =
    typeof stored === 'object' && stored !== null && !Array.isArray(stored)
      ? (stored as Record<string, unknown>).tool_calls
      : undefined;
  // `stored_assistant.get("tool_calls") or []`: any falsy value is an empty list.
  const truthy = Array.isArray(calls) ? calls.length > 0 : Boolean(calls);
  return { role: 'assistant', content: '', reasoning_content: ' ', tool_calls: truthy ? calls : [] };
}

/** The assistant opener a completion follows, which `completionIds` leaves out. */
const ASSISTANT_OPENER = '<|im_start|>assistant\n';

/** `ValueError(f"rendered suffix diff failed for {roles}")`, with the roles as Python prints the list. */
class SuffixDiffError extends Error {
  constructor(suffix: readonly unknown[]) {
    const roles = suffix.length === 0 ? ['generation_prompt'] : suffix.map(roleOf);
    super(`rendered suffix diff failed for [${roles.map((r) => `'${r}'`).join(', ')}]`);
    this.name = 'ValueError';
  }
}

function roleOf(message: unknown): string {
  const role =
    typeof message === 'object' && message !== null ? (message as { role?: unknown }).role : undefined;
  return typeof role === 'string' ? role : String(role);
}

export function qwen3Family(tokenizer: Qwen3Tokenizer = qwen3Tokenizer()): TitoFamily<Qwen3Tokenizer> {
  const render = (
    messages: readonly unknown[],
    addGenerationPrompt: boolean,
    kwargs: TemplateKwargs,
    tools: unknown,
  ): string =>
    // Miles' template.apply_chat_template canonicalizes the tools before the template sees them.
    renderQwen3(messages, {
      addGenerationPrompt,
      tools: extractToolDicts(tools),
      kwargs: { ...kwargs, ...FIXED_KWARGS },
    });

  const incremental = (
    suffix: readonly unknown[],
    kwargs: TemplateKwargs,
    context: MergeContext,
  ): number[] => {
    const base = [DUMMY_SYSTEM, dummyAssistant(context.lastStored)];
    const without = render(base, false, kwargs, context.tools);
    const withSuffix = render([...base, ...suffix], true, kwargs, context.tools);
    if (!withSuffix.startsWith(without)) throw new SuffixDiffError(suffix);
    return tokenizer.encode(withSuffix.slice(without.length));
  };

  return {
    model: 'qwen3',
    className: 'Qwen3TITOTokenizer',
    maxTrimTokens: 0,
    allowedAppendRoles: ['assistant', 'system', 'tool', 'user'],
    fixedKwargs: FIXED_KWARGS,
    inlineSystemTemplate: true,
    tokenizer,
    renderPrompt: (messages, kwargs, tools) => tokenizer.encode(render(messages, true, kwargs, tools)),
    mergeTokens: (prefix, suffix, kwargs, context = {}) => {
      const ids = prefix.slice();
      if (ids.at(-1) === QWEN3_IDS.imEnd) ids.push(QWEN3_IDS.newline);
      for (const id of incremental(suffix, kwargs, context)) ids.push(id);
      return ids;
    },
    // What the model generates after the opener: the template's assistant render up to `<|im_end|>`.
    completionIds: (message) => {
      const text = render([{ ...(message as object), role: 'assistant' }], false, {}, undefined);
      const body = text.slice(ASSISTANT_OPENER.length, text.length - '<|im_end|>\n'.length);
      const ids = tokenizer.encode(body);
      ids.push(QWEN3_IDS.imEnd);
      return ids;
    },
    canonicalRenderInto: (out: IdBuffer, messages, tools) => {
      for (const id of tokenizer.encode(render(messages, false, {}, tools))) out.push(id);
    },
    comparator: {
      trailingIds: [QWEN3_IDS.newline],
      assistantStart: '<|im_start|>assistant',
    },
  };
}
