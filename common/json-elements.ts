/**
 * Where the values of a JSON document begin and end, found by a structural scan of its bytes: strings
 * are skipped from quote to unescaped quote, nesting is counted by brackets, anything else (numbers,
 * `true`, Python's `NaN` and `Infinity`) runs to the next structural byte. Nothing is parsed or
 * validated, so this is exact only on a document a parser has already accepted (RFC 8259 JSON, or
 * Python's `json` with its non-finite literals); callers use it to find the byte boundaries of values
 * they parsed whole, to reuse those bytes' values when a later document repeats them. In UTF-8 every
 * byte of a non-ASCII character is ≥ 0x80, so no structural byte is ever found inside one.
 */

// JSON's structural bytes (the readers of a body's bytes import them from here).
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
const COLON = 0x3a;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;

/** JSON's whitespace (Python's `json` accepts the same four). */
function isJsonWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** The first offset at or after `at` that is not JSON whitespace (`bytes.length` at the end). */
export function skipJsonWhitespace(bytes: Uint8Array, at: number): number {
  let p = at;
  while (p < bytes.length && isJsonWhitespace(bytes[p] as number)) p += 1;
  return p;
}

/** The offset just past the string whose opening quote is at `at`, or -1 when it does not close. */
function skipString(bytes: Uint8Array, at: number): number {
  let p = at + 1;
  while (p < bytes.length) {
    const c = bytes[p] as number;
    if (c === QUOTE) return p + 1;
    p += c === BACKSLASH ? 2 : 1;
  }
  return -1;
}

/**
 * The offset just past the value that starts at `at` (no whitespace before it), or -1 when the bytes
 * end first.
 */
export function skipJsonValue(bytes: Uint8Array, at: number): number {
  const first = bytes[at];
  if (first === undefined) return -1;
  if (first === QUOTE) return skipString(bytes, at);
  if (first !== OPEN_ARRAY && first !== OPEN_OBJECT) {
    // A scalar: up to the byte that ends it (a separator, a closing bracket or whitespace).
    let p = at + 1;
    while (p < bytes.length) {
      const c = bytes[p] as number;
      if (c === COMMA || c === CLOSE_ARRAY || c === CLOSE_OBJECT || c === COLON || isJsonWhitespace(c)) break;
      p += 1;
    }
    return p;
  }
  let depth = 0;
  let p = at;
  while (p < bytes.length) {
    const c = bytes[p] as number;
    if (c === QUOTE) {
      p = skipString(bytes, p);
      if (p < 0) return -1;
      continue;
    }
    if (c === OPEN_ARRAY || c === OPEN_OBJECT) depth += 1;
    else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth -= 1;
      if (depth === 0) return p + 1;
    }
    p += 1;
  }
  return -1;
}

/** The elements of an array from some point on, and where the array closes. */
export interface ArrayTail {
  /** The offset just past each element met, in order. */
  readonly elementEnds: number[];
  /** The offset of the array's closing `]`. */
  readonly close: number;
}

/**
 * Scans an array from `from`, which is just past its `[` or just past one of its elements: the ends of
 * the elements after that point and the offset of its `]`; null when the bytes are not shaped so.
 */
export function scanArrayTail(bytes: Uint8Array, from: number, afterElement: boolean): ArrayTail | null {
  const elementEnds: number[] = [];
  let p = skipJsonWhitespace(bytes, from);
  let needComma = afterElement;
  for (;;) {
    const c = bytes[p];
    if (c === undefined) return null;
    if (c === CLOSE_ARRAY) return { elementEnds, close: p };
    if (needComma) {
      if (c !== COMMA) return null;
      p = skipJsonWhitespace(bytes, p + 1);
    }
    const end = skipJsonValue(bytes, p);
    if (end < 0) return null;
    elementEnds.push(end);
    p = skipJsonWhitespace(bytes, end);
    needComma = true;
  }
}

/** One member of an object: where its key string starts and ends, where its value starts and ends. */
export interface ObjectMember {
  readonly keyStart: number;
  readonly keyEnd: number;
  readonly valueStart: number;
  readonly valueEnd: number;
}

/** The members of an object from some point on, and where the object closes. */
export interface ObjectTail {
  readonly members: ObjectMember[];
  /** The offset of the object's closing `}`. */
  readonly close: number;
}

/**
 * Scans an object from `from`, which is just past its `{` or just past one of its members' values: the
 * members after that point (key and value bounds) and the offset of its `}`; null when the bytes are
 * not shaped so. A key's bytes are its string token as written, quotes and escapes included. With
 * `end` (≥ 0), the members stop at that offset instead of at a `}` (`close` is then `end`): for a caller
 * that reads the object's last members otherwise.
 */
export function scanObjectTail(
  bytes: Uint8Array,
  from: number,
  afterMember: boolean,
  end = -1,
): ObjectTail | null {
  const members: ObjectMember[] = [];
  let p = skipJsonWhitespace(bytes, from);
  let needComma = afterMember;
  for (;;) {
    if (p === end) return { members, close: end };
    const c = bytes[p];
    if (c === undefined || (end >= 0 && p > end)) return null;
    if (end < 0 && c === CLOSE_OBJECT) return { members, close: p };
    if (needComma) {
      if (c !== COMMA) return null;
      p = skipJsonWhitespace(bytes, p + 1);
    }
    if (bytes[p] !== QUOTE) return null;
    const keyEnd = skipString(bytes, p);
    if (keyEnd < 0) return null;
    const colon = skipJsonWhitespace(bytes, keyEnd);
    if (bytes[colon] !== COLON) return null;
    const valueStart = skipJsonWhitespace(bytes, colon + 1);
    const valueEnd = skipJsonValue(bytes, valueStart);
    if (valueEnd < 0) return null;
    members.push({ keyStart: p, keyEnd, valueStart, valueEnd });
    p = skipJsonWhitespace(bytes, valueEnd);
    needComma = true;
  }
}

/** Whether the key token `bytes[start:end]` (quotes included) is `token` as written, byte for byte. */
export function isKeyToken(bytes: Uint8Array, start: number, end: number, token: Uint8Array): boolean {
  if (end - start !== token.length) return false;
  for (let i = 0; i < token.length; i++) if (bytes[start + i] !== token[i]) return false;
  return true;
}

/**
 * Whether the key token `bytes[start:end]` might decode to the key `token` spells: written so, or with
 * an escape in it (not decoded here; `"messag\u0065s"` is `messages`).
 */
export function keyMayBe(bytes: Uint8Array, start: number, end: number, token: Uint8Array): boolean {
  if (isKeyToken(bytes, start, end, token)) return true;
  for (let p = start; p < end; p++) if (bytes[p] === BACKSLASH) return true;
  return false;
}
