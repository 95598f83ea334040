import { AsciiWriter } from '../../common/ascii-writer.ts';
import { pythonJsonDumps, pythonJsonPieces, pythonJsonPiecesToBytes } from '../../common/python-json.ts';
import { promptSource } from './record.ts';
import type { TokenSnapshot } from './token-snapshot.ts';

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
 * (so `input_ids` is written as digits, not as a joined string: common/ascii-writer.ts). An `input_ids`
 * that is the chat route's prompt getter (record.ts `installPromptIds`) is written from its snapshot
 * without building the array: each stored piece's digits written once and kept (`idsPieces`).
 */
export function forwardedBodyBytes(body: Record<string, unknown>): Buffer {
  const pieces: Array<string | readonly number[] | Uint8Array | Int32Array> = ['{'];
  let first = true;
  for (const key of Object.keys(body)) {
    pieces.push(`${first ? '' : ', '}${pythonJsonDumps(key)}: `);
    first = false;
    const source = key === 'input_ids' ? promptSource(body) : null;
    if (source !== null) {
      idsPieces(source.snapshot, source.length, pieces);
      continue;
    }
    const value = body[key];
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

// The digits of each whole typed-array piece of a snapshot (a node's own ids, never changed), each
// preceded by the `", "` that joins it to the piece before, written the first time a prompt re-sends
// them: a session's prompts share all but their last node's ids, so each id is written as digits once
// instead of once per later turn.
const pieceTexts = new WeakMap<Int32Array, Uint8Array>();
const pieceWriter = new AsciiWriter();
const ITEM_SEP = ', ';

/**
 * The pieces of `pythonJsonDumps(snapshot.slice(0, length))`: `[`, each stored piece's ids joined by
 * `", "`, `]`. Only when every piece is a typed array (32-bit integers: printed as `join` prints them);
 * a plain tail (a float, `-0`, a huge id) takes `pythonJsonPieces` of the array.
 */
function idsPieces(
  snapshot: TokenSnapshot,
  length: number,
  out: Array<string | readonly number[] | Uint8Array | Int32Array>,
): void {
  const stored = snapshot.pieces(0, length);
  for (const piece of stored) {
    if (!(piece.data instanceof Int32Array)) {
      for (const text of pythonJsonPieces(snapshot.slice(0, length))) out.push(text);
      return;
    }
  }
  out.push('[');
  let first = true;
  for (const { data, from, to } of stored) {
    const ids = data as Int32Array;
    if (from === 0 && to === ids.length) {
      const text = wholePieceText(ids);
      out.push(first ? text.subarray(ITEM_SEP.length) : text);
    } else {
      if (!first) out.push(ITEM_SEP);
      out.push(ids.subarray(from, to));
    }
    first = false;
  }
  out.push(']');
}

/** `", "` + the ids' digits joined by `", "`. */
function wholePieceText(ids: Int32Array): Uint8Array {
  let text = pieceTexts.get(ids);
  if (text === undefined) {
    pieceWriter.text(ITEM_SEP);
    pieceWriter.ints(ids, ITEM_SEP);
    text = pieceWriter.bytes();
    pieceTexts.set(ids, text);
  }
  return text;
}
