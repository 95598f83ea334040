import type { Directive } from '../../contracts/directive.ts';
import type { Answer, PromptIds } from './answer.ts';
import { type IdsHashes, idsDigest } from './ids-hashes.ts';
import type { PolicyLogEntry } from './request-log.ts';

/** What the request log keeps of a chat: what was read of the request, and the answer. */

/** What the policy's request log keeps of the messages (contracts/request-digest.ts). */
export interface MessagesSummary {
  readonly count: number;
  /** `messagesDigest(messages)`. */
  readonly digest: string;
  /** `lastMessageHead(messages)`. */
  readonly lastHead: string;
}

/** What was read of a request, as far as it got before the answer. */
export interface ChatSeen {
  /** Epoch milliseconds at arrival. */
  readonly at: number;
  readonly method: string;
  readonly path: string;
  readonly routingKey: string | null;
  readonly messages: readonly unknown[];
  readonly summary: MessagesSummary;
  readonly inputIds: PromptIds | null;
  readonly inputIdsHashes: IdsHashes | null;
  readonly directive: Directive | null;
}

/** A completion body's `choices[0].message`, or null for an error answer. */
function replyMessage(body: unknown): unknown {
  const choices = (body as { choices?: { message?: unknown }[] } | null)?.choices;
  return Array.isArray(choices) ? (choices[0]?.message ?? null) : null;
}

export function logEntry(seen: ChatSeen, answer: Answer, keepMessages: boolean): PolicyLogEntry {
  return {
    at: seen.at,
    method: seen.method,
    path: seen.path,
    routingKey: seen.routingKey,
    messageCount: seen.summary.count,
    messagesDigest: seen.summary.digest,
    lastMessageHead: seen.summary.lastHead,
    inputIdsLength: seen.inputIds === null ? null : seen.inputIds.length,
    inputIdsDigest: seen.inputIdsHashes === null ? null : idsDigest(seen.inputIdsHashes),
    ...(keepMessages ? { messages: seen.messages, reply: replyMessage(answer.body) } : {}),
    responseId: answer.responseId,
    status: answer.status,
    finishReason: answer.finishReason,
    directive: seen.directive,
    traceTurn: answer.traceTurn,
  };
}
