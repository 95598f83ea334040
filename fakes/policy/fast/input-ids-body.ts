import { parseJson } from '../../../common/python-json/loads.ts';

/**
 * The chat body as the policy reads it (`JSON.parse` of the UTF-8 text, as `Request.json()` does),
 * with a shortcut for what the session server sends: `json.dumps(body)` with `input_ids` as the last
 * key, `, "input_ids": [1, 2, ...]}`. At a 32k-token context those digits are half of a 400 KB body;
 * decoding them into the body's string and parsing them into a 32k-element array is most of what the
 * policy spends per call. Here they are read straight from the bytes into an `Int32Array`, and only the
 * rest of the body (`{...}` before them) is decoded and parsed. Anything else (another layout, a number
 * that is not a plain integer of at most 9 digits, a second `input_ids` key, a broken document) gives
 * null and the caller parses the whole text as before, so its value or its error is the same.
 * Property-tested against `JSON.parse` in input-ids-body.test.ts. The chat route reads bodies through
 * history-reuse.ts, which also reuses each session's previous body; this whole read is what a request
 * log that keeps the messages takes (it needs them all parsed), and the reuse's test oracle.
 */

const utf8 = new TextDecoder('utf-8');
/** `, "input_ids": [` as bytes (Python's default separators). */
export const INPUT_IDS_KEY = Buffer.from(', "input_ids": [', 'latin1');

export interface SplitBody {
  /** The body without its `input_ids` key (which was its last). */
  readonly rest: Record<string, unknown>;
  readonly inputIds: Int32Array;
}

/**
 * `JSON.parse(utf8.decode(body))` as `rest` plus `inputIds` (`rest.input_ids` is what `JSON.parse`
 * would have put last), or null when the body is not that layout.
 */
export function splitInputIds(body: Uint8Array): SplitBody | null {
  const end = body.length - 2;
  // `]}` closes the list and the object; no trailing whitespace (the session server writes none).
  if (end < INPUT_IDS_KEY.length + 1 || body[end] !== 0x5d || body[end + 1] !== 0x7d) return null;
  // The list's opening bracket: the last `[` (digits, `-`, `,` and spaces only after it).
  let open = end - 1;
  let commas = 0;
  while (open >= 0 && body[open] !== 0x5b) {
    const c = body[open] as number;
    if (c === 0x2c) commas += 1;
    else if (!((c >= 0x30 && c <= 0x39) || c === 0x20 || c === 0x2d)) return null;
    open -= 1;
  }
  const keyAt = open + 1 - INPUT_IDS_KEY.length;
  if (keyAt < 1) return null;
  for (let i = 0; i < INPUT_IDS_KEY.length; i++) if (body[keyAt + i] !== INPUT_IDS_KEY[i]) return null;
  const inputIds = readInts(body, open + 1, end, commas + 1);
  if (inputIds === null) return null;
  const rest = restBefore(body, keyAt);
  return rest === null ? null : { rest, inputIds };
}

/**
 * The rest as an object of its own: the members before `, "input_ids"` (`body[0:keyAt]`), closed and
 * parsed, then checked by `restObject`; null where that text does not parse or is no such object.
 */
export function restBefore(body: Uint8Array, keyAt: number): Record<string, unknown> | null {
  let parsed: unknown;
  try {
    parsed = parseJson(`${utf8.decode(body.subarray(0, keyAt))}}`);
  } catch {
    return null;
  }
  return restObject(parsed);
}

/**
 * The parsed members before `, "input_ids"` as an object of their own, or null where the whole body
 * would not read as them plus `input_ids`: not an object with members (`{` alone would make the whole
 * `{, "input_ids": ...}`, invalid), or one that already has `input_ids` (the whole document's last
 * value would land in its place).
 */
export function restObject(value: unknown): Record<string, unknown> | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  if (Object.keys(value).length === 0 || Object.hasOwn(value, 'input_ids')) return null;
  return value as Record<string, unknown>;
}

/**
 * The integers of `body[from:to]` written as `1, -2, 30` (`, ` between them, at most 9 digits each, no
 * leading zero, no `-0`: exactly what `JSON.parse` reads as the same int32 value), or null.
 */
function readInts(body: Uint8Array, from: number, to: number, count: number): Int32Array | null {
  if (from === to) return new Int32Array(0);
  // `count`: one more than the commas, so at most that many ids are read.
  const out = new Int32Array(count);
  return writeInts(out, 0, body, from, to) === count ? out : null;
}

/**
 * Parses `body[from:to]`, written as `readInts` reads it, into `out` from index `at` on (`out` has room
 * for every id: at most one per 3 bytes, `1, `); the index after the last id written, or -1 when the
 * bytes are not so written. An empty range writes nothing.
 */
export function writeInts(out: Int32Array, at: number, body: Uint8Array, from: number, to: number): number {
  if (from === to) return at;
  let n = at;
  let p = from;
  for (;;) {
    let negative = false;
    if (body[p] === 0x2d) {
      negative = true;
      p += 1;
    }
    const start = p;
    let value = 0;
    while (p < to) {
      const d = (body[p] as number) - 0x30;
      if (d < 0 || d > 9) break;
      value = value * 10 + d;
      p += 1;
    }
    const digits = p - start;
    if (digits === 0 || digits > 9 || (digits > 1 && body[start] === 0x30)) return -1;
    if (negative && value === 0) return -1;
    if (n === out.length) return -1;
    out[n++] = negative ? -value : value;
    if (p === to) return n;
    if (body[p] !== 0x2c || body[p + 1] !== 0x20 || p + 2 >= to) return -1;
    p += 2;
  }
}
