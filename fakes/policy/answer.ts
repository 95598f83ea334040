import type { Directive } from '../../contracts/directive.ts';
import { isTraceReply } from '../../contracts/trace.ts';
import { QWEN3_IDS } from '../tokenizer/qwen3-tokenizer.ts';
import { type TitoFamily, titoFamily } from '../tokenizer/tito.ts';
import { buildChatCompletion, completionId, errorBody } from './completion.ts';
import { contextLimitMessage } from './context-limit.ts';
import { Counter } from './counter.ts';
import { emitFault } from './emit-fault.ts';
import type { IdsHashes } from './ids-hashes.ts';
import { idsFor, truncateToLength } from './length-cut.ts';
import type { PolicyMode, PolicyOptions } from './options.ts';
import type { HeaderReader } from './policy-request.ts';
import { PrefixCache } from './prefix-cache.ts';
import { type ReplyMessage, scriptedMessage, syntheticMessage } from './reply-message.ts';
import { ScriptBook } from './script-book.ts';
import { type SyntheticOptions, syntheticReply } from './synthetic.ts';

/**
 * How the policy answers a chat it could read: the directive's error, SGLang's context-length 400,
 * then a reply (a scripted turn, or the synthetic reply cut at `max_tokens`) wrapped as an SGLang
 * completion whose `cached_tokens` come from the prefix cache.
 */

/** What the policy answered, with what its request log keeps of it. */
export interface Answer {
  readonly status: number;
  readonly body: unknown;
  readonly responseId: string | null;
  readonly finishReason: string | null;
  readonly traceTurn: number | null;
}

/** What answering reads and keeps across requests, set up once per policy. */
export interface AnswerState {
  readonly mode: PolicyMode;
  readonly family: TitoFamily;
  readonly model: string;
  readonly clock: () => number;
  readonly contextLength: number | undefined;
  readonly synthetic: SyntheticOptions;
  readonly weightVersion: string;
  readonly scripts: ScriptBook;
  /** Numbers the synthetic completions (their ids). */
  readonly completions: Counter;
  readonly prefixCache: PrefixCache;
}

/** A request's prompt ids: parsed from the JSON, or read from the bytes (input-ids-body.ts). */
export type PromptIds = readonly number[] | Int32Array;

/** One chat, read and checked: what answering needs of it. */
export interface ChatInput {
  readonly headers: HeaderReader;
  readonly routingKey: string | null;
  readonly body: Record<string, unknown>;
  readonly promptIds: PromptIds;
  readonly directive: Directive | null;
  /** The prompt's running hashes (fakes/policy/fast/prompt-hashes.ts), computed when first asked for. */
  readonly promptHashes: () => IdsHashes;
}

/** The message a 200 answer carries, before it becomes a completion. */
interface Reply extends ReplyMessage {
  readonly responseId: string;
  readonly traceTurn: number | null;
  /** Cut at `max_tokens`: the completion ids lose their stop token. */
  readonly cut: boolean;
  /** The ids the script states for this reply, emitted as they are (no render, no cut). */
  readonly statedIds?: readonly number[];
}

/** A turn answered right away (a refusal, a scripted non-200) or a reply to wrap as a completion. */
type Outcome =
  | { readonly kind: 'answer'; readonly answer: Answer }
  | { readonly kind: 'reply'; readonly reply: Reply };

const DEFAULT_MODEL = 'toy-policy';

export function createAnswerState(options: PolicyOptions): AnswerState {
  return {
    mode: options.mode,
    family: titoFamily(options.tokenizer ?? 'default'),
    model: options.model ?? DEFAULT_MODEL,
    clock: options.clock ?? Date.now,
    contextLength: options.contextLength,
    synthetic: {
      completionWords: options.completionWords ?? 12,
      reasoningWords: options.reasoningWords ?? 0,
      format: options.replyFormat ?? 'json',
    },
    weightVersion: options.weightVersion ?? 'default',
    scripts: new ScriptBook(options.script, options.scripts),
    completions: new Counter(),
    prefixCache: new PrefixCache(),
  };
}

/** An error answer: SGLang's error body. */
export function refusal(status: number, message: string): Answer {
  return { status, body: errorBody(status, message), responseId: null, finishReason: null, traceTurn: null };
}

export function answerChat(state: AnswerState, chat: ChatInput): Answer {
  const { directive } = chat;
  if (directive?.error) return refusal(directive.error.status, directive.error.message);
  const maxTokens = maxTokensOf(chat.body);
  if (state.contextLength !== undefined) {
    const tooLong = contextLimitMessage(chat.promptIds.length, maxTokens, state.contextLength);
    if (tooLong !== null) return refusal(400, tooLong);
  }
  const outcome =
    state.mode === 'script'
      ? scriptedTurn(state.scripts, directive, chat.headers)
      : { kind: 'reply' as const, reply: syntheticTurn(state, chat, maxTokens) };
  return outcome.kind === 'answer' ? outcome.answer : completed(state, chat, outcome.reply);
}

