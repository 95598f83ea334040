import { isJsonObject } from '../../common/python-json/values.ts';

/**
 * Miles' `extract_tool_dicts` (radixark/miles@31f1ca96 miles/utils/chat_template_utils/template.py): the
 * request's tools canonicalized as SGLang does (`TypeAdapter(list[Tool]).validate_python(...)`, then
 * `tool.model_dump()`; sgl-project/sglang python/sglang/srt/entrypoints/openai/protocol.py `Tool`,
 * `Function`), which is what `{{ tool | tojson }}` prints in the Qwen3 template:
 * - a tool without a `function` key is the function itself, wrapped as `{"type": "function", "function": t}`;
 * - the dump is `{"type", "function": {"description", "name", "parameters", "strict"[, "defer_loading"]},
 *   "defer_loading"}` in that order, with pydantic's defaults (`null`, `null`, `false`, `null`) and the
 *   request's other keys dropped; the function keeps `defer_loading` only when set (a tool-level value is
 *   copied onto a function without one).
 * No tools (absent, null, empty) is `null`. A tool pydantic would refuse (no string `name`, a
 * `description` that is not a string, …) raises, as the validation error does in Miles.
 */
export function extractToolDicts(tools: unknown): unknown[] | null {
  if (tools === undefined || tools === null || (Array.isArray(tools) && tools.length === 0)) return null;
  if (!Array.isArray(tools)) throw new ToolValidationError('tools is not a list');
  return tools.map((tool, k) => {
    const wrapped: Record<string, unknown> =
      isJsonObject(tool) && 'function' in tool ? tool : { type: 'function', function: tool };
    const fn = wrapped.function;
    if (!isJsonObject(fn)) throw new ToolValidationError(`tools.${k}.function is not an object`);
    const type = wrapped.type ?? 'function';
    const description = fn.description ?? null;
    const strict = laxBool(fn.strict ?? false);
    const toolDefer = laxBool(wrapped.defer_loading ?? null);
    let fnDefer = laxBool(fn.defer_loading ?? null);
    if (
      typeof type !== 'string' ||
      typeof fn.name !== 'string' ||
      (description !== null && typeof description !== 'string') ||
      typeof strict !== 'boolean' ||
      (toolDefer !== null && typeof toolDefer !== 'boolean') ||
      (fnDefer !== null && typeof fnDefer !== 'boolean')
    ) {
      throw new ToolValidationError(`tools.${k} does not validate as an OpenAI tool`);
    }
    if (toolDefer !== null && fnDefer === null) fnDefer = toolDefer;
    const dumped: Record<string, unknown> = {
      description,
      name: fn.name,
      parameters: fn.parameters ?? null,
      strict,
    };
    if (fnDefer !== null) dumped.defer_loading = fnDefer;
    return { type, function: dumped, defer_loading: toolDefer };
  });
}

/** pydantic's lax `bool`: a bool, 0 or 1, or one of its words in any case; anything else stays as it is
 * (and fails the check). */
function laxBool(value: unknown): unknown {
  if (value === 0 || value === 1) return value === 1;
  if (typeof value === 'string') {
    const word = value.toLowerCase();
    if (['1', 'on', 't', 'true', 'y', 'yes'].includes(word)) return true;
    if (['0', 'off', 'f', 'false', 'n', 'no'].includes(word)) return false;
  }
  return value;
}

/** pydantic's ValidationError (a ValueError) for tools SGLang's model refuses. */
export class ToolValidationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ValidationError';
  }
}
