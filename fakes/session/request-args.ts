import {
  isJsonObject,
  pythonFloatRepr,
  pythonRepr,
  pythonTruthy,
  unwrapPythonFloat,
} from '../../common/python-json/values.ts';
import type { TemplateKwargs } from '../tokenizer/tito.ts';
import { jsonError } from './errors.ts';
import { deepCopyJson } from './turn-args.ts';

/**
 * How the newer Miles resolves a chat request before rendering and forwarding it
 * (sii-avalanche/miles@4d412b5a miles/rollout/session/request_args.py `prepare_chat_request`,
 * `resolve_request_args_by_config`, `apply_session_sampling_defaults`; the model rules of
 * radixark/miles@3abe1f8c miles/utils/chat_template_utils/tito_tokenizer/base.py `resolve_request_args`;
 * the sampling contract of sii-avalanche/miles@4d412b5a miles/rollout/generate_utils/sampling_mask.py
 * `validate_sampling_support_request`). Profile switches `forwardedRequestDefaults`,
 * `refuseBoundedSampling`, `refuseToolsChanged` (contracts/miles-profile.ts). Every refusal is a 400
 * (`MessageValidationError`).
 */

/** What the session fixes at creation (`POST /sessions` body, create-session.ts). */
export interface SessionRequestDefaults {
  readonly evaluation: boolean;
  /** `temperature`, `top_p`, `top_k` the client may omit, in the body's order. */
  readonly samplingDefaults: Readonly<Record<string, unknown>>;
}

export const TRAINING_SESSION: SessionRequestDefaults = { evaluation: false, samplingDefaults: {} };

export interface RequestArgsConfig {
  readonly launchKwargs: TemplateKwargs;
  /** The family's fixed template kwargs (`FIXED_TEMPLATE.extra_kwargs`). */
  readonly fixedKwargs: TemplateKwargs;
  readonly returnRoutedExperts: boolean;
  readonly returnIndexerTopk: boolean;
  readonly lora: boolean;
  readonly refuseBoundedSampling: boolean;
  readonly refuseToolsChanged: boolean;
}

/** What the client asked its reply to carry (`ClientResponseIntent`). */
export interface ResponseIntent {
  readonly stream: boolean;
  readonly logprobs: boolean;
}

const LORA_ADAPTER_NAME = 'miles_lora';

function refuseIfSet(body: Record<string, unknown>, key: string, why: string, refuse = true): void {
  const value = body[key];
  if (refuse && value !== undefined && value !== null)
    throw jsonError(400, `${key}=${pythonRepr(value)} is not accepted: ${why}`);
  delete body[key];
}

/** `resolve_request_args_by_config`: the server's fixed fields and refusals, in place. */
export function resolveByConfig(
  body: Record<string, unknown>,
  config: RequestArgsConfig,
  session: SessionRequestDefaults,
): ResponseIntent {
  const evaluation = session.evaluation;
  const logprobs = pythonTruthy(body.logprobs);
  body.logprobs = true;
  body.return_meta_info = true;
  body.no_stop_trim = false;
  body.return_routed_experts = !evaluation && config.returnRoutedExperts;
  body.return_indexer_topk = !evaluation && config.returnIndexerTopk;
  const loraPath = config.lora ? LORA_ADAPTER_NAME : null;
  const given = body.lora_path;
  if (given !== undefined && given !== null && given !== loraPath)
    throw jsonError(
      400,
      `lora_path=${pythonRepr(given)} is not accepted: the served adapter is selected by training`,
    );
  if (loraPath === null) delete body.lora_path;
  else body.lora_path = loraPath;
  const model = pythonTruthy(body.model) ? body.model : '';
  if (loraPath !== null && (typeof model === 'string' ? model : pythonRepr(model)).includes(':'))
    throw jsonError(400, 'model must not name a LoRA adapter; the session server serves the trained adapter');
  refuseIfSet(body, 'input_ids', 'TITO token ids are rendered by the session server');
  refuseIfSet(body, 'routed_experts_start_len', 'R3 offsets are computed by the session server', !evaluation);
  refuseIfSet(body, 'logprob_start_len', 'not supported on the session chat path');
  const stream = pythonTruthy(body.stream);
  delete body.stream;
  delete body.stream_options;
  const kwargs = body.chat_template_kwargs;
  if (kwargs !== undefined && kwargs !== null && !isJsonObject(kwargs))
    throw jsonError(400, 'chat_template_kwargs must be an object');
  if (isJsonObject(kwargs) && 'tools' in kwargs)
    throw jsonError(400, 'tools belongs at the top level of the request, not in chat_template_kwargs');
  return { stream, logprobs };
}

function sameValue(a: unknown, b: unknown): boolean {
  const x = unwrapPythonFloat(a);
  const y = unwrapPythonFloat(b);
  return typeof x === 'number' && typeof y === 'number' ? x === y : JSON.stringify(x) === JSON.stringify(y);
}

/** `apply_session_sampling_defaults`: fill omitted (or null) fields; a training temperature must agree. */
export function applySamplingDefaults(body: Record<string, unknown>, session: SessionRequestDefaults): void {
  for (const [key, value] of Object.entries(session.samplingDefaults)) {
    if (body[key] === undefined || body[key] === null) body[key] = value;
    else if (!session.evaluation && key === 'temperature' && !sameValue(body[key], value))
      throw jsonError(
        400,
        `temperature=${pythonRepr(body[key])} does not match the training session temperature=${pythonRepr(value)}`,
      );
  }
}