/** SGLang's completion budget under any of its names; null when absent or not a count. */
function maxTokensOf(body: Record<string, unknown>): number | null {
  const v = body.max_tokens ?? body.max_completion_tokens ?? body.max_new_tokens;
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 ? v : null;
}

/** The scripted turn the headers choose: its message, or its non-200 answered as written. */
function scriptedTurn(book: ScriptBook, directive: Directive | null, headers: HeaderReader): Outcome {
  const choice = book.choose(headers);
  if (!choice.ok) return { kind: 'answer', answer: refusal(choice.status, choice.message) };
  const { turn, response } = choice;
  if (!isTraceReply(response)) {
    const { status, body } = response;
    const answer = { status, body: body ?? null, responseId: null, finishReason: null, traceTurn: turn };
    return { kind: 'answer', answer };
  }
  const reply = {
    ...scriptedMessage(response, directive),
    responseId: `resp-${turn}`,
    traceTurn: turn,
    cut: false,
    ...(response.completion_ids === undefined ? {} : { statedIds: response.completion_ids }),
  };
  return { kind: 'reply', reply };
}

/** The synthetic reply to the prompt, cut at `maxTokens` (finish reason `length` when cut). */
function syntheticTurn(state: AnswerState, chat: ChatInput, maxTokens: number | null): Reply {
  const hashes = chat.promptHashes();
  const drafted = syntheticMessage(
    syntheticReply(hashes.int32Crc, state.synthetic, chat.directive),
    chat.directive,
  );
  const { message, cut } =
    maxTokens === null
      ? { message: drafted.message, cut: false }
      : truncateToLength(state.family, drafted.message, maxTokens);
  return {
    message,
    finishReason: cut ? 'length' : drafted.finishReason,
    responseId: completionId(hashes.joinedTextCrc, state.completions.next()),
    traceTurn: null,
    cut,
  };
}

/**
 * The directive's `end_token`: the stop token swapped for `<|endoftext|>` (Qwen3 only: the toy has no such
 * token, so it is refused), or null when there is nothing to swap (a cut reply has no stop token).
 */
function endWith(family: AnswerState['family'], ids: number[], token: 'endoftext'): number[] | string {
  if (family.model !== 'qwen3')
    return `directive end_token ${token}: the ${family.model} family's tokenizer has no <|endoftext|>`;
  if (ids.at(-1) !== QWEN3_IDS.imEnd) return ids;
  return [...ids.slice(0, -1), QWEN3_IDS.endOfText];
}

/** The reply as SGLang's completion; the prompt and completion go into the prefix cache. */
function completed(state: AnswerState, chat: ChatInput, given: Reply): Answer {
  let reply = given;
  let faultIds: number[] | undefined;
  const fault = chat.directive?.fault;
  // A cut reply is emitted as cut: the fault belongs to a finished one.
  if (fault !== undefined && !reply.cut) {
    const faulty = emitFault(state.family, reply.message, reply.finishReason, fault);
    if (typeof faulty === 'string') return refusal(400, faulty);
    reply = { ...reply, message: faulty.message, finishReason: faulty.finishReason };
    faultIds = faulty.ids;
  }
  // Stated ids (the script's, else the directive's) are emitted as they are: a fault no message renders to.
  let completionIds =
    reply.statedIds ??
    chat.directive?.completion_ids ??
    faultIds ??
    // An aborted generation stops where the engine stopped it: its ids carry no stop token, as a cut
    // reply's do not (fixtures/field-failures/upstream-abort.json states such ids, radixark/miles#3337).
    idsFor(state.family, reply.message, reply.cut || reply.finishReason === 'abort');
  const endToken = chat.directive?.end_token;
  if (endToken !== undefined) {
    const swapped = endWith(state.family, [...completionIds], endToken);
    if (typeof swapped === 'string') return refusal(400, swapped);
    completionIds = swapped;
  }
  const cachedTokens = state.prefixCache.cachedTokens(chat.routingKey, chat.promptIds);
  state.prefixCache.insert(chat.routingKey, chat.promptIds, completionIds);
  const body = buildChatCompletion({
    id: reply.responseId,
    model: state.model,
    created: Math.floor(state.clock() / 1000),
    message: reply.message,
    finishReason: reply.finishReason,
    promptTokens: chat.promptIds.length,
    cachedTokens,
    completionIds,
    weightVersion: state.weightVersion,
    latency: 0,
  });
  const { responseId, finishReason, traceTurn } = reply;
  return { status: 200, body, responseId, finishReason, traceTurn };
}
