import { isJsonObject, PythonFloat } from '../../common/python-json/values.ts';
import { sameJson } from './values/same-json.ts';

/**
 * The `strict` message matcher (radixark/miles@31f1ca96
 * miles/utils/chat_template_utils/message_matcher_hub/funcs.py), expressed as a canonical key:
 * two messages match exactly when their keys are equal, which lets the tree index message prefixes
 * instead of comparing node by node.
 *
 * Strict compares only `role`, `content`, `reasoning_content` and `tool_calls`; `null`, `""` and `[]` all
 * mean absent; object tool calls lose their `index`; the rest is Python `==` (key order ignored, list order
 * kept, `1 == 1.0 == True`).
 */

/** Raised when a message cannot be compared (Python would raise inside the matcher: 500 JSON). */
export class MatcherError extends Error {
  constructor() {
    super('session message matcher raised an exception');
    this.name = 'MatcherError';
  }
}

const COMPARED_FIELDS = ['role', 'content', 'reasoning_content', 'tool_calls'] as const;

function isAbsent(v: unknown): boolean {
  return v === null || v === undefined || v === '' || (Array.isArray(v) && v.length === 0);
}

/** A canonical text for a JSON value under Python `==`: sorted keys, booleans as numbers. */
function canonicalValue(v: unknown): string {
  if (v === null || v === undefined) return 'n';
  if (v === true) return 'd1';
  if (v === false) return 'd0';
  if (typeof v === 'number') return `d${Object.is(v, -0) ? 0 : v}`;
  // Python compares 1.0 == 1: a float from the request matches the same number from a reply.
  if (v instanceof PythonFloat) return canonicalValue(v.value);
  // Length-prefixed rather than quoted: as unambiguous, without escaping the text (keys hash it anyway).
  if (typeof v === 'string') return `s${v.length}:${v}`;
  if (Array.isArray(v)) return `[${v.map(canonicalValue).join(',')}]`;
  if (isJsonObject(v)) {
    const keys = Object.keys(v).sort();
    return `{${keys.map((k) => `${k.length}:${k}${canonicalValue(v[k])}`).join(',')}}`;
  }
  return `?${String(v)}`;
}

function normalisedToolCalls(calls: unknown): unknown {
  if (!Array.isArray(calls)) return calls;
  return calls.map((call) => {
    if (!isJsonObject(call)) return call;
    const { index: _dropped, ...rest } = call;
    return rest;
  });
}

/** The strict matcher's key for one message. */
export function strictMessageKey(message: unknown): string {
  if (!isJsonObject(message)) throw new MatcherError();
  let key = '';
  for (const field of COMPARED_FIELDS) {
    let value = message[field];
    if (isAbsent(value)) continue;
    if (field === 'tool_calls') value = normalisedToolCalls(value);
    key += `${key === '' ? '' : '|'}${field}=${canonicalValue(value)}`;
  }
  return key;
}

/**
 * A shortcut for the key: two messages whose compared fields are the same JSON (same-json.ts) have the
 * same key, without building it. False says nothing (the keys may still be equal); false too for
 * anything but two JSON objects, so a message the matcher cannot compare still reaches the key.
 */
export function sameStrictFields(a: unknown, b: unknown): boolean {
  if (!isJsonObject(a) || !isJsonObject(b)) return false;
  for (const field of COMPARED_FIELDS) if (!sameJson(a[field], b[field])) return false;
  return true;
}

/**
 * The strict matcher as an index over message keys uses it (fast/message-trie.ts, handed over by
 * compose.ts): the key, and the shortcut that proves two keys equal without building them.
 */
export interface StrictKeys {
  readonly key: typeof strictMessageKey;
  readonly sameFields: typeof sameStrictFields;
}

export const strictKeys: StrictKeys = { key: strictMessageKey, sameFields: sameStrictFields };

/** `strict(stored, request)`. */
export function strictMatch(stored: unknown, request: unknown): boolean {
  return strictMessageKey(stored) === strictMessageKey(request);
}
