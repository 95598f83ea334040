import { setTimeout as sleep } from 'node:timers/promises';
import type { CallSpec, CompactionSpec, ResolvedEpisode, Turn } from '../episode-schema.ts';
import { type ChatReply, encodeDirective, type PolicyDirective, postChatCompletion } from './chat-client.ts';
import {
  AgentRunError,
  ChatCallError,
  EpisodeAbortedError,
  ScriptedTimeoutError,
  SequenceLengthExceededError,
} from './errors.ts';
import type { ParsedCommand, ParseResult } from './parse-result.ts';
import {
  answerPrompt,
  completionConfirmation,
  firstPrompt,
  handoffPrompt,
  noModelFallbackPrompt,
  type ParserName,
  parseErrorPrompt,
  parserFeedback,
  questionPrompt,
  shortSummaryHandoff,
  shortSummaryPrompt,
  summaryPrompt,
  TECHNICAL_DIFFICULTIES,
  timeoutPrompt,
  warningsPrompt,
} from './prompts.ts';
import { PythonIndexError, PythonOverflowError, pyMinDuration, pyNumberStr } from './python-text.ts';
import { parseReply } from './reply-parser.ts';
import { mainReply, type SubCallName, subCallReply } from './reply-writer.ts';
import { limitOutputLength, observationBody, ShellTerminal } from './terminal.ts';
import { type ChatMessage, countWords, estimateTokens } from './token-estimate.ts';

/** A Python exception inside Harbor's parser ends the agent run like any other exception. */
function parseWithHarborExceptions(parser: ParserName, content: string): ParseResult {
  try {
    return parseReply(parser, content);
  } catch (error) {
    if (error instanceof PythonIndexError || error instanceof PythonOverflowError)
      throw new AgentRunError(error.name, error.message);
    throw error;
  }
}

/** Counts the history's tokens for the summarization decisions (litellm's `token_counter` upstream). */
export type TokenCounter = (messages: readonly ChatMessage[]) => number;

/**
 * The Terminus-2 episode engine: replays Terminus 2's call sequence (Harbor 6c9ba3f0
 * src/harbor/agents/terminus_2/terminus_2.py; docs/harbor.md "Terminus 2 as the engine models it") against
 * `base_url`, with the episode script standing in for tmux and the verifier.
 */

/**
 * Main calls: LiteLLM's own 3 attempts inside `_query_llm`'s tenacity 3 (terminus_2.py, llms/lite_llm.py).
 */
export const MAIN_CALL_ATTEMPTS = 9;
/** Sub-agent calls and the reactive fallback chat bypass `_query_llm`: LiteLLM's 3 attempts only. */
export const SUB_CALL_ATTEMPTS = 3;

/** The 400 the fake policy is told to give for a forced context-length error (vLLM/SGLang wording). */
export const FORCED_CONTEXT_ERROR = {
  status: 400,
  message:
    "This model's maximum context length was exceeded: the prompt does not fit (forced by the episode script).",
} as const;

/** Directives above this size drop `content` for `completion_words`: servers cap headers at 16 KiB. */
const MAX_DIRECTIVE_BYTES = 8 * 1024;

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

export interface EpisodeMetrics {
  /** Successful main calls (Harbor's `n_steps`). */
  readonly turns: number;
  /** Loop iterations started. */
  readonly n_episodes: number;
  readonly summarization_count: number;
  readonly n_input_tokens: number;
  readonly n_output_tokens: number;
  readonly api_request_times_msec: readonly number[];
  /** Commands found in the replies (parsed leniently). */
  readonly tool_calls: number;
  /** Simulated command execution time (`exec_ms`). */
  readonly env_execution_ms: number;
  /** Pairs dropped by each reactive unwind, in order. */
  readonly unwound_pairs: readonly number[];
}

export type EpisodeEnd = 'completed' | 'agent_error' | 'sequence_length' | 'aborted';

export interface EpisodeResult {
  readonly end: EpisodeEnd;
  readonly error?: { readonly type: string; readonly message: string };
  /** The signal's reason when `end` is `aborted`. */
  readonly abortReason?: unknown;
  readonly metrics: EpisodeMetrics;
  readonly calls: readonly CallEvent[];
}

