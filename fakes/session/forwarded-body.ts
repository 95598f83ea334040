import { pythonJsonDumps } from '../../common/python-json.ts';

/**
 * The body the session server forwards to the backend, as `json.dumps(body)` writes it (Python's
 * defaults: `", "`/`": "` separators, `ensure_ascii`), byte for byte what `pythonJsonDumps(body)` gives.
 * A client re-sends its whole history every turn, and the chat route hands each re-sent message the
 * stored object it equals (record.ts `shareStoredMessages`), so a message's text is written once and
 * then reused while that object lives. The writer is context-free (no indentation), so an object's text
 * is `{` + `key: value` pieces joined by the item separator + `}`, and a list's likewise: the cached
 * pieces join to the same bytes.
 */

// Parsed messages are never changed in place once a chat has them (records and nodes share them).
const messageTexts = new WeakMap<object, string>();

function messageText(message: unknown): string {
  if (typeof message !== 'object' || message === null) return pythonJsonDumps(message);
  let text = messageTexts.get(message);
  if (text === undefined) {
    text = pythonJsonDumps(message);
    messageTexts.set(message, text);
  }
  return text;
}

export function forwardedBodyJson(body: Record<string, unknown>): string {
  const items: string[] = [];
  for (const key of Object.keys(body)) {
    const value = body[key];
    let text: string;
    if (key === 'messages' && Array.isArray(value)) {
      const texts = new Array<string>(value.length);
      for (let i = 0; i < value.length; i += 1) texts[i] = messageText(value[i]);
      text = `[${texts.join(', ')}]`;
    } else text = pythonJsonDumps(value);
    items.push(`${pythonJsonDumps(key)}: ${text}`);
  }
  return `{${items.join(', ')}}`;
}
