import { orderWarning } from './order-warning.ts';
import {
  autoCorrected,
  combineWarnings,
  joinWarnings,
  type ParsedCommand,
  type ParseResult,
} from './parse-result.ts';
import {
  isPyNumber,
  isPyObject,
  PyJsonDecodeError,
  type PyObject,
  type PyValue,
  pyJsonLoads,
  pyTruthy,
} from './python-json-decode.ts';
import { codePoints, PY_S, pyFloat, pyRepr, pyStrip, toPyFloat } from './python-text.ts';

/**
 * Terminus 2's JSON reply parser, rule for rule (Harbor 6c9ba3f0
 * src/harbor/agents/terminus_2/terminus_json_plain_parser.py), with CPython's `json.loads` messages
 * and `repr()` in the "Invalid JSON" error. Unknown command fields are listed in first-appearance order
 * (Harbor joins a Python `set`, whose order depends on the hash seed).
 */

function result(
  commands: readonly ParsedCommand[],
  isTaskComplete: boolean,
  error: string,
  warnings: readonly string[],
  analysis: PyValue,
  plan: PyValue,
): ParseResult {
  return {
    commands,
    isTaskComplete,
    error,
    warning: joinWarnings(warnings),
    analysis: typeof analysis === 'string' ? analysis : '',
    plan: typeof plan === 'string' ? plan : '',
  };
}

/** `_extract_json_content`: the first balanced `{…}`, with the scanner's quote/escape tracking. */
function extractJsonContent(response: string): { json: string; warnings: string[] } {
  let start = -1;
  let end = -1;
  let depth = 0;
  let inString = false;
  let escapeNext = false;
  for (let i = 0; i < response.length; i += 1) {
    const ch = response[i];
    if (escapeNext) {
      escapeNext = false;
      continue;
    }
    if (ch === '\\') {
      escapeNext = true;
      continue;
    }
    if (ch === '"') {
      inString = !inString;
      continue;
    }
    if (inString) continue;
    if (ch === '{') {
      if (depth === 0) start = i;
      depth += 1;
    } else if (ch === '}') {
      depth -= 1;
      if (depth === 0 && start !== -1) {
        end = i + 1;
        break;
      }
    }
  }
  if (start === -1 || end === -1) return { json: '', warnings: ['No valid JSON object found'] };
  const warnings: string[] = [];
  if (pyStrip(response.slice(0, start))) warnings.push('Extra text detected before JSON object');
  if (pyStrip(response.slice(end))) warnings.push('Extra text detected after JSON object');
  return { json: response.slice(start, end), warnings };
}

/** `_check_field_order`. */
function checkFieldOrder(json: string, warnings: string[]): void {
  const warning = orderWarning(
    'Fields',
    ['analysis', 'plan', 'commands'],
    (field) => new RegExp(`"(${field})"${PY_S}*:`, 'u').exec(json)?.index,
  );
  if (warning) warnings.push(warning);
}

/** `_validate_json_structure`: an error text, or "". */
function validateStructure(data: PyValue, json: string, warnings: string[]): string {
  if (!isPyObject(data)) return 'Response must be a JSON object';
  const missing = ['analysis', 'plan', 'commands'].filter((field) => !data.has(field));
  if (missing.length > 0) return `Missing required fields: ${missing.join(', ')}`;
  // `data.get(key, default)`: a key holding null is None, not the default.
  const get = (key: string, fallback: PyValue): PyValue =>
    data.has(key) ? (data.get(key) as PyValue) : fallback;
  if (typeof get('analysis', '') !== 'string') warnings.push("Field 'analysis' should be a string");
  if (typeof get('plan', '') !== 'string') warnings.push("Field 'plan' should be a string");
  if (!Array.isArray(get('commands', []))) return "Field 'commands' must be an array";
  checkFieldOrder(json, warnings);
  const taskComplete = data.get('task_complete');
  if (
    taskComplete !== undefined &&
    taskComplete !== null &&
    typeof taskComplete !== 'boolean' &&
    typeof taskComplete !== 'string'
  )
    warnings.push("Field 'task_complete' should be a boolean or string");
  return '';
}

