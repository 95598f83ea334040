/**
 * What one episode counts for Harbor's `agent_metrics` (docs/harbor.md): steps, loop iterations,
 * summarizations, tokens, call times, commands and simulated execution time. The loop, the calls and
 * the compaction each count their own events here; `metrics()` is the result's copy.
 */

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

export class EpisodeCounters {
  private turns = 0;
  private iterations = 0;
  private summarizations = 0;
  private inputTokens = 0;
  private outputTokens = 0;
  private readonly apiTimes: number[] = [];
  private toolCalls = 0;
  private envMs = 0;
  private readonly unwound: number[] = [];

  /** A loop iteration starts. */
  iterationStarted(): void {
    this.iterations += 1;
  }

  /** A main call answered with a model reply (not the technical-difficulties stand-in). */
  stepTaken(): void {
    this.turns += 1;
  }

  /** A summarization starts; its 1-based number (which compaction of the script it plays). */
  summarizationStarted(): number {
    this.summarizations += 1;
    return this.summarizations;
  }

  /** How many summarizations have started. */
  get summarizationCount(): number {
    return this.summarizations;
  }

  /** An attempt's reply was accepted: its time and token counts. */
  callAnswered(ms: number, inputTokens: number, outputTokens: number): void {
    this.apiTimes.push(ms);
    this.inputTokens += inputTokens;
    this.outputTokens += outputTokens;
  }

  commandsFound(count: number): void {
    this.toolCalls += count;
  }

  commandsExecuted(ms: number): void {
    this.envMs += ms;
  }

  /** A reactive unwind dropped this many user+assistant pairs. */
  pairsUnwound(pairs: number): void {
    this.unwound.push(pairs);
  }

  metrics(): EpisodeMetrics {
    return {
      turns: this.turns,
      n_episodes: this.iterations,
      summarization_count: this.summarizations,
      n_input_tokens: this.inputTokens,
      n_output_tokens: this.outputTokens,
      api_request_times_msec: [...this.apiTimes],
      tool_calls: this.toolCalls,
      env_execution_ms: this.envMs,
      unwound_pairs: [...this.unwound],
    };
  }
}
