import { z } from 'zod';
import { parseJson } from '../common/python-json/loads.ts';

/**
 * The emission faults: `think_in_content` (no reasoning parser: the think block stays in the content),
 * `char_tokens` (the content sampled one token per character), and four tool-call parser faults.
 */
export const EMIT_FAULTS = [
  'think_in_content',
  'char_tokens',
  'tool_call_zero_args',
  'tool_call_literal_end',
  'tool_call_split_markers',
  'tool_call_numbers_as_strings',
] as const;
export type EmitFault = (typeof EMIT_FAULTS)[number];

/** The `x-harness-directive` header's JSON (docs/architecture.md "Policy directives"); all keys optional. */
export const DirectiveSchema = z.strictObject({
  finish_reason: z.enum(['stop', 'length', 'abort', 'tool_calls']).optional(),
  /** The exact reply text. */
  content: z.string().optional(),
  reasoning_content: z.string().optional(),
  /** Tool calls the reply carries (each becomes `{id, type: "function", function: {name, arguments}}`). */
  tool_calls: z
    .array(z.strictObject({ name: z.string(), arguments: z.string() }))
    .max(16)
    .optional(),
  /**
   * The exact completion ids to emit (`output_token_logprobs`), over the render of the reply message: a
   * fault the message cannot express, e.g. a turn ended by `<|endoftext|>` (docs/field-failures.md).
   */
  completion_ids: z.array(z.number().int().nonnegative()).min(1).max(100_000).optional(),
  /**
   * End the completion with this token instead of the family's stop token: `endoftext` is Qwen3's
   * `<|endoftext|>` (151643) in place of `<|im_end|>`, a stop the field sees (docs/field-failures.md).
   */
  end_token: z.enum(['endoftext']).optional(),
  /**
   * Emit the reply with a fault the field reports between the ids a policy samples and the message its
   * parsers return (Qwen3 only; fakes/policy/emit-fault.ts, docs/field-failures.md "In fuzzing").
   */
  fault: z.enum(EMIT_FAULTS).optional(),
  /** Reply length in words (synthetic mode). */
  completion_words: z.number().int().min(0).max(100_000).optional(),
  /** Answer this non-200 instead of a completion. */
  error: z.strictObject({ status: z.number().int().min(400).max(599), message: z.string() }).optional(),
});
export type Directive = z.infer<typeof DirectiveSchema>;

export type DirectiveParse = { ok: true; directive: Directive | null } | { ok: false; problem: string };

/** Parses the header value; an absent header is `null`. */
export function parseDirective(value: string | null): DirectiveParse {
  if (value === null || value.trim() === '') return { ok: true, directive: null };
  let raw: unknown;
  try {
    raw = parseJson(value);
  } catch (error) {
    return { ok: false, problem: `not JSON (${(error as Error).message})` };
  }
  const result = DirectiveSchema.safeParse(raw);
  if (!result.success) {
    const issue = result.error.issues[0];
    return { ok: false, problem: `${issue?.path.join('.') || '(root)'}: ${issue?.message ?? 'invalid'}` };
  }
  return { ok: true, directive: result.data };
}
