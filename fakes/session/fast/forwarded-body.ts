import { AsciiWriter } from '../../../common/ascii-writer.ts';
import { withRoom } from '../../../common/buffer-room.ts';
import {
  pythonJsonDumps,
  pythonJsonPieces,
  pythonJsonPiecesToBytes,
} from '../../../common/python-json/dumps.ts';
import type { TokenSnapshot } from '../token-snapshot.ts';
import { promptSource } from './prompt-ids-getter.ts';

/**
 * The body the session server forwards to the backend, as `json.dumps(body)` writes it (Python's
 * defaults: `", "`/`": "` separators, `ensure_ascii`), byte for byte what `pythonJsonDumps(body)` gives.
 * A client re-sends its whole history every turn, and the chat route hands each re-sent message the
 * stored object it equals (shared-messages.ts `shareStoredMessages`), so a message's text is written once and
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
 * The bytes of the last list written per first message (inside its brackets), in a buffer the entry
 * owns: the next list re-sending a run of the same objects keeps that run's bytes where they are and
 * has only the rest written after them.
 */
interface ListBytes {
  /** The messages written, by reference. */
  messages: unknown[];
  /** The list's bytes, then room to grow into. */
  buffer: Uint8Array;
  /** `ends[i]`: where message i's text ends in the buffer (entries past the list's are spare room). */
  ends: Int32Array;
}

// The last list written per first message (an object: a session's stored system prompt, shared by
// each of its requests), so the next request of that session, which re-sends the same stored objects
// and then a few new ones, keeps the bytes of the re-sent run instead of joining and encoding each
// message's text again (and instead of copying them into a fresh buffer: fresh pages cost more than
// the copy). One list per first message: about a history's size per session.
const lastLists = new WeakMap<object, ListBytes>();
const listWriter = new AsciiWriter();

/**
 * The bytes of `list`'s messages' texts joined by `", "` (`pythonJsonDumps(list)` without its brackets;
 * the texts are ASCII, `ensure_ascii`). The leading run of objects that are the very objects the last
 * list with the same first message held keeps that list's bytes. The bytes returned are the entry's
 * own buffer: valid only until the next call (the caller copies them at once, `forwardedBodyBytes`).
 */
function messageListBytes(list: readonly unknown[]): Uint8Array {
  const first = list[0];
  const keyed = typeof first === 'object' && first !== null;
  const last = keyed ? lastLists.get(first) : undefined;
  let reused = 0;
  if (last !== undefined) {
    const held = last.messages;
    const most = Math.min(held.length, list.length);
    // Objects only: a number or string equal by `===` may still print otherwise (`0` and `-0`).
    while (reused < most && list[reused] === held[reused] && typeof held[reused] === 'object') reused += 1;
  }
  // The entry this list continues (found by its first message, so it shares at least that one).
  const base = reused > 0 ? last : undefined;
  const kept = base === undefined ? 0 : (base.ends[reused - 1] as number);
  // The rest's texts, each preceded by the separator (none before the list's first).
  const writer = listWriter;
  writer.reset();
  const ends = withRoom(base?.ends ?? new Int32Array(0), list.length, reused, (n) => new Int32Array(n));
  for (let i = reused; i < list.length; i += 1) {
    if (i > 0) writer.text(', ');
    writer.text(messageText(list[i]));
    ends[i] = kept + writer.length;
  }
  const length = kept + writer.length;
  const buffer = withRoom(base?.buffer ?? new Uint8Array(0), length, kept, (n) => new Uint8Array(n));
  buffer.set(writer.view(), kept);
  writer.reset();
  if (!keyed) return buffer.subarray(0, length);
  if (base !== undefined) {
    base.messages.length = reused;
    for (let i = reused; i < list.length; i += 1) base.messages.push(list[i]);
    base.buffer = buffer;
    base.ends = ends;
  } else lastLists.set(first, { messages: list.slice(), buffer, ends });
  return buffer.subarray(0, length);
}

/**
 * The UTF-8 bytes of `pythonJsonDumps(body)`: each message's cached text, every other value's pieces
 * (so `input_ids` is written as digits, not as a joined string: common/ascii-writer.ts). An `input_ids`
 * that is the chat route's prompt getter (prompt-ids-getter.ts `installPromptIds`) is written from its snapshot
 * without building the array: each stored piece's digits written once and kept (`idsPieces`). With
 * `into`, the bytes go into the buffer it gives (the chat route's pooled body buffers).
 */
export function forwardedBodyBytes(
  body: Record<string, unknown>,
  into?: (size: number) => Uint8Array,
): Buffer {
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
      if (value.length > 0) pieces.push(messageListBytes(value));
      pieces.push(']');
    } else for (const piece of pythonJsonPieces(value)) pieces.push(piece);
  }
  pieces.push('}');
  return pythonJsonPiecesToBytes(pieces, ', ', into);
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
