import { pythonJsonDumps, pythonJsonPieces, pythonJsonPiecesToBytes } from '../../common/python-json.ts';

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

/**
 * The UTF-8 bytes of `pythonJsonDumps(body)`: each message's cached text, every other value's pieces
 * (so `input_ids` is written as digits, not as a joined string: common/ascii-writer.ts).
 */
export function forwardedBodyBytes(body: Record<string, unknown>): Buffer {
  const pieces: Array<string | readonly number[]> = ['{'];
  let first = true;
  for (const key of Object.keys(body)) {
    const value = body[key];
    pieces.push(`${first ? '' : ', '}${pythonJsonDumps(key)}: `);
    first = false;
    if (key === 'messages' && Array.isArray(value)) {
      pieces.push('[');
      for (let i = 0; i < value.length; i += 1) {
        if (i > 0) pieces.push(', ');
        pieces.push(messageText(value[i]));
      }
      pieces.push(']');
    } else for (const piece of pythonJsonPieces(value)) pieces.push(piece);
  }
  pieces.push('}');
  return pythonJsonPiecesToBytes(pieces, ', ');
}