/** `_parse_commands`: commands, or an error text. Python's bool is an int, so `true` is a duration. */
function parseCommands(
  items: readonly PyValue[],
  warnings: string[],
): { commands: ParsedCommand[]; error: string } {
  const commands: ParsedCommand[] = [];
  for (let i = 0; i < items.length; i += 1) {
    const item = items[i] as PyValue;
    if (!isPyObject(item)) return { commands: [], error: `Command ${i + 1} must be an object` };
    if (!item.has('keystrokes'))
      return { commands: [], error: `Command ${i + 1} missing required 'keystrokes' field` };
    const keystrokes = item.get('keystrokes');
    if (typeof keystrokes !== 'string')
      return { commands: [], error: `Command ${i + 1} 'keystrokes' must be a string` };
    let duration = pyFloat(1.0);
    if (item.has('duration')) {
      const value = item.get('duration') as PyValue;
      if (typeof value === 'boolean') duration = pyFloat(value ? 1 : 0);
      else if (isPyNumber(value)) duration = pyFloat(toPyFloat(value));
      else warnings.push(`Command ${i + 1}: Invalid duration value, using default 1.0`);
    } else warnings.push(`Command ${i + 1}: Missing duration field, using default 1.0`);
    const unknown = [...item.keys()].filter((key) => key !== 'keystrokes' && key !== 'duration');
    if (unknown.length > 0) warnings.push(`Command ${i + 1}: Unknown fields: ${unknown.join(', ')}`);
    if (i < items.length - 1 && !keystrokes.endsWith('\n'))
      warnings.push(
        `Command ${i + 1} should end with newline when followed by another command. Otherwise the two commands will be concatenated together on the same line.`,
      );
    commands.push({ keystrokes, duration });
  }
  return { commands, error: '' };
}

/** `"Invalid JSON: {e} | Content: {repr}"` with the 200-code-point preview rule. */
function invalidJsonMessage(error: PyJsonDecodeError, json: string): string {
  const cps = codePoints(json);
  const head = `Invalid JSON: ${error.message}`;
  if (cps.length < 200) return `${head} | Content: ${pyRepr(json)}`;
  return `${head} | Content preview: ${pyRepr(cps.slice(0, 100).join(''))}...`;
}

/** `task_complete`: a string counts when it says true/1/yes; anything else by Python truthiness. */
function taskCompleteOf(data: PyObject): boolean {
  const value = data.has('task_complete') ? (data.get('task_complete') as PyValue) : false;
  if (typeof value === 'string') return ['true', '1', 'yes'].includes(value.toLowerCase());
  return pyTruthy(value);
}

/** `_try_parse_response`. */
function tryParse(response: string): ParseResult {
  const { json, warnings } = extractJsonContent(response);
  if (!json) return result([], false, 'No valid JSON found in response', warnings, '', '');
  let data: PyValue;
  try {
    data = pyJsonLoads(json);
  } catch (error) {
    if (error instanceof PyJsonDecodeError)
      return result([], false, invalidJsonMessage(error, json), warnings, '', '');
    throw error;
  }
  const validationError = validateStructure(data, json, warnings);
  if (validationError || !isPyObject(data)) return result([], false, validationError, warnings, '', '');
  const isComplete = taskCompleteOf(data);
  const analysis = data.has('analysis') ? (data.get('analysis') as PyValue) : '';
  const plan = data.has('plan') ? (data.get('plan') as PyValue) : '';
  const parsed = parseCommands((data.get('commands') as PyValue[] | undefined) ?? [], warnings);
  if (parsed.error) {
    if (isComplete) {
      warnings.push(parsed.error);
      return result([], true, '', warnings, analysis, plan);
    }
    return result([], false, parsed.error, warnings, analysis, plan);
  }
  return result(parsed.commands, isComplete, '', warnings, analysis, plan);
}

/** `_fix_incomplete_json`: close unbalanced braces. */
function fixIncompleteJson(response: string, error: string): string | undefined {
  if (!['Invalid JSON', 'Expecting', 'Unterminated', 'No valid JSON found'].some((m) => error.includes(m)))
    return undefined;
  const missing = (response.match(/\{/g)?.length ?? 0) - (response.match(/\}/g)?.length ?? 0);
  return missing > 0 ? response + '}'.repeat(missing) : undefined;
}

/** `_fix_mixed_content`: the first brace block (one nesting level) that `json.loads` accepts. */
function fixMixedContent(response: string): string | undefined {
  for (const match of response.matchAll(/\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}/g)) {
    try {
      pyJsonLoads(match[0]);
      return match[0];
    } catch (error) {
      if (!(error instanceof PyJsonDecodeError)) throw error;
    }
  }
  return undefined;
}

const AUTO_FIXES: ReadonlyArray<readonly [string, (response: string, error: string) => string | undefined]> =
  [
    ['Fixed incomplete JSON by adding missing closing brace', fixIncompleteJson],
    ['Extracted JSON from mixed content', (response) => fixMixedContent(response)],
  ];

/** `parse_response`: a failed parse tries the auto-fixes in order. */
export function parseJsonReply(response: string): ParseResult {
  const first = tryParse(response);
  if (!first.error) return first;
  for (const [name, fix] of AUTO_FIXES) {
    const corrected = fix(response, first.error);
    if (corrected === undefined) continue;
    const second = tryParse(corrected);
    if (second.error === '')
      return { ...second, warning: combineWarnings(autoCorrected(name), second.warning) };
  }
  return first;
}