/** A tool as SGLang's `Tool` model dumps it (`extract_tool_dicts`), for comparing tool lists. */
function canonicalTool(tool: unknown): unknown {
  const wrapped = isJsonObject(tool) && 'function' in tool ? tool : { type: 'function', function: tool };
  const fn = isJsonObject(wrapped.function) ? wrapped.function : {};
  return {
    type: wrapped.type ?? 'function',
    function: {
      name: fn.name ?? null,
      description: fn.description ?? null,
      parameters: fn.parameters ?? null,
      strict: fn.strict ?? false,
    },
  };
}

function canonicalTools(tools: unknown): string {
  if (!pythonTruthy(tools) || !Array.isArray(tools)) return 'null';
  return JSON.stringify(tools.map(canonicalTool));
}

export const TOOLS_CHANGED_ERROR =
  'tools changed on a continued turn: the turn being continued was rendered with different tools, and this model family renders tools in the prompt prefix';

/**
 * `TITOTokenizer.resolve_request_args`: `chat_template_kwargs` = launch, then the continued turn's, then
 * the request's (without `tools`); `tools` = the request's, else the continued turn's (a root: the
 * launch kwargs'), a changed list refused; then the family's fixed kwargs. `turnArgs` is the continued
 * turn's recorded request, null for a new root.
 */
export function resolveModelRules(
  body: Record<string, unknown>,
  config: RequestArgsConfig,
  turnArgs: Record<string, unknown> | null,
): void {
  const source = { ...body };
  const objectOr = (v: unknown) => (isJsonObject(v) ? v : {});
  const { tools: launchTools, ...launch } = config.launchKwargs;
  const kwargs: Record<string, unknown> = {
    ...launch,
    ...objectOr(turnArgs?.chat_template_kwargs),
    ...objectOr(source.chat_template_kwargs),
  };
  delete kwargs.tools;
  body.chat_template_kwargs = deepCopyJson(kwargs);
  let tools: unknown = pythonTruthy(source.tools) ? source.tools : null;
  if (turnArgs === null) tools = pythonTruthy(tools) ? tools : (launchTools ?? null);
  else if (tools === null) tools = turnArgs.tools ?? null;
  else if (config.refuseToolsChanged && canonicalTools(tools) !== canonicalTools(turnArgs.tools))
    throw jsonError(400, TOOLS_CHANGED_ERROR);
  body.tools = deepCopyJson(tools);
  if (Object.keys(config.fixedKwargs).length > 0)
    Object.assign(body.chat_template_kwargs as object, deepCopyJson(config.fixedKwargs));
}

/** Python's `float(x)` of a JSON value, or the ValueError/TypeError text. */
function pythonFloat(value: unknown): number {
  const v = unwrapPythonFloat(value);
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return Number(v);
  if (typeof v === 'string' && v.trim() !== '' && !Number.isNaN(Number(v.trim()))) return Number(v.trim());
  if (typeof v === 'string') throw jsonError(400, `could not convert string to float: ${pythonRepr(v)}`);
  throw new TypeError(`float() argument must be a string or a real number, not '${typeof v}'`);
}

/** `int(x)`: truncation for floats; the ValueError text for a non-integer string. */
function pythonInt(value: unknown): number {
  const v = unwrapPythonFloat(value);
  if (typeof v === 'number') return Math.trunc(v);
  if (typeof v === 'boolean') return Number(v);
  if (typeof v === 'string' && /^\s*[-+]?\d+\s*$/.test(v)) return Number(v);
  if (typeof v === 'string') throw jsonError(400, `invalid literal for int() with base 10: ${pythonRepr(v)}`);
  throw new TypeError(`int() argument must be a string, a bytes-like object or a real number`);
}

/**
 * `validate_sampling_support_request` without sampling-support replay (the recipe's case): `top_p` in
 * (0, 1], and neither `top_p < 1` nor `top_k > 0` (the trainer could not reproduce a bounded support).
 */
export function refuseBoundedSampling(body: Record<string, unknown>): void {
  const topP = body.top_p === undefined || body.top_p === null ? 1 : pythonFloat(body.top_p);
  if (!(topP > 0 && topP <= 1))
    throw jsonError(400, `training request top_p must be in (0, 1], got ${pythonFloatRepr(topP)}`);
  const topK = body.top_k === undefined || body.top_k === null ? -1 : pythonInt(body.top_k);
  if (topP < 1 || topK > 0)
    throw jsonError(400, 'bounded training-request sampling requires bounded rollout sampling');
}

/** `extract_template_args`: the kwargs the prompt is rendered with, and the tools when there are any. */
export function templateArgsOf(body: Record<string, unknown>): { kwargs: TemplateKwargs; tools: unknown } {
  const kwargs = isJsonObject(body.chat_template_kwargs) ? { ...body.chat_template_kwargs } : {};
  return { kwargs, tools: pythonTruthy(body.tools) ? body.tools : undefined };
}

/**
 * `prepare_chat_request` after the body is parsed and its attach node found: the server's rules, the
 * session's sampling defaults, the model rules, then the training-only sampling contract.
 */
export function prepareChatRequest(
  body: Record<string, unknown>,
  config: RequestArgsConfig,
  session: SessionRequestDefaults,
  turnArgs: Record<string, unknown> | null,
): ResponseIntent {
  const intent = resolveByConfig(body, config, session);
  applySamplingDefaults(body, session);
  resolveModelRules(body, config, turnArgs);
  delete body.sampling_logprobs_mode;
  if (session.evaluation) {
    Object.assign(body, {
      return_sampling_mask: false,
      return_routed_experts: false,
      return_indexer_topk: false,
    });
    delete body.routed_experts_start_len;
  } else {
    if (config.refuseBoundedSampling) refuseBoundedSampling(body);
    delete body.return_sampling_mask;
  }
  return intent;
}
