/**
 * Whether `JSON.parse(text)` can be trusted to have read `value`'s object keys right.
 *
 * V8's `JSON.parse` (Node 24 here, and Node 26: nodejs/node#63785, V8 crbug 521080746, open) reads an
 * escaped object key through a hidden-class transition an earlier parse left: when a previously parsed
 * object had, at the same place, a key `K` holding a backslash, and the new key's source text starts with
 * `K`'s characters and decodes to as many characters, the new object gets `K`. After `{"a":1,"\\":2}`,
 * `{"a":1,"\"":2}` parses to the key `\`, and so does `{"a":1,"\n":2}`. Such a misread needs an escape in
 * the key's source (a backslash in the text) and leaves a key holding a backslash in the value. So a
 * value with no key holding a backslash, or from a text with no backslash at all, is what a correct parse
 * gives; anything else is parsed again by a parser that builds its objects itself.
 */
export function nativeJsonKeysTrusted(text: string, value: unknown): boolean {
  return !text.includes('\\') || !hasKeyWithBackslash(value);
}

function hasKeyWithBackslash(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) {
    for (const item of value)
      if (typeof item === 'object' && item !== null && hasKeyWithBackslash(item)) return true;
    return false;
  }
  for (const key of Object.keys(value)) {
    if (key.includes('\\')) return true;
    const item = (value as Record<string, unknown>)[key];
    if (typeof item === 'object' && item !== null && hasKeyWithBackslash(item)) return true;
  }
  return false;
}
