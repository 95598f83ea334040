/**
 * SGLang's context-length check, with its two 400 messages word for word (sgl-project/sglang@001067ff
 * python/sglang/srt/managers/tokenizer_manager.py `TokenizerManager._validate_one_request`): a prompt
 * of `limit` tokens or more is refused outright; otherwise a prompt plus its `max_tokens` above `limit`
 * is. SGLang's reserved tokens and auto-truncation are not modelled (the fake reserves none and never
 * truncates).
 */
export function contextLimitMessage(
  promptLength: number,
  maxTokens: number | null,
  limit: number,
): string | null {
  if (promptLength >= limit) {
    return `The input (${promptLength} tokens) is longer than the model's context length (${limit} tokens).`;
  }
  if (maxTokens !== null && promptLength + maxTokens > limit) {
    return `Requested token count exceeds the model's maximum context length of ${limit} tokens. You requested a total of ${promptLength + maxTokens} tokens: ${promptLength} tokens from the input messages and ${maxTokens} tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.`;
  }
  return null;
}
