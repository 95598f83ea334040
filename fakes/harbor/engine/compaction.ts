import type { CallSpec, CompactionSpec, ResolvedEpisode, Turn } from '../episode-schema.ts';
import type { ChatReply } from './chat-client.ts';
import { type EpisodeCalls, pickCallKeys, SUB_CALL_ATTEMPTS } from './episode-calls.ts';
import type { EpisodeCounters } from './episode-counters.ts';
import { assistant, type EpisodeHistory, user } from './episode-history.ts';
import { ChatCallError, EpisodeAbortedError, SequenceLengthExceededError } from './errors.ts';
import {
  answerPrompt,
  handoffPrompt,
  noModelFallbackPrompt,
  questionPrompt,
  shortSummaryHandoff,
  shortSummaryPrompt,
  summaryPrompt,
  TECHNICAL_DIFFICULTIES,
} from './prompts.ts';
import { mainReply, type SubCallName, subCallReply } from './reply-writer.ts';
import type { ShellTerminal } from './terminal.ts';
import type { ChatMessage } from './token-estimate.ts';

/**
 * Terminus 2's context management (Harbor 6c9ba3f0 src/harbor/agents/terminus_2/terminus_2.py;
 * docs/harbor.md, the summarization row): proactive summarization before a main call when too few
 * tokens are free, and the reactive path after a context-length 400 (unwind, summarize, the
 * short-summary and no-model fallbacks, the handoff call). Summary, questions and answers are sub-agent
 * calls; what each replies comes from the script's compaction entries.
 */

export interface MainReply extends ChatReply {
  /** The stand-in reply after every fallback failed; not a model reply. */
  readonly technicalDifficulties?: boolean;
}

/** A summary made before a main call: the prompt it hands over, and the script's keys for that call. */
interface Handoff {
  readonly prompt: string;
  readonly spec: CallSpec | undefined;
}

/** The call keys of a turn, without the ones that only steer its own first attempt. */
function continuationSpec(turn: Turn, handoff: CallSpec | undefined): CallSpec {
  const { context_error: _c, error: _e, discard: _d, ...rest } = turn;
  return { ...pickCallKeys(rest), ...handoff };
}

/** Rethrows an abort; any other failure of a summarization step is one Terminus logs and survives. */
function survive(error: unknown): void {
  if (error instanceof EpisodeAbortedError) throw error;
}

export class EpisodeCompaction {
  private readonly episode: ResolvedEpisode;
  private readonly history: EpisodeHistory;
  private readonly terminal: ShellTerminal;
  private readonly calls: EpisodeCalls;
  private readonly counters: EpisodeCounters;

  constructor(
    episode: ResolvedEpisode,
    parts: {
      history: EpisodeHistory;
      terminal: ShellTerminal;
      calls: EpisodeCalls;
      counters: EpisodeCounters;
    },
  ) {
    this.episode = episode;
    this.history = parts.history;
    this.terminal = parts.terminal;
    this.calls = parts.calls;
    this.counters = parts.counters;
  }

  private compaction(k: number): CompactionSpec {
    return this.episode.compactions[k - 1] ?? {};
  }

  /**
   * Proactive summarization (terminus_2.py L553–L577): when summarizing is on and fewer than
   * `threshold` tokens of the limit are free, summarize; a failed summarization is logged upstream and
   * the full history carries on (undefined here).
   */
  async proactive(): Promise<Handoff | undefined> {
    const { script, instruction } = this.episode;
    if (!script.summarize || instruction === '' || this.history.messages.length === 0) return undefined;
    const free = script.context.limit - this.history.tokens();
    if (free >= script.context.threshold) return undefined;
    try {
      const prompt = await this.summarize();
      return { prompt, spec: this.compaction(this.counters.summarizationCount).handoff };
    } catch (error) {
      survive(error);
      return undefined;
    }
  }

  /**
   * Reactive summarization (terminus_2.py `_query_llm` L979–L1068): unwind, summarize, fall back, continue.
   */
  async reactive(turn: Turn): Promise<MainReply> {
    this.unwind();
    const { instruction } = this.episode;
    let prompt: string | undefined;
    try {
      prompt = await this.summarize();
    } catch (error) {
      survive(error);
    }
    const k = this.counters.summarizationCount;
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
        survive(error);
      }
    }
    prompt ??= noModelFallbackPrompt(instruction, this.terminal.visibleScreen());
    return this.handoff(turn, prompt, continuationSpec(turn, compaction.handoff));
  }

  /** The main call after a reactive summary; its failure leaves the technical-difficulties stand-in. */
  private async handoff(turn: Turn, prompt: string, spec: CallSpec): Promise<MainReply> {
    const messages = [...this.history.messages, user(prompt)];
    const content = spec.content ?? mainReply(this.episode.script.parser, turn, this.calls.turn);
    let reply: ChatReply;
    try {
      reply = await this.calls.call('handoff', messages, spec, SUB_CALL_ATTEMPTS, content);
    } catch (error) {
      if (error instanceof EpisodeAbortedError) throw error;
      return { content: TECHNICAL_DIFFICULTIES, finishReason: 'stop', technicalDifficulties: true };
    }
    if (reply.finishReason === 'length') throw new SequenceLengthExceededError('handoff');
    this.history.messages.push(user(prompt), assistant(reply, true));
    return reply;
  }

  /** Drops user+assistant pairs from the end while less than `unwind_target` tokens are free. */
  private unwind(): void {
    const { limit, unwind_target: target } = this.episode.script.context;
    let pairs = 0;
    while (this.history.messages.length > 1) {
      if (limit - this.history.tokens() >= target) break;
      this.history.messages = this.history.messages.slice(0, -2);
      pairs += 1;
    }
    this.counters.pairsUnwound(pairs);
  }

  /** `_summarize`: the S, Q and A calls; on success the history becomes [U0, QP, questions]. */
  private async summarize(): Promise<string> {
    const { instruction } = this.episode;
    const history = [...this.history.messages];
    if (history.length === 0) return instruction;
    const k = this.counters.summarizationStarted();
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
    this.history.messages = [
      history[0] as ChatMessage,
      user(qp),
      { role: 'assistant', content: questions.content },
    ];
    return handoffPrompt(answers.content);
  }

  /** A sub-agent call: a truncated reply raises like LiteLLM's OutputLengthExceededError. */
  private async subCall(
    kind: SubCallName,
    messages: readonly ChatMessage[],
    spec: CallSpec | undefined,
    content: string,
  ): Promise<ChatReply> {
    const reply = await this.calls.call(
      kind,
      messages,
      spec ?? {},
      SUB_CALL_ATTEMPTS,
      spec?.content ?? content,
    );
    if (reply.finishReason === 'length')
      throw new ChatCallError('output_length', `${kind} reply was truncated`, { status: 200 });
    return reply;
  }
}
