import { describe, expect, it } from 'vitest';
import { contextLimitMessage } from './context-limit.ts';

/**
 * SGLang's two context-length refusals (sgl-project/sglang@001067ff
 * python/sglang/srt/managers/tokenizer_manager.py `_validate_one_request`): `input >= context_len`, then
 * `input + max_new_tokens > context_len`. The expected texts are SGLang's f-strings filled in by hand.
 */

const INPUT_40_OF_40 = "The input (40 tokens) is longer than the model's context length (40 tokens).";

describe("SGLang's context-length check", () => {
  it('refuses a prompt of the limit or more, whatever max_tokens says', () => {
    expect(contextLimitMessage(39, null, 40)).toBeNull();
    expect(contextLimitMessage(40, null, 40)).toBe(INPUT_40_OF_40);
    expect(contextLimitMessage(40, 0, 40)).toBe(INPUT_40_OF_40);
    expect(contextLimitMessage(40, 500, 40)).toBe(INPUT_40_OF_40);
    expect(contextLimitMessage(41, null, 40)).toBe(
      "The input (41 tokens) is longer than the model's context length (40 tokens).",
    );
  });

  it('refuses a prompt plus max_tokens above the limit, not one that reaches it', () => {
    expect(contextLimitMessage(3, 37, 40)).toBeNull();
    expect(contextLimitMessage(39, 1, 40)).toBeNull();
    expect(contextLimitMessage(39, 0, 40)).toBeNull();
    expect(contextLimitMessage(3, 38, 40)).toBe(
      "Requested token count exceeds the model's maximum context length of 40 tokens. You requested a total of 41 tokens: 3 tokens from the input messages and 38 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.",
    );
    expect(contextLimitMessage(39, 2, 40)).toBe(
      "Requested token count exceeds the model's maximum context length of 40 tokens. You requested a total of 41 tokens: 39 tokens from the input messages and 2 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.",
    );
  });

  it('without max_tokens only the prompt counts', () => {
    expect(contextLimitMessage(0, null, 1)).toBeNull();
    expect(contextLimitMessage(1, null, 1)).toBe(
      "The input (1 tokens) is longer than the model's context length (1 tokens).",
    );
  });
});
