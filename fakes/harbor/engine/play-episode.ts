import { setTimeout as sleep } from 'node:timers/promises';
import type { CallSpec, ResolvedEpisode, Turn } from '../episode-schema.ts';
import { EpisodeCompaction, type MainReply } from './compaction.ts';
import { type CallEvent, EpisodeCalls, MAIN_CALL_ATTEMPTS, pickCallKeys } from './episode-calls.ts';
import { EpisodeCounters, type EpisodeMetrics } from './episode-counters.ts';
import { assistant, EpisodeHistory, scriptTokenCounter, type TokenCounter, user } from './episode-history.ts';
import {
  AgentRunError,
  ChatCallError,
  EpisodeAbortedError,
  ScriptedTimeoutError,
  SequenceLengthExceededError,
} from './errors.ts';
import { parallelBranchPrompt } from './parallel-branch.ts';
import type { ParsedCommand, ParseResult } from './parse-result.ts';
import {
  completionConfirmation,
  firstPrompt,
  outputLengthPrompt,
  type ParserName,
  parseErrorPrompt,
  parserFeedback,
  timeoutPrompt,
  warningsPrompt,
} from './prompts.ts';
import { PythonIndexError, PythonOverflowError, pyMinDuration, pyNumberStr } from './python-text.ts';
import { parseReply } from './reply-parser.ts';
import { mainReply } from './reply-writer.ts';
import { limitOutputLength, observationBody, ShellTerminal } from './terminal.ts';
import type { ChatMessage } from './token-estimate.ts';

/**
 * The Terminus-2 episode engine: replays Terminus 2's call sequence (Harbor 6c9ba3f0
 * src/harbor/agents/terminus_2/terminus_2.py; docs/harbor.md "Terminus 2 as the engine models it") against
 * `base_url`, with the episode script standing in for tmux and the verifier. This file is the agent loop;
 * the model calls are episode-calls.ts, summarization and unwinding compaction.ts, the counts
 * episode-counters.ts.
 */

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

/** How an error thrown out of the loop ends the episode (Harbor's exception type and message). */
function failureOf(error: unknown): { end: EpisodeEnd; type?: string; message?: string; reason?: unknown } {
  if (error instanceof EpisodeAbortedError) return { end: 'aborted', reason: error.reason };
  if (error instanceof SequenceLengthExceededError)
    return { end: 'sequence_length', type: 'SingleTurnMaxSeqLenExceededError', message: error.message };
  if (error instanceof AgentRunError) return { end: 'agent_error', type: error.type, message: error.message };
  if (error instanceof ChatCallError) {
    const type =
      error.kind === 'transport'
        ? 'APIConnectionError'
        : error.kind === 'context_length'
          ? 'ContextLengthExceededError'
          : error.kind === 'output_length'
            ? 'OutputLengthExceededError'
            : 'APIError';
    return { end: 'agent_error', type, message: error.message };
  }
  // A bug in the harness itself still ends the trial the way Harbor ends any exception.
  return { end: 'agent_error', type: 'HarnessInternalError', message: String(error) };
}

class EpisodeRun {
  private readonly episode: ResolvedEpisode;
  private readonly signal: AbortSignal;
  private readonly terminal: ShellTerminal;
  private readonly history: EpisodeHistory;
  private readonly counters = new EpisodeCounters();
  private readonly calls: EpisodeCalls;
  private readonly compaction: EpisodeCompaction;
  private prompt = '';
  /** The episode's first prompt, which a `restart` re-sends. */
  private firstPrompt = '';
  /** Set by a `tool_response` turn: the next prompt answers this tool call as a `tool` message. */
  private promptToolCallId: string | undefined;
  /** Set by a `strip_thinking` turn: assistant messages enter the history without their reasoning. */
  private stripThinking = false;
  /** The model's output limit as the agent knows it (`max_tokens` of its sampling params). */
  private readonly outputLimit: number | undefined;
  /** The last command the episode typed (duration capped): what a `concurrent` twin's branch timed out on. */
  private lastCommand: ParsedCommand | undefined;

