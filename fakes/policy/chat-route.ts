import { isJsonObject } from '../../common/python-json/values.ts';
import { parseDirective } from '../../contracts/directive.ts';
import { DIRECTIVE_HEADER, ROUTING_KEY_HEADER } from '../../contracts/policy-headers.ts';
import { lastMessageHead, messagesDigest } from '../../contracts/request-digest.ts';
import type { TitoFamily } from '../tokenizer/tito.ts';
import { type Answer, type AnswerState, answerChat, type PromptIds, refusal } from './answer.ts';
import type { PromptHashing } from './ids-hashes.ts';
import { type ChatSeen, logEntry, type MessagesSummary } from './log-entry.ts';
import type { PolicyChatReply, PolicyRequestLike } from './policy-request.ts';
import { type BodyReading, type ChatBody, readChatBody } from './read-chat-body.ts';
import type { PolicyRequestLog } from './request-log.ts';

/**
 * The chat route: the body read (read-chat-body.ts), the prompt's hashes, the directive header, the
 * prompt ids (`input_ids`, or the family's render of the messages), the answer (answer.ts), and the
 * request logged with the answer whatever it was. The msw handler and the socket server's direct route
 * both call it.
 */

export interface ChatRouteState extends BodyReading {
  readonly log: PolicyRequestLog;
  readonly clock: () => number;
  /** Each prompt's hashes (ids-hashes.ts; the server's continue turn to turn). */
  readonly hashes: PromptHashing;
  readonly answer: AnswerState;
}

export async function answerRequest(
  state: ChatRouteState,
  request: PolicyRequestLike,
): Promise<PolicyChatReply> {
  const at = state.clock();
  const path = new URL(request.url).pathname;
  const routingKey = request.headers.get(ROUTING_KEY_HEADER);
  const arrival: Arrival = { at, method: request.method, path, routingKey };
  const pending = readChatBody(request, routingKey, state);
  // Awaited only when it is a promise: ids read from the bytes are used before anything awaits.
  const read = pending instanceof Promise ? await pending : pending;
  if (!read.ok) return record(state.log, nothingSeen(arrival), refusal(400, read.problem));
  const body = isJsonObject(read.body) ? read.body : {};
  const seen = seenOf(state.hashes, arrival, body, read);
  const directiveParse = parseDirective(request.headers.get(DIRECTIVE_HEADER));
  if (!directiveParse.ok)
    return record(state.log, seen, refusal(400, `invalid ${DIRECTIVE_HEADER}: ${directiveParse.problem}`));
  const { directive } = directiveParse;
  const prompt = promptIdsOf(state.answer.family, body, seen.messages, seen.inputIds);
  if (!prompt.ok) return record(state.log, { ...seen, directive }, refusal(400, prompt.problem));
  const promptIds = prompt.ids;
  const answer = answerChat(state.answer, {
    headers: request.headers,
    routingKey,
    body,
    promptIds,
    directive,
    promptHashes: () => seen.inputIdsHashes ?? state.hashes.idsHashes(routingKey, promptIds),
  });
  return record(state.log, { ...seen, directive }, answer);
}

/** What the log keeps of any request, read or not. */
type Arrival = Pick<ChatSeen, 'at' | 'method' | 'path' | 'routingKey'>;

/** A request whose body could not be read: no messages, no ids. */
function nothingSeen(arrival: Arrival): ChatSeen {
  return {
    ...arrival,
    messages: [],
    summary: summarize([]),
    inputIds: null,
    inputIdsHashes: null,
    directive: null,
  };
}

/** What a read body sent: its messages and `input_ids` (integers only), the ids hashed (directive not yet read). */
function seenOf(
  hashes: PromptHashing,
  arrival: Arrival,
  body: Record<string, unknown>,
  read: ChatBody,
): ChatSeen {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const inputIds: PromptIds | null = read.splitIds ?? intArray(body.input_ids);
  return {
    ...arrival,
    messages,
    summary: read.summary ?? summarize(messages),
    inputIds,
    // Hashed once per request: the log's digest and (synthetic mode) the reply's seed and id.
    inputIdsHashes: inputIds === null ? null : hashes.idsHashes(arrival.routingKey, inputIds),
    directive: null,
  };
}

/** What the log keeps of a request's parsed messages. */
function summarize(messages: readonly unknown[]): MessagesSummary {
  return { count: messages.length, digest: messagesDigest(messages), lastHead: lastMessageHead(messages) };
}

function intArray(v: unknown): number[] | null {
  return Array.isArray(v) && v.every((x) => Number.isInteger(x)) ? (v as number[]) : null;
}

/** The prompt: the `input_ids` sent, else the family's render of the messages (which may refuse them). */
function promptIdsOf(
  family: TitoFamily,
  body: Record<string, unknown>,
  messages: readonly unknown[],
  inputIds: PromptIds | null,
): { ok: true; ids: PromptIds } | { ok: false; problem: string } {
  const kwargs = isJsonObject(body.chat_template_kwargs) ? body.chat_template_kwargs : {};
  try {
    return { ok: true, ids: inputIds ?? family.renderPrompt(messages, kwargs) };
  } catch (error) {
    return { ok: false, problem: `cannot render messages: ${(error as Error).message}` };
  }
}

function record(log: PolicyRequestLog, seen: ChatSeen, answer: Answer): PolicyChatReply {
  log.add(logEntry(seen, answer, log.keepMessages));
  return { status: answer.status, body: answer.body };
}
