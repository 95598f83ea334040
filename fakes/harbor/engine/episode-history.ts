import type { ChatReply } from './chat-client.ts';
import { type ChatMessage, estimateTokens } from './token-estimate.ts';

/** Counts the history's tokens for the summarization decisions (litellm's `token_counter` upstream). */
export type TokenCounter = (messages: readonly ChatMessage[]) => number;

/** The script's own counter: `tokens_per_message` each, else the toy tokenizer's estimate. */
export function scriptTokenCounter(context: {
  readonly tokens_per_message?: number | undefined;
  readonly tokens_per_word?: number | undefined;
}): TokenCounter {
  const { tokens_per_message: perMessage, tokens_per_word: perWord } = context;
  if (perMessage !== undefined) return (messages) => messages.length * perMessage;
  return (messages) => estimateTokens(messages, perWord);
}

export const user = (content: string): ChatMessage => ({ role: 'user', content });

export function assistant(reply: ChatReply, withReasoning: boolean): ChatMessage {
  const message: ChatMessage =
    withReasoning && reply.reasoning !== undefined
      ? { role: 'assistant', content: reply.content, reasoning_content: reply.reasoning }
      : { role: 'assistant', content: reply.content };
  return reply.toolCalls === undefined ? message : { ...message, tool_calls: reply.toolCalls };
}

/**
 * Terminus 2's chat history (`self._chat` messages): what the main calls send before the prompt. The
 * loop appends each answered pair; the compaction unwinds it and replaces it after a summary.
 */
export class EpisodeHistory {
  messages: ChatMessage[] = [];
  private readonly count: TokenCounter;

  constructor(count: TokenCounter) {
    this.count = count;
  }

  /** Its tokens as the summarization decisions count them. */
  tokens(): number {
    return this.count(this.messages);
  }
}