  constructor(options: PlayEpisodeOptions) {
    this.episode = options.episode;
    const { script } = options.episode;
    this.signal = options.signal ?? new AbortController().signal;
    const maxTokens = options.samplingParams?.max_tokens;
    this.outputLimit = typeof maxTokens === 'number' && Number.isInteger(maxTokens) ? maxTokens : undefined;
    this.terminal = new ShellTerminal(script.initial_screen, script.shell_prompt);
    this.history = new EpisodeHistory(options.countTokens ?? scriptTokenCounter(script.context));
    this.calls = new EpisodeCalls(
      {
        baseUrl: options.baseUrl,
        model: (options.model ?? 'openai/model').replace(/^openai\//, ''),
        samplingParams: options.samplingParams ?? {},
        signal: this.signal,
        fetchImpl: options.fetchImpl ?? fetch,
        onCall: options.onCall,
        reasoning: options.episode.reasoning,
      },
      this.counters,
    );
    this.compaction = new EpisodeCompaction(options.episode, {
      history: this.history,
      terminal: this.terminal,
      calls: this.calls,
      counters: this.counters,
    });
  }

  async run(): Promise<EpisodeResult> {
    try {
      await this.loop();
      return this.result({ end: 'completed' });
    } catch (error) {
      return this.result(failureOf(error));
    }
  }

  private result(ending: ReturnType<typeof failureOf>): EpisodeResult {
    const { end, type, message, reason } = ending;
    return {
      end,
      ...(type !== undefined && message !== undefined ? { error: { type, message } } : {}),
      ...(end === 'aborted' ? { abortReason: reason } : {}),
      metrics: this.counters.metrics(),
      calls: [...this.calls.log],
    };
  }

  /**
   * `_run_agent_loop` (terminus_2.py L1215–L1537): each script turn is one loop iteration; the reply
   * is parsed, a parse error is answered with the error prompt (no commands run), otherwise the
   * commands run in the terminal and the next prompt is the incremental output (with the warnings,
   * the timeout template or the completion confirmation). Two task_complete replies in a row end it.
   */
  private async loop(): Promise<void> {
    const { turns, instruction } = this.episode;
    const parser = this.episode.script.parser;
    this.prompt = firstPrompt(parser, instruction, limitOutputLength(this.terminal.incrementalOutput()));
    this.firstPrompt = this.prompt;
    let pendingCompletion = false;
    for (let i = 0; i < turns.length; i += 1) {
      const turn = turns[i] as Turn;
      this.calls.turn = i;
      this.calls.checkAborted();
      this.counters.iterationStarted();
      if (turn.crash !== undefined) throw new AgentRunError('RuntimeError', turn.crash);
      if (this.agentFaults(turn)) pendingCompletion = false;

      const proactive = await this.compaction.proactive();
      if (proactive !== undefined) this.prompt = proactive.prompt;
      const reply = await this.queryLlm(turn, proactive?.spec);
      if (!reply.technicalDifficulties) this.counters.stepTaken();
      this.promptToolCallId = turn.tool_response === true ? firstToolCallId(reply) : undefined;
      const parsed = parseWithHarborExceptions(parser, reply.content);
      const feedback = parserFeedback(parsed.error, parsed.warning);
      if (feedback.includes('ERROR:')) {
        this.prompt = parseErrorPrompt(parser, feedback);
        // Nothing runs and nothing is read; the script's output still reaches the pane.
        this.execute([], turn, turns[i + 1], false);
        continue;
      }
      this.counters.commandsFound(parsed.commands.length);
      if (turn.timeout === true) throw new EpisodeAbortedError(new ScriptedTimeoutError(i));
      const terminalOutput = this.execute(parsed.commands, turn, turns[i + 1]);
      if (turn.exec_ms !== undefined && turn.exec_ms > 0) {
        await this.pause(turn.exec_ms);
        this.counters.commandsExecuted(turn.exec_ms);
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
    const seed = this.calls.turn + 1;
    const capped = commands.map((c) => ({ ...c, duration: pyMinDuration(c.duration, 60) }));
    const timedOut = turn.send_timeout === true && capped.length > 0 ? capped.at(-1) : undefined;
    const sent = timedOut ? capped.slice(0, -1) : capped;
    this.lastCommand = capped.at(-1) ?? this.lastCommand;
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

  /**
   * The agent-side faults a turn carries, applied before its proactive check (docs/episodes.md "Turns"):
   * a restart empties the history and re-sends the first prompt, a rollback cuts the history back to the
   * first exchange, `strip_thinking` drops the reasoning from every assistant message kept. Returns
   * whether the conversation restarted.
   */
  private agentFaults(turn: Turn): boolean {
    if (turn.strip_thinking === true) {
      this.stripThinking = true;
      this.history.messages = this.history.messages.map(withoutReasoning);
    }
    if (turn.rollback === true && this.history.messages.length > 2)
      this.history.messages = this.history.messages.slice(0, 2);
    if (turn.restart !== true) return false;
    this.history.messages = [];
    this.prompt = this.firstPrompt;
    this.promptToolCallId = undefined;
    return true;
  }

  /** The prompt as the message the agent sends: a `tool` message after a `tool_response` turn. */
  private promptMessage(): ChatMessage {
    const id = this.promptToolCallId;
    return id === undefined ? user(this.prompt) : { role: 'tool', content: this.prompt, tool_call_id: id };
  }

  /** `_query_llm`: the main call, and on a context-length error the reactive path. */
  private async queryLlm(turn: Turn, handoff: CallSpec | undefined): Promise<MainReply> {
    const spec: CallSpec = { ...pickCallKeys(turn), ...handoff };
    const prompt = this.promptMessage();
    const messages = [...this.history.messages, prompt];
    const content = spec.content ?? mainReply(this.episode.script.parser, turn, this.calls.turn);
    let reply: MainReply;
    const twin = turn.concurrent === true ? this.concurrentTwin(prompt, spec, content) : undefined;
    try {
      reply = await this.calls.call('main', messages, spec, MAIN_CALL_ATTEMPTS, content);
    } catch (error) {
      if (!(error instanceof ChatCallError && error.kind === 'context_length')) throw error;
      if (!this.episode.script.summarize)
        throw new AgentRunError('ContextLengthExceededError', error.message);
      await twin;
      return this.compaction.reactive(turn);
    } finally {
      // The twin's own failure is logged by it; only an abort of the episode propagates.
      await twin?.catch((error: unknown) => {
        if (error instanceof EpisodeAbortedError) throw error;
      });
    }
    if (reply.finishReason === 'length') {
      if (turn.recover === true) return this.recover(turn, reply);
      throw new SequenceLengthExceededError('main');
    }
    this.history.messages.push(prompt, assistant(reply, !this.stripThinking));
    return reply;
  }

  /**
   * The `concurrent` turn's twin (radixark/miles#3258): the same history, the parallel branch's
   * observation as its last message (parallel-branch.ts), the main call's directive.
   */
  private concurrentTwin(prompt: ChatMessage, spec: CallSpec, content: string): Promise<void> {
    const branch = parallelBranchPrompt(prompt.content, this.lastCommand, this.terminal.visibleScreen());
    const messages = [...this.history.messages, { ...prompt, content: branch }];
    return this.calls.concurrentTwin('main', messages, spec, content);
  }

  /**
   * Response-length policy `recover` (Harbor 6c9ba3f0 terminus_2.py `_query_llm`, `except
   * OutputLengthExceededError`): the prompt and the cut reply (content only) join the history and the
   * model is asked to re-issue the request in chunks; the re-issued reply is a normal one. The XML
   * parser's salvage finds nothing here: the cut lands inside `<analysis>`, which holds the padding.
   */
  private async recover(turn: Turn, cut: MainReply): Promise<MainReply> {
    let warnings = '';
    try {
      const warning = parseReply(this.episode.script.parser, cut.content).warning;
      if (warning) warnings = `\n\nParser warnings from your truncated response:\n${warning}`;
    } catch {
      // Harbor logs a parser exception here and goes on without warnings.
    }
    this.history.messages.push(this.promptMessage(), { role: 'assistant', content: cut.content });
    this.promptToolCallId = undefined;
    this.prompt = outputLengthPrompt(this.outputLimit) + warnings;
    const { words: _words, recover: _recover, ...reissued } = turn;
    return this.queryLlm(reissued, undefined);
  }
}

/** The assistant message without its reasoning, as a client that strips thinking re-sends it. */
function withoutReasoning(message: ChatMessage): ChatMessage {
  if (message.role !== 'assistant' || message.reasoning_content === undefined) return message;
  const { reasoning_content: _dropped, ...rest } = message;
  return rest;
}

/** The id of the reply's first tool call, which a `tool` message answers. */
function firstToolCallId(reply: MainReply): string | undefined {
  const call = reply.toolCalls?.[0] as { id?: unknown } | undefined;
  return typeof call?.id === 'string' ? call.id : undefined;
}

/** Plays one episode to its end; never throws (every ending is a result). */
export function playEpisode(options: PlayEpisodeOptions): Promise<EpisodeResult> {
  return new EpisodeRun(options).run();
}
