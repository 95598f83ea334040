import type { CallSpec } from '../episode-schema.ts';
import { type ChatReply, encodeDirective, type PolicyDirective, postChatCompletion } from './chat-client.ts';
import type { EpisodeCounters } from './episode-counters.ts';
import { ChatCallError, EpisodeAbortedError } from './errors.ts';
import { type ChatMessage, countWords, estimateTokens } from './token-estimate.ts';

/**
 * An episode's model calls as Terminus 2 makes them through LiteLLM (Harbor 6c9ba3f0
 * src/harbor/agents/terminus_2/terminus_2.py, llms/lite_llm.py): one logical call is attempts until one
 * is answered, the script's forced errors and discarded completions played on the way, each attempt
 * logged as a `CallEvent` and each answered one counted.
 */

/**
 * Main calls: LiteLLM's own 3 attempts inside `_query_llm`'s tenacity 3 (terminus_2.py, llms/lite_llm.py).
 */
export const MAIN_CALL_ATTEMPTS = 9;
/** Sub-agent calls and the reactive fallback chat bypass `_query_llm`: LiteLLM's 3 attempts only. */
export const SUB_CALL_ATTEMPTS = 3;

/** The 400 the fake policy is told to give for a forced context-length error (vLLM/SGLang wording). */
const FORCED_CONTEXT_ERROR = {
  status: 400,
  message:
    "This model's maximum context length was exceeded: the prompt does not fit (forced by the episode script).",
} as const;

/** Directives above this size drop `content` for `completion_words`: servers cap headers at 16 KiB. */
const MAX_DIRECTIVE_BYTES = 8 * 1024;

/** The first attempt of an `upstream_abort` call: the engine's 200 `abort` with the reply's first half. */
function abortedDirective(base: PolicyDirective): PolicyDirective {
  const { tool_calls: _calls, end_token: _end, fault: _fault, ...rest } = base;
  const directive: PolicyDirective = { ...rest, finish_reason: 'abort' };
  if (rest.content !== undefined) {
    const words = rest.content.split(' ');
    directive.content = words.slice(0, Math.max(1, Math.floor(words.length / 2))).join(' ');
  } else if (rest.completion_words !== undefined)
    directive.completion_words = Math.max(1, Math.floor(rest.completion_words / 2));
  return directive;
}

export type CallKind = 'main' | 'handoff' | 'summary' | 'questions' | 'answers' | 'short_summary';

/** One HTTP attempt, for logs and tests. */
export interface CallEvent {
  readonly kind: CallKind;
  readonly turn: number;
  readonly attempt: number;
  readonly messages: number;
  readonly outcome: 'ok' | 'discarded' | 'error';
  readonly status?: number;
  readonly finishReason?: string;
  readonly failure?: string;
  readonly ms: number;
}

/** The call keys of a script entry (a turn or a compaction's call). */
export function pickCallKeys(source: CallSpec): CallSpec {
  const spec: CallSpec = {};
  if (source.content !== undefined) spec.content = source.content;
  if (source.words !== undefined) spec.words = source.words;
  if (source.reasoning !== undefined) spec.reasoning = source.reasoning;
  if (source.tool_calls !== undefined) spec.tool_calls = source.tool_calls;
  if (source.finish_reason !== undefined) spec.finish_reason = source.finish_reason;
  if (source.error !== undefined) spec.error = source.error;
  if (source.context_error !== undefined) spec.context_error = source.context_error;
  if (source.discard !== undefined) spec.discard = source.discard;
  if (source.end_token !== undefined) spec.end_token = source.end_token;
  if (source.upstream_abort !== undefined) spec.upstream_abort = source.upstream_abort;
  if (source.emit_fault !== undefined) spec.emit_fault = source.emit_fault;
  return spec;
}

/** Where and how the calls go, fixed for the episode. */
export interface CallTarget {
  /** OpenAI-style base (`…/v1`); calls go to `{baseUrl}/chat/completions`. */
  readonly baseUrl: string;
  /** The model name as sent (LiteLLM's `openai/` prefix already stripped). */
  readonly model: string;
  readonly samplingParams: Readonly<Record<string, unknown>>;
  readonly signal: AbortSignal;
  readonly fetchImpl: typeof fetch;
  readonly onCall?: ((event: CallEvent) => void) | undefined;
  /** The script's `reasoning`: every reply carries a reasoning text unless its spec gives one. */
  readonly reasoning: boolean;
}

export class EpisodeCalls {
  /** Every attempt, in order. */
  readonly log: CallEvent[] = [];
  /** The script turn the calls belong to (the events' `turn`, the default reasoning text). */
  turn = 0;
  private readonly target: CallTarget;
  private readonly counters: EpisodeCounters;

  constructor(target: CallTarget, counters: EpisodeCounters) {
    this.target = target;
    this.counters = counters;
  }

  checkAborted(): void {
    if (this.target.signal.aborted) throw new EpisodeAbortedError(this.target.signal.reason);
  }