export interface PlayEpisodeOptions {
  readonly episode: ResolvedEpisode;
  /** OpenAI-style base (`…/v1`); calls go to `{baseUrl}/chat/completions`. */
  readonly baseUrl: string;
  /** LiteLLM-style name; an `openai/` prefix is stripped as LiteLLM does. Default `openai/model`. */
  readonly model?: string;
  /** Miles sampling params, sent with every call (Terminus' `llm_call_kwargs`). */
  readonly samplingParams?: Readonly<Record<string, unknown>>;
  readonly signal?: AbortSignal;
  readonly fetchImpl?: typeof fetch;
  readonly onCall?: (event: CallEvent) => void;
  /** Replaces the script's counter (default: the toy tokenizer's count, or `context.tokens_per_message`). */
  readonly countTokens?: TokenCounter;
}

const user = (content: string): ChatMessage => ({ role: 'user', content });

function assistant(reply: ChatReply, withReasoning: boolean): ChatMessage {
  const message: ChatMessage =
    withReasoning && reply.reasoning !== undefined
      ? { role: 'assistant', content: reply.content, reasoning_content: reply.reasoning }
      : { role: 'assistant', content: reply.content };
  return reply.toolCalls === undefined ? message : { ...message, tool_calls: reply.toolCalls };
}

/** The call keys of a turn, without the ones that only steer its own first attempt. */
function continuationSpec(turn: Turn, handoff: CallSpec | undefined): CallSpec {
  const { context_error: _c, error: _e, discard: _d, ...rest } = turn;
  return { ...pickCallKeys(rest), ...handoff };
}

function pickCallKeys(source: CallSpec): CallSpec {
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
  return spec;
}

interface MainReply extends ChatReply {
  /** The stand-in reply after every fallback failed; not a model reply. */
  readonly technicalDifficulties?: boolean;
}

class EpisodeRun {
  private readonly episode: ResolvedEpisode;
  private readonly options: PlayEpisodeOptions;
  private readonly signal: AbortSignal;
  private readonly fetchImpl: typeof fetch;
  private readonly model: string;
  private readonly terminal: ShellTerminal;
  private readonly calls: CallEvent[] = [];
  private history: ChatMessage[] = [];
  private prompt = '';
  private currentTurn = 0;
  private turns = 0;
  private nEpisodes = 0;
  private summarizationCount = 0;
  private nInputTokens = 0;
  private nOutputTokens = 0;
  private readonly apiTimes: number[] = [];
  private toolCalls = 0;
  private envMs = 0;
  private readonly unwound: number[] = [];

