/**
 * The history token count that drives summarization. Terminus uses litellm's estimate, not the
 * policy tokenizer (Harbor 6c9ba3f0 terminus_2.py, litellm's `token_counter`); this estimator is chosen
 * to equal the toy tokenizer (fixtures/conformance/README.md): one role token per message plus one token per
 * whitespace-separated word of `reasoning_content` and `content`. `tokensPerWord` scales the word
 * part for real tokenizers (about 1.3 for English BPE).
 */

export interface ChatMessage {
  readonly role: 'user' | 'assistant' | 'system' | 'tool';
  readonly content: string;
  readonly reasoning_content?: string;
  /** The reply's tool calls as the policy returned them (not counted: Terminus' estimate reads text). */
  readonly tool_calls?: readonly unknown[];
  /** A `tool` message's answer to the call with this id. */
  readonly tool_call_id?: string;
}

export function countWords(text: string | undefined): number {
  if (text === undefined || text === '') return 0;
  let count = 0;
  for (const part of text.split(/\s+/)) if (part !== '') count += 1;
  return count;
}

function estimateMessageTokens(message: ChatMessage, tokensPerWord = 1): number {
  const words = countWords(message.reasoning_content) + countWords(message.content);
  return 1 + Math.ceil(words * tokensPerWord);
}

export function estimateTokens(messages: readonly ChatMessage[], tokensPerWord = 1): number {
  let total = 0;
  for (const message of messages) total += estimateMessageTokens(message, tokensPerWord);
  return total;
}
