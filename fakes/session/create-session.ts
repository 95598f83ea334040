import { PythonUnicodeDecodeError } from '../../common/python-bytes.ts';
import { PythonJsonDecodeError } from '../../common/python-json/faithful-loads.ts';
import { pythonJsonLoadsBytes } from '../../common/python-json/loads.ts';
import { isJsonObject, PythonFloat, pythonRepr, pythonTypeName } from '../../common/python-json/values.ts';
import { jsonError } from './errors.ts';
import type { SessionRequestDefaults } from './request-args.ts';

/**
 * Switch `validateCreateSession`: `POST /sessions` reads its body as `CreateSessionRequest`
 * (sii-avalanche/miles@4d412b5a miles/rollout/session/types.py: `evaluation` StrictBool, `temperature` and
 * `top_p` StrictFloat or null, `top_k` StrictInt or null with an integral float taken as int, extra keys
 * forbidden; sessions.py `create_session`: an empty body is `{}`, a `ValidationError` is a 400
 * `{"error": str(exc)}`). The error text is pydantic 2.13's (checked with pydantic 2.13.4): extra keys
 * first in body order, then the fields in declaration order. A body that is not JSON gets pydantic's
 * envelope; jiter's message is reproduced only for a blank body and trailing characters (otherwise
 * `expected value at line 1 column 1`), a known difference (docs/session-server.md).
 */

const MODEL = 'CreateSessionRequest';
const FIELDS = ['evaluation', 'temperature', 'top_p', 'top_k'] as const;

interface FieldError {
  readonly loc: string | null;
  readonly type: string;
  readonly msg: string;
  readonly input: string;
  readonly inputType: string;
}

/** pydantic-core's `input_value`: a repr cut to its first 25 and last 24 characters past 50. */
function cut(text: string): string {
  return text.length > 50 ? `${text.slice(0, 25)}...${text.slice(-24)}` : text;
}

function inputRepr(value: unknown): string {
  return cut(pythonRepr(value));
}

function errorOf(loc: string | null, type: string, msg: string, value: unknown): FieldError {
  return { loc, type, msg, input: inputRepr(value), inputType: pythonTypeName(value) };
}

function validationText(errors: readonly FieldError[]): string {
  const head = `${errors.length} validation error${errors.length === 1 ? '' : 's'} for ${MODEL}`;
  const lines = errors.map(
    (e) =>
      `${e.loc === null ? '' : `${e.loc}\n`}  ${e.msg} [type=${e.type}, input_value=${e.input}, input_type=${e.inputType}]\n    For further information visit https://errors.pydantic.dev/2.13/v/${e.type}`,
  );
  return [head, ...lines].join('\n');
}

function isFloat(v: unknown): boolean {
  return v instanceof PythonFloat;
}

/** One field's check; the value it holds once valid. */
function checkField(name: (typeof FIELDS)[number], raw: unknown): FieldError | { value: unknown } {
  if (name === 'evaluation')
    return typeof raw === 'boolean'
      ? { value: raw }
      : errorOf(name, 'bool_type', 'Input should be a valid boolean', raw);
  if (raw === null) return { value: null };
  if (name === 'top_k') {
    const v = isFloat(raw) && Number.isInteger((raw as PythonFloat).value) ? (raw as PythonFloat).value : raw;
    return typeof v === 'number' && !isFloat(v)
      ? { value: v }
      : errorOf(name, 'int_type', 'Input should be a valid integer', raw);
  }
  if (typeof raw === 'number' || isFloat(raw))
    return { value: isFloat(raw) ? raw : new PythonFloat(raw as number) };
  return errorOf(name, 'float_type', 'Input should be a valid number', raw);
}

/** Python's `repr(bytes)`: single quotes unless only a `'` is inside, `\\xNN` for bytes outside printable ASCII. */
function bytesRepr(raw: Buffer): string {
  const quote = raw.includes(0x27) && !raw.includes(0x22) ? '"' : "'";
  const named: Record<number, string> = { 9: '\\t', 10: '\\n', 13: '\\r', 92: '\\\\' };
  let out = '';
  for (const byte of raw) {
    const char = String.fromCharCode(byte);
    if (named[byte] !== undefined) out += named[byte];
    else if (char === quote) out += `\\${quote}`;
    else if (byte < 0x20 || byte >= 0x7f) out += `\\x${byte.toString(16).padStart(2, '0')}`;
    else out += char;
  }
  return `b${quote}${out}${quote}`;
}

function jsonInvalid(raw: Buffer, error: PythonJsonDecodeError | PythonUnicodeDecodeError): FieldError {
  const text = raw.toString('latin1');
  const extra =
    error instanceof PythonJsonDecodeError ? /^Extra data: (line \d+ column \d+)/.exec(error.message) : null;
  let message = 'expected value at line 1 column 1';
  if (extra !== null) message = `trailing characters at ${extra[1]}`;
  else if (text.trim() === '') message = `EOF while parsing a value at line 1 column ${text.length}`;
  return {
    loc: null,
    type: 'json_invalid',
    msg: `Invalid JSON: ${message}`,
    input: cut(bytesRepr(raw)),
    inputType: 'bytes',
  };
}

/** The session's defaults from a create body, or the 400 Miles answers. */
export function parseCreateSessionBody(raw: Buffer): SessionRequestDefaults {
  let body: unknown;
  try {
    body = raw.length === 0 ? {} : pythonJsonLoadsBytes(raw, { keepFloats: true });
  } catch (error) {
    // Bytes that are not UTF-8 are invalid JSON to pydantic too (jiter: a 400, not Python's 500).
    if (!(error instanceof PythonJsonDecodeError || error instanceof PythonUnicodeDecodeError)) throw error;
    throw jsonError(400, validationText([jsonInvalid(raw, error)]));
  }
  if (!isJsonObject(body))
    throw jsonError(400, validationText([errorOf(null, 'model_type', 'Input should be an object', body)]));
  const errors: FieldError[] = [];
  for (const [key, value] of Object.entries(body)) {
    if (!(FIELDS as readonly string[]).includes(key))
      errors.push(errorOf(key, 'extra_forbidden', 'Extra inputs are not permitted', value));
  }
  let evaluation = false;
  const samplingDefaults: Record<string, unknown> = {};
  for (const name of FIELDS) {
    if (!(name in body)) continue;
    const checked = checkField(name, body[name]);
    if ('type' in checked) errors.push(checked);
    else if (name === 'evaluation') evaluation = checked.value as boolean;
    else if (checked.value !== null) samplingDefaults[name] = checked.value;
  }
  if (errors.length > 0) throw jsonError(400, validationText(errors));
  return { evaluation, samplingDefaults };
}
