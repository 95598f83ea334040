import type { TitoFamily } from '../tokenizer/tito.ts';
import { splitWords } from '../tokenizer/toy-tokenizer.ts';

/**
 * A reply cut at `max_tokens`, as an engine stopping on length cuts it: the completion keeps at most
 * `max_tokens` ids and has no stop token (SGLang's `finish_reason: "length"`). The toy tokenizer counts
 * a word as a token; on real ids (qwen3) the reply keeps the most words whose ids fit.
 */

type Message = Record<string, unknown>;

/**
 * Cuts a reply to `maxTokens` completion tokens. Toy: a reply of `maxTokens` words or more is cut (its
 * ids are the words plus the stop token). Qwen3: the most words whose ids, without the stop token, fit
 * in `maxTokens`, found by bisection (one encode per step).
 */
export function truncateToLength(
  family: TitoFamily,
  message: Message,
  maxTokens: number,
): { message: Message; cut: boolean } {
  if (family.model !== 'qwen3') {
    if (wordCount(message) < maxTokens) return { message, cut: false };
    return { message: keepWords(message, maxTokens), cut: true };
  }
  if (family.completionIds(message).length <= maxTokens) return { message, cut: false };
  let lo = 0;
  let hi = wordCount(message);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (family.completionIds(keepWords(message, mid)).length - 1 <= maxTokens) lo = mid;
    else hi = mid - 1;
  }
  return { message: keepWords(message, lo), cut: true };
}

/** Completion ids for a message; a length-cut reply has no stop token. */
export function idsFor(family: TitoFamily, message: Message, cut: boolean): number[] {
  const ids = family.completionIds(message);
  return cut ? ids.slice(0, -1) : ids;
}

/** The reply with only its first `n` words: reasoning first, then content (words joined by one space). */
function keepWords(message: Message, n: number): Message {
  const reasoning =
    typeof message.reasoning_content === 'string' ? splitWords(message.reasoning_content) : [];
  const content = typeof message.content === 'string' ? splitWords(message.content) : [];
  const keptReasoning = reasoning.slice(0, n);
  const keptContent = content.slice(0, Math.max(0, n - keptReasoning.length));
  return {
    ...message,
    content: keptContent.join(' '),
    ...(typeof message.reasoning_content === 'string' ? { reasoning_content: keptReasoning.join(' ') } : {}),
  };
}

function wordCount(message: Message): number {
  const words = (v: unknown) => (typeof v === 'string' ? splitWords(v).length : 0);
  return words(message.reasoning_content) + words(message.content);
}
