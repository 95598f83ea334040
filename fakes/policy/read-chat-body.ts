import { parseJson } from '../../common/python-json/loads.ts';
import type { MessagesSummary } from './log-entry.ts';
import type { PolicyRequestLike } from './policy-request.ts';

/**
 * A chat body as `JSON.parse` of its text reads it (the rule). With the body's bytes at hand (the socket
 * server), a `BodyBytesReader` may read the session server's layout first, to the same values (the
 * server's, plugged in by compose.ts: the ids straight from the bytes and a session's re-sent history
 * reused, fast/history-reuse.ts, or, for a log that keeps the messages, the split without the reuse,
 * fast/input-ids-body.ts). Any other body is parsed whole; a body that does not parse is refused.
 */

export interface ChatBody {
  readonly ok: true;
  /** The body's JSON; without its `input_ids` when those were read from the bytes. */
  readonly body: unknown;
  /**
   * The ids read from the bytes. From the reuse, a view the routing key's next read overwrites: the chat
   * route uses it before it awaits anything.
   */
  readonly splitIds: Int32Array | null;
  /** What the log keeps of the messages, when the reuse read them (its body has none). */
  readonly summary: MessagesSummary | null;
}

export type ChatBodyRead = ChatBody | { readonly ok: false; readonly problem: string };

/** A body read from its bytes: `JSON.parse`'s object apart from `input_ids`, and those ids. */
export interface BytesRead {
  readonly rest: unknown;
  readonly inputIds: Int32Array;
  /** What the log keeps of the messages when the reader read them (its `rest` has none). */
  readonly summary: MessagesSummary | null;
}

/** Speed only: reads a body of the session server's layout from its bytes; null for any other. */
export interface BodyBytesReader {
  read(routingKey: string | null, bytes: Uint8Array): BytesRead | null;
}

export interface BodyReading {
  /** Null: every body parsed whole from its text. */
  readonly bytesReader: BodyBytesReader | null;
}

/**
 * Returns at once (no promise) when the body was read from its bytes, so a caller that awaits only a
 * promise uses the reused ids before any other request's read can overwrite them.
 */
export function readChatBody(
  request: PolicyRequestLike,
  routingKey: string | null,
  reading: BodyReading,
): ChatBodyRead | Promise<ChatBodyRead> {
  let fromBytes: ChatBody | null;
  try {
    fromBytes = readBytes(request, routingKey, reading);
  } catch (error) {
    return invalid(error);
  }
  return fromBytes ?? readText(request);
}

/** The session server's layout read from the bytes; null when there are none or another layout. */
function readBytes(
  request: PolicyRequestLike,
  routingKey: string | null,
  reading: BodyReading,
): ChatBody | null {
  const bytes = request.bodyBytes?.();
  if (bytes === undefined || reading.bytesReader === null) return null;
  const read = reading.bytesReader.read(routingKey, bytes);
  return read === null ? null : { ok: true, body: read.rest, splitIds: read.inputIds, summary: read.summary };
}

async function readText(request: PolicyRequestLike): Promise<ChatBodyRead> {
  try {
    return { ok: true, body: parseJson(await request.text()), splitIds: null, summary: null };
  } catch (error) {
    return invalid(error);
  }
}

function invalid(error: unknown): ChatBodyRead {
  return { ok: false, problem: `invalid JSON body: ${(error as Error).message}` };
}