  constructor(options: PlayEpisodeOptions) {
    this.options = options;
    this.episode = options.episode;
    this.signal = options.signal ?? new AbortController().signal;
    this.fetchImpl = options.fetchImpl ?? fetch;
    this.model = (options.model ?? 'openai/model').replace(/^openai\//, '');
    this.terminal = new ShellTerminal(
      options.episode.script.initial_screen,
      options.episode.script.shell_prompt,
    );
  }

  async run(): Promise<EpisodeResult> {
    try {
      await this.loop();
      return this.result('completed');
    } catch (error) {
      return this.failure(error);
    }
  }

  private get script() {
    return this.episode.script;
  }

  private failure(error: unknown): EpisodeResult {
    if (error instanceof EpisodeAbortedError) return this.result('aborted', undefined, error.reason);
    if (error instanceof SequenceLengthExceededError)
      return this.result('sequence_length', {
        type: 'SingleTurnMaxSeqLenExceededError',
        message: error.message,
      });
    if (error instanceof AgentRunError)
      return this.result('agent_error', { type: error.type, message: error.message });
    if (error instanceof ChatCallError) {
      const type =
        error.kind === 'transport'
          ? 'APIConnectionError'
          : error.kind === 'context_length'
            ? 'ContextLengthExceededError'
            : error.kind === 'output_length'
              ? 'OutputLengthExceededError'
              : 'APIError';
      return this.result('agent_error', { type, message: error.message });
    }
    // A bug in the harness itself still ends the trial the way Harbor ends any exception.
    return this.result('agent_error', { type: 'HarnessInternalError', message: String(error) });
  }

  private result(
    end: EpisodeEnd,
    error?: { type: string; message: string },
    abortReason?: unknown,
  ): EpisodeResult {
    return {
      end,
      ...(error ? { error } : {}),
      ...(end === 'aborted' ? { abortReason } : {}),
      metrics: {
        turns: this.turns,
        n_episodes: this.nEpisodes,
        summarization_count: this.summarizationCount,
        n_input_tokens: this.nInputTokens,
        n_output_tokens: this.nOutputTokens,
        api_request_times_msec: [...this.apiTimes],
        tool_calls: this.toolCalls,
        env_execution_ms: this.envMs,
        unwound_pairs: [...this.unwound],
      },
      calls: [...this.calls],
    };
  }

  private checkAborted(): void {
    if (this.signal.aborted) throw new EpisodeAbortedError(this.signal.reason);
  }

  private historyTokens(): number {
    if (this.options.countTokens) return this.options.countTokens(this.history);
    const { tokens_per_message: perMessage, tokens_per_word: perWord } = this.script.context;
    if (perMessage !== undefined) return this.history.length * perMessage;
    return estimateTokens(this.history, perWord);
  }

  private compaction(k: number): CompactionSpec {
    return this.episode.compactions[k - 1] ?? {};
  }

  /**
   * `_run_agent_loop` (terminus_2.py L1215–L1537): each script turn is one loop iteration; the reply
   * is parsed, a parse error is answered with the error prompt (no commands run), otherwise the
   * commands run in the terminal and the next prompt is the incremental output (with the warnings,
   * the timeout template or the completion confirmation). Two task_complete replies in a row end it.
   */
  private async loop(): Promise<void> {
    const { turns, instruction } = this.episode;
    const parser = this.script.parser;
    this.prompt = firstPrompt(parser, instruction, limitOutputLength(this.terminal.incrementalOutput()));
    let pendingCompletion = false;
    for (let i = 0; i < turns.length; i += 1) {
      const turn = turns[i] as Turn;
      this.currentTurn = i;
      this.checkAborted();
      this.nEpisodes += 1;
      if (turn.crash !== undefined) throw new AgentRunError('RuntimeError', turn.crash);

      let handoff: CallSpec | undefined;
      if (this.script.summarize && instruction !== '' && this.history.length > 0) {
        const free = this.script.context.limit - this.historyTokens();
        if (free < this.script.context.threshold) {
          try {
            this.prompt = await this.summarize();
            handoff = this.compaction(this.summarizationCount).handoff;
          } catch (error) {
            // Terminus logs a failed proactive summarization and carries on with the full history.
            if (error instanceof EpisodeAbortedError) throw error;
          }
        }
      }

      const reply = await this.queryLlm(turn, handoff);
      if (!reply.technicalDifficulties) this.turns += 1;
      const parsed = parseWithHarborExceptions(parser, reply.content);
      const feedback = parserFeedback(parsed.error, parsed.warning);
      if (feedback.includes('ERROR:')) {
        this.prompt = parseErrorPrompt(parser, feedback);
        // Nothing runs and nothing is read; the script's output still reaches the pane.
        this.execute([], turn, turns[i + 1], false);
        continue;
      }
      this.toolCalls += parsed.commands.length;
      if (turn.timeout === true) throw new EpisodeAbortedError(new ScriptedTimeoutError(i));
      const terminalOutput = this.execute(parsed.commands, turn, turns[i + 1]);
      if (turn.exec_ms !== undefined && turn.exec_ms > 0) {
        await this.pause(turn.exec_ms);
        this.envMs += turn.exec_ms;
      }
      if (parsed.isTaskComplete) {
        if (pendingCompletion) return;
        pendingCompletion = true;
        this.prompt = completionConfirmation(parser, terminalOutput);
        continue;
      }
      pendingCompletion = false;
      this.prompt = feedback.includes('WARNINGS:')
        ? warningsPrompt(feedback, limitOutputLength(terminalOutput))
        : limitOutputLength(terminalOutput);
    }
  }

  /**
   * `_execute_commands` (L1183–L1213): the commands are typed one by one; what the batch prints is the
   * next turn's observation. A send that times out is answered with the timeout template at once.
   */
  private execute(
    commands: readonly ParsedCommand[],
    turn: Turn,
    next: Turn | undefined,
    read = true,
  ): string {
    const observation = next?.observation ?? '';
    const seed = this.currentTurn + 1;
    const capped = commands.map((c) => ({ ...c, duration: pyMinDuration(c.duration, 60) }));
    const timedOut = turn.send_timeout === true && capped.length > 0 ? capped.at(-1) : undefined;
    const sent = timedOut ? capped.slice(0, -1) : capped;
    this.terminal.runBatch(
      sent.map((c) => c.keystrokes),
      {
        output: timedOut ? '' : observationBody(observation, seed),
        clearsScreen: typeof observation === 'object' && observation.kind === 'screen',
        outlivesWait: turn.outlives_wait === true,
      },
    );
    if (!read) return '';
    if (timedOut)
      return timeoutPrompt(
        pyNumberStr(timedOut.duration),
        timedOut.keystrokes,
        limitOutputLength(this.terminal.incrementalOutput()),
      );
    return limitOutputLength(this.terminal.incrementalOutput());
  }

  private async pause(ms: number): Promise<void> {
    try {
      await sleep(ms, undefined, { signal: this.signal });
    } catch {
      throw new EpisodeAbortedError(this.signal.reason);
    }
  }

  /** `_query_llm`: the main call, and on a context-length error the reactive path. */
  private async queryLlm(turn: Turn, handoff: CallSpec | undefined): Promise<MainReply> {
    const spec: CallSpec = { ...pickCallKeys(turn), ...handoff };
    const messages = [...this.history, user(this.prompt)];
    const content = spec.content ?? mainReply(this.script.parser, turn, this.currentTurn);
    let reply: ChatReply;
    try {
      reply = await this.call('main', messages, spec, MAIN_CALL_ATTEMPTS, content);
    } catch (error) {
      if (!(error instanceof ChatCallError && error.kind === 'context_length')) throw error;
      if (!this.script.summarize) throw new AgentRunError('ContextLengthExceededError', error.message);
      return this.reactive(turn);
    }
    if (reply.finishReason === 'length') throw new SequenceLengthExceededError('main');
    this.history.push(user(this.prompt), assistant(reply, true));
    return reply;
  }

  /**
   * Reactive summarization (terminus_2.py `_query_llm` L979–L1068): unwind, summarize, fall back, continue.
   */
  private async reactive(turn: Turn): Promise<MainReply> {
    this.unwind();
    const { instruction } = this.episode;
    let prompt: string | undefined;
    try {
      prompt = await this.summarize();
    } catch (error) {
      if (error instanceof EpisodeAbortedError) throw error;
    }
    const k = this.summarizationCount;
    const compaction = this.compaction(k);
    if (prompt === undefined) {
      try {
        const short = await this.subCall(
          'short_summary',
          [user(shortSummaryPrompt(instruction, this.terminal.visibleScreen()))],
          compaction.short_summary,
          subCallReply('short_summary', k, compaction.short_summary),
        );
        prompt = shortSummaryHandoff(instruction, short.content);
      } catch (error) {
        if (error instanceof EpisodeAbortedError) throw error;
      }
    }
    prompt ??= noModelFallbackPrompt(instruction, this.terminal.visibleScreen());

    const spec = continuationSpec(turn, compaction.handoff);
    const messages = [...this.history, user(prompt)];
    const content = spec.content ?? mainReply(this.script.parser, turn, this.currentTurn);
    let reply: ChatReply;
    try {
      reply = await this.call('handoff', messages, spec, SUB_CALL_ATTEMPTS, content);
    } catch (error) {
      if (error instanceof EpisodeAbortedError) throw error;
      return { content: TECHNICAL_DIFFICULTIES, finishReason: 'stop', technicalDifficulties: true };
    }
    if (reply.finishReason === 'length') throw new SequenceLengthExceededError('handoff');
    this.history.push(user(prompt), assistant(reply, true));
    return reply;
  }

  /** Drops user+assistant pairs from the end while less than `unwind_target` tokens are free. */
  private unwind(): void {
    const { limit, unwind_target: target } = this.script.context;
    let pairs = 0;
    while (this.history.length > 1) {
      if (limit - this.historyTokens() >= target) break;
      this.history = this.history.slice(0, -2);
      pairs += 1;
    }
    this.unwound.push(pairs);
  }

  /** `_summarize`: the S, Q and A calls; on success the history becomes [U0, QP, questions]. */
  private async summarize(): Promise<string> {
    const { instruction } = this.episode;
    const history = [...this.history];
    if (history.length === 0) return instruction;
    this.summarizationCount += 1;
    const k = this.summarizationCount;
    const spec = this.compaction(k);
    const sp = summaryPrompt(instruction);
    const summary = await this.subCall(
      'summary',
      [...history, user(sp)],
      spec.summary,
      subCallReply('summary', k, spec.summary),
    );
    const qp = questionPrompt(instruction, summary.content, this.terminal.visibleScreen());
    const questions = await this.subCall(
      'questions',
      [user(qp)],
      spec.questions,
      subCallReply('questions', k, spec.questions),
    );
    // The summary is replayed content-only, even from a reasoning model (terminus_2.py `_summarize`).
    const answers = await this.subCall(
      'answers',
      [
        ...history,
        user(sp),
        { role: 'assistant', content: summary.content },
        user(answerPrompt(questions.content)),
      ],
      spec.answers,
      subCallReply('answers', k, spec.answers),
    );
    this.history = [history[0] as ChatMessage, user(qp), { role: 'assistant', content: questions.content }];
    return handoffPrompt(answers.content);
  }

  /** A sub-agent call: a truncated reply raises like LiteLLM's OutputLengthExceededError. */
  private async subCall(
    kind: SubCallName,
    messages: readonly ChatMessage[],
    spec: CallSpec | undefined,
    content: string,
  ): Promise<ChatReply> {
    const reply = await this.call(kind, messages, spec ?? {}, SUB_CALL_ATTEMPTS, spec?.content ?? content);
    if (reply.finishReason === 'length')
      throw new ChatCallError('output_length', `${kind} reply was truncated`, { status: 200 });
    return reply;
  }

  private directive(kind: CallKind, spec: CallSpec, content: string): PolicyDirective {
    const directive: PolicyDirective = { content };
    const reasoning =
      spec.reasoning ??
      (this.episode.reasoning ? `Thinking about the ${kind} call of turn ${this.currentTurn}.` : undefined);
    if (reasoning !== undefined) directive.reasoning_content = reasoning;
    if (spec.tool_calls !== undefined) directive.tool_calls = spec.tool_calls;
    if (spec.finish_reason !== undefined) directive.finish_reason = spec.finish_reason;
    if (spec.end_token !== undefined) directive.end_token = spec.end_token;
    if (Buffer.byteLength(encodeDirective(directive)) > MAX_DIRECTIVE_BYTES) {
      delete directive.content;
      directive.completion_words = countWords(content);
    }
    return directive;
  }

  /** One logical call with its retries: forced errors, discarded completions, transport failures. */
  private async call(
    kind: CallKind,
    messages: readonly ChatMessage[],
    spec: CallSpec,
    maxAttempts: number,
    content: string,
  ): Promise<ChatReply> {
    const base = this.directive(kind, spec, content);
    let discardsLeft = spec.discard ?? 0;
    let forcedErrorsLeft = spec.error ? (spec.error.attempts ?? Number.POSITIVE_INFINITY) : 0;
    for (let attempt = 1; ; attempt += 1) {
      this.checkAborted();
      const directive: PolicyDirective = { ...base };
      if (attempt === 1 && spec.context_error === true) directive.error = { ...FORCED_CONTEXT_ERROR };
      else if (spec.error && forcedErrorsLeft > 0) {
        directive.error = { status: spec.error.status, message: spec.error.message };
        forcedErrorsLeft -= 1;
      }
      const started = performance.now();
      const event = { kind, turn: this.currentTurn, attempt, messages: messages.length };
      let reply: ChatReply;
      try {
        reply = await postChatCompletion({
          baseUrl: this.options.baseUrl,
          model: this.model,
          messages,
          samplingParams: this.options.samplingParams ?? {},
          directive,
          signal: this.signal,
          fetchImpl: this.fetchImpl,
        });
      } catch (error) {
        const ms = performance.now() - started;
        if (error instanceof ChatCallError) {
          this.log({
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
      if (discardsLeft > 0) {
        discardsLeft -= 1;
        this.log({ ...event, outcome: 'discarded', status: 200, finishReason: reply.finishReason, ms });
        if (attempt >= maxAttempts)
          throw new ChatCallError('bad_response', `${kind} reply discarded`, { status: 200 });
        continue;
      }
      this.log({ ...event, outcome: 'ok', status: 200, finishReason: reply.finishReason, ms });
      this.apiTimes.push(ms);
      this.nInputTokens += reply.usage?.promptTokens ?? estimateTokens(messages) + 1;
      this.nOutputTokens +=
        reply.usage?.completionTokens ?? countWords(reply.reasoning) + countWords(reply.content) + 1;
      return reply;
    }
  }

  private log(event: CallEvent): void {
    this.calls.push(event);
    this.options.onCall?.(event);
  }
}

/** Plays one episode to its end; never throws (every ending is a result). */
export function playEpisode(options: PlayEpisodeOptions): Promise<EpisodeResult> {
  return new EpisodeRun(options).run();
}
