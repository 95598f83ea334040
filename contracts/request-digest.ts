import { createHash } from 'node:crypto';

/**
 * Digests of what a chat request sent, so the policy's request log can keep a fingerprint instead of
 * the arrays (a 32k-token context is ≈ 1 MB of parsed messages and ids per request) and the replay can
 * still tell a re-sent request from a different one (replay/checks/request-join.ts).
 */

/** Canonical JSON: object keys sorted, so two spellings of one message give one text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

/** How much of the last message's text the log keeps (enough to recognise a prompt by its opening). */
export const MESSAGE_HEAD_CHARS = 200;

/** The first `MESSAGE_HEAD_CHARS` characters of the last message's `content` when it is a string, else ''. */
export function lastMessageHead(messages: readonly unknown[]): string {
  const last = messages.at(-1);
  if (last === null || typeof last !== 'object') return '';
  const content = (last as { content?: unknown }).content;
  return typeof content === 'string' ? content.slice(0, MESSAGE_HEAD_CHARS) : '';
}

/**
 * sha256 (hex) of the messages' canonical JSON, fed a message at a time (the same bytes as
 * `canonicalJson(messages)`, without building the whole history as one string per request).
 */
export function messagesDigest(messages: readonly unknown[]): string {
  const hash = createHash('sha256').update('[');
  messages.forEach((message, i) => {
    if (i > 0) hash.update(',');
    hash.update(canonicalJson(message), 'utf8');
  });
  return hash.update(']').digest('hex');
}

/**
 * sha256 (hex) of the ids as float64 values (exact for every JS number), so hashing a 32k prompt
 * needs no text; the length is kept beside it by the log.
 */
export function tokenIdsDigest(ids: readonly number[]): string {
  const values = new Float64Array(ids.length);
  // `+ 0` turns -0 into 0: the two compare equal as ids.
  for (let i = 0; i < ids.length; i++) values[i] = ids[i]! + 0;
  return createHash('sha256').update(new Uint8Array(values.buffer)).digest('hex');
}