  private directive(kind: CallKind, spec: CallSpec, content: string): PolicyDirective {
    const directive: PolicyDirective = { content };
    const reasoning =
      spec.reasoning ??
      (this.target.reasoning ? `Thinking about the ${kind} call of turn ${this.turn}.` : undefined);
    if (reasoning !== undefined) directive.reasoning_content = reasoning;
    if (spec.tool_calls !== undefined) directive.tool_calls = spec.tool_calls;
    if (spec.finish_reason !== undefined) directive.finish_reason = spec.finish_reason;
    if (spec.end_token !== undefined) directive.end_token = spec.end_token;
    if (spec.emit_fault !== undefined) directive.fault = spec.emit_fault;
    if (Buffer.byteLength(encodeDirective(directive)) > MAX_DIRECTIVE_BYTES) {
      delete directive.content;
      directive.completion_words = countWords(content);
    }
    return directive;
  }

  /** One logical call with its retries: forced errors, discarded completions, transport failures. */
  async call(
    kind: CallKind,
    messages: readonly ChatMessage[],
    spec: CallSpec,
    maxAttempts: number,
    content: string,
  ): Promise<ChatReply> {
    const base = this.directive(kind, spec, content);
    let discardsLeft = spec.discard ?? 0;
    let abortsLeft = spec.upstream_abort === true ? 1 : 0;
    let forcedErrorsLeft = spec.error ? (spec.error.attempts ?? Number.POSITIVE_INFINITY) : 0;
    for (let attempt = 1; ; attempt += 1) {
      this.checkAborted();
      // The engine aborts one attempt, whatever the session answers for it (200 abort, or 503 under 4d412b5a).
      const aborting = abortsLeft > 0 && !(attempt === 1 && spec.context_error === true);
      if (aborting) abortsLeft -= 1;
      const directive: PolicyDirective = aborting ? abortedDirective(base) : { ...base };
      if (attempt === 1 && spec.context_error === true) directive.error = { ...FORCED_CONTEXT_ERROR };
      else if (spec.error && forcedErrorsLeft > 0) {
        directive.error = { status: spec.error.status, message: spec.error.message };
        forcedErrorsLeft -= 1;
      }
      const started = performance.now();
      const event = { kind, turn: this.turn, attempt, messages: messages.length };
      let reply: ChatReply;
      try {
        reply = await postChatCompletion({
          baseUrl: this.target.baseUrl,
          model: this.target.model,
          messages,
          samplingParams: this.target.samplingParams,
          directive,
          signal: this.target.signal,
          fetchImpl: this.target.fetchImpl,
        });
      } catch (error) {
        const ms = performance.now() - started;
        if (error instanceof ChatCallError) {
          this.record({
            ...event,
            outcome: 'error',
            ...(error.status !== undefined ? { status: error.status } : {}),
            failure: error.kind,
            ms,
          });
          if (error.kind === 'context_length' || attempt >= maxAttempts) throw error;
          continue;
        }
        throw error;
      }
      const ms = performance.now() - started;
      if (aborting && reply.finishReason === 'abort') {
        // The agent retries a turn the engine aborted (radixark/miles#3337's client); nothing is kept of it.
        this.record({ ...event, outcome: 'discarded', status: 200, finishReason: reply.finishReason, ms });
        if (attempt >= maxAttempts)
          throw new ChatCallError('bad_response', `${kind} reply aborted`, { status: 200 });
        continue;
      }
      if (discardsLeft > 0) {
        discardsLeft -= 1;
        this.record({ ...event, outcome: 'discarded', status: 200, finishReason: reply.finishReason, ms });
        if (attempt >= maxAttempts)
          throw new ChatCallError('bad_response', `${kind} reply discarded`, { status: 200 });
        continue;
      }
      this.record({ ...event, outcome: 'ok', status: 200, finishReason: reply.finishReason, ms });
      this.counters.callAnswered(
        ms,
        reply.usage?.promptTokens ?? estimateTokens(messages) + 1,
        reply.usage?.completionTokens ?? countWords(reply.reasoning) + countWords(reply.content) + 1,
      );
      return reply;
    }
  }

  /**
   * A second request, sent while the main call is in flight (two requests in one session at once): the
   * caller gives its messages (a parallel branch's, play-episode.ts), the directive is the main call's.
   * Its reply or error is logged and dropped, and nothing is counted.
   */
  async concurrentTwin(kind: CallKind, messages: readonly ChatMessage[], spec: CallSpec, content: string) {
    const started = performance.now();
    const event = { kind, turn: this.turn, attempt: 0, messages: messages.length };
    try {
      const reply = await postChatCompletion({
        baseUrl: this.target.baseUrl,
        model: this.target.model,
        messages,
        samplingParams: this.target.samplingParams,
        directive: this.directive(kind, spec, content),
        signal: this.target.signal,
        fetchImpl: this.target.fetchImpl,
      });
      const ms = performance.now() - started;
      this.record({ ...event, outcome: 'discarded', status: 200, finishReason: reply.finishReason, ms });
    } catch (error) {
      if (!(error instanceof ChatCallError)) throw error;
      const status = error.status === undefined ? {} : { status: error.status };
      this.record({
        ...event,
        outcome: 'error',
        ...status,
        failure: error.kind,
        ms: performance.now() - started,
      });
    }
  }

  private record(event: CallEvent): void {
    this.log.push(event);
    this.target.onCall?.(event);
  }
}
