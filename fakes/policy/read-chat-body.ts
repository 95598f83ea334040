import { parseJson } from '../../common/python-json/loads.ts';
import type { HistoryReuse, MessagesSummary } from './fast/history-reuse.ts';
import { splitInputIds } from './fast/input-ids-body.ts';
import type { PolicyRequestLike } from './policy-request.ts';

/**
 * A chat body as `JSON.parse` of its text reads it. With the body's bytes at hand (the socket server),
 * the speed machinery reads the session server's layout first: the ids straight from the bytes and a
 * session's re-sent history reused (fast/history-reuse.ts), or, for a log that keeps the messages and so
 * needs them all parsed, the split without the reuse (fast/input-ids-body.ts). Any other body is parsed
 * whole; a body that does not parse is refused.
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

/** Where the bodies' reads are kept, per routing key. */
export interface BodyReading {
  readonly history: HistoryReuse;
  /** The request log keeps messages (`PolicyRequestLog.keepMessages`): no reuse. */
  readonly keepMessages: boolean;
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
  if (bytes === undefined) return null;
  if (reading.keepMessages) {
    const split = splitInputIds(bytes);
    return split === null ? null : { ok: true, body: split.rest, splitIds: split.inputIds, summary: null };
  }
  const reused = reading.history.read(routingKey, bytes);
  return reused === null
    ? null
    : { ok: true, body: reused.rest, splitIds: reused.inputIds, summary: reused.messages };
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
