import type { CallSpec, CompactionSpec, Turn, Variant } from '../episode-schema.ts';
import { drawCallFaults, drawRolloutFaults, type RolloutFaultTurns } from './fault-knobs.ts';
import type { GeneratorParams } from './params.ts';
import type { RandomSource } from './random-source.ts';

/**
 * One rollout of a generated task: the turns and summarization knobs of one variant. The generator
 * follows the history token count the engine will measure (role token + words per message,
 * docs/episodes.md "How the engine steers and counts") closely enough to place context-length errors
 * where the context is full and to aim reactive unwinds at 0, 1 or 2 pairs; the engine decides what
 * actually happens, and the replay reports it.
 */

/** What a task contributes to each of its rollouts. */
export interface TaskProfile {
  readonly name: string;
  /** Probability that a rollout solves the task. */
  readonly success: number;
  /** The task's median number of main-loop iterations. */
  readonly medianTurns: number;
}

/**
 * A rollout's shape in an uneven group (`faults.uneven_group`): the first rollout fills its context until
 * it compacts, the others end short without compacting, so the group's row counts differ.
 */
export type GroupShape = 'compacts' | 'short';

/** How a rollout ends, as planned (the trial's exit status follows from it). */
type PlannedEnd = 'submitted' | 'crash' | 'policy_failure' | 'first_turn_failure' | 'timeout' | 'truncation';

export interface PlannedRollout {
  readonly variant: Variant;
  readonly end: PlannedEnd;
  readonly solved: boolean;
  readonly turns: number;
  readonly reasoning: boolean;
  /** Summarization attempts the plan expects, with what each one is for. */
  readonly compactions: readonly ('proactive' | 'proactive_failed' | 'reactive')[];
  /** Targeted unwound pairs of each reactive summarization. */
  readonly unwinds: readonly number[];
  /** The largest request the plan expects (history + prompt + reply), in estimator tokens. */
  readonly peakContext: number;
  /** Its shape in an uneven group (`faults.uneven_group`), or null. */
  readonly shape: GroupShape | null;
}

/** U0 (Terminus' first prompt with a one-line instruction and an empty pane), in estimator tokens. */
const U0_TOKENS = 521;
/** QUESTION_PROMPT without the summary and the pane, plus a role token. */
const QUESTION_PROMPT_BASE = 430;
/** About 40 pane lines of ten words each. */
const PANE_TOKENS = 300;
/** HANDOFF without the answers. */
const HANDOFF_BASE = 25;
/** A generated main reply beyond its padded analysis: plan, commands, tags. */
const REPLY_OVERHEAD = 20;
/** The reactive short-summary handoff and the no-model fallback prompt, roughly. */
const FALLBACK_PROMPT_TOKENS = 400;
/** "Thinking about the main call of turn N." plus a role-free share of the message. */
const REASONING_TOKENS = 7;
/** Margin past the unwind line the forced growth aims at (share of the unwind target: 600 at 4000), so estimate errors do not change m. */
const UNWIND_MARGIN_SHARE = 0.15;

/** A context-length 400 as SGLang words it (contains "maximum context length", LiteLLM's marker). */
const CONTEXT_ERROR = {
  status: 400,
  message:
    "Requested token count exceeds the model's maximum context length of 32768 tokens (generated episode).",
} as const;

const COMMANDS = [
  'ls -la',
  'cat README.md',
  'make -j4',
  'pytest -q',
  'git status',
  'python3 solve.py',
  'grep -rn TODO src',
  'pip install -r requirements.txt',
  'cargo build --release',
  'npm test',
  'gcc -O2 -o main main.c',
  'find / -name "*.conf" 2>/dev/null',
] as const;

function clamp(value: number, min: number, max: number): number {
  return Math.max(min, Math.min(max, value));
}

class VariantBuilder {
  readonly #params: GeneratorParams;
  readonly #rng: RandomSource;
  readonly #reasoning: boolean;
  readonly turns: Turn[] = [];
  readonly compactions: CompactionSpec[] = [];
  readonly kinds: ('proactive' | 'proactive_failed' | 'reactive')[] = [];
  readonly unwinds: number[] = [];
  peak = U0_TOKENS;
  /** The engine's history count, as far as the plan can tell. */
  history = U0_TOKENS;
  /** Pending reactive scenario: the turn that overflows and the pairs to unwind. */
  scenario: { overflowTurn: number; pairs: number } | null = null;
  /** Sizes of the user+assistant pairs since the last summarization (what an unwind can drop). */
  pairs: number[] = [];
  /** The first exchange's size (what a rollback keeps). */
  firstPair = 0;
  /** Per-rollout faults not placed yet: the turn each may fall on from (null when placed or absent). */
  pendingFaults: { restart: number | null; rollback: number | null; recover: number | null } = {
    restart: null,
    rollback: null,
    recover: null,
  };
  /** `uneven_group`: this rollout's shape, or null. */
  shape: GroupShape | null = null;

  constructor(params: GeneratorParams, rng: RandomSource, reasoning: boolean) {
    this.#params = params;
    this.#rng = rng;
    this.#reasoning = reasoning;
  }

  get fillLine(): number {
    return this.#params.context_limit - this.#params.proactive_threshold;
  }

  get unwindMargin(): number {
    return Math.round(this.#params.unwind_target * UNWIND_MARGIN_SHARE);
  }

  get unwindLine(): number {
    return this.#params.context_limit - this.#params.unwind_target;
  }

  observationWords(): number {
    const { small, medium, large } = this.#params.observation;
    const cls = [small, medium, large][this.#rng.weighted([small.weight, medium.weight, large.weight])]!;
    return this.#rng.int(cls.min, Math.max(cls.min, cls.max));
  }

  replyWords(): number {
    const { median, sigma, max } = this.#params.reply;
    return clamp(Math.round(this.#rng.logNormal(median, sigma)), 10, max);
  }

  words(range: { min: number; max: number }): number {
    return this.#rng.int(range.min, range.max);
  }

  /** A successful summarization's knobs and the history it leaves. */
  successfulCompaction(): { spec: CompactionSpec; historyAfter: number; handoff: number } {
    const summary = this.words(this.#params.summary_words);
    const questions = this.words(this.#params.questions_words);
    const answers = this.words(this.#params.answers_words);
    return {
      spec: { summary: { words: summary }, questions: { words: questions }, answers: { words: answers } },
      historyAfter: U0_TOKENS + QUESTION_PROMPT_BASE + summary + PANE_TOKENS + questions + 1,
      handoff: HANDOFF_BASE + answers + 1,
    };
  }

  /** A proactive attempt whose summary call gets a context-length 400: swallowed, history unchanged. */
  failedProactive(): void {
    this.compactions.push({ summary: { error: { ...CONTEXT_ERROR } } });
    this.kinds.push('proactive_failed');
  }

  /** A reactive summarization after unwinding; returns the history before the turn's reply. */
  reactive(pairs: number, unwoundHistory: number): number {
    this.kinds.push('reactive');
    this.unwinds.push(pairs);
    if (!this.#rng.chance(this.#params.summary_failure_rate)) {
      const done = this.successfulCompaction();
      this.compactions.push(done.spec);
      return done.historyAfter + done.handoff;
    }
    const failedSummary: CallSpec = { error: { status: 500, message: 'Internal Server Error' } };
    if (this.#rng.chance(this.#params.short_summary_failure_rate)) {
      this.compactions.push({
        summary: failedSummary,
        short_summary: { error: { status: 500, message: 'Internal Server Error' } },
      });
    } else {
      this.compactions.push({ summary: failedSummary, short_summary: { words: this.#rng.int(40, 200) } });
    }
    return unwoundHistory + FALLBACK_PROMPT_TOKENS;
  }

  mainCall(turn: Turn, i: number, words: number): number {
    turn.words = words;
    // The engine's default reasoning_content for a reasoning rollout: a short sentence per call.
    const reasoning = this.#reasoning ? REASONING_TOKENS : 0;
    const command = this.#rng.pick(COMMANDS);
    const duration = command.startsWith('make') ? 5 : 1;
    turn.commands = [{ keystrokes: `${command}\n`, duration }];
    // Drawn only when enabled, so episodes without tool calls use the random stream as before.
    if (this.#params.tool_call_rate > 0 && this.#rng.chance(this.#params.tool_call_rate)) {
      const args = { keystrokes: `${command}\n`, duration: `${duration}.0` };
      turn.tool_calls = [
        {
          name: 'bash',
          arguments: `{"keystrokes": ${JSON.stringify(args.keystrokes)}, "duration": ${args.duration}}`,
        },
      ];
    }
    // Drawn only when enabled, so episodes without the fault use the random stream as before.
    if (this.#params.endoftext_rate > 0 && this.#rng.chance(this.#params.endoftext_rate))
      turn.end_token = 'endoftext';
    drawCallFaults(turn, this.#params, this.#rng, { i, reasoning: this.#reasoning, command, duration });
    if (i > 0 && !this.scenarioTurn(i)) {
      if (this.#rng.chance(this.#params.retry_rate)) turn.discard = 1;
      else if (this.#rng.chance(this.#params.transient_error_rate))
        turn.error = { status: 503, message: 'Service Unavailable', attempts: this.#rng.int(1, 2) };
    }
    return words + REPLY_OVERHEAD + reasoning + 1;
  }

  scenarioTurn(i: number): boolean {
    return this.scenario !== null && i <= this.scenario.overflowTurn;
  }
}

/** The rollout's length before its ending is drawn: log-normal around the task's median, failures longer. */
function drawLength(task: TaskProfile, params: GeneratorParams, rng: RandomSource, solved: boolean): number {
  const { turns: t } = params;
  const base = rng.logNormal(task.medianTurns, t.rollout_sigma) * (solved ? 1 : t.failure_factor);
  return clamp(Math.round(base), t.min, t.max);
}

/** At most one ending other than submission, drawn in a fixed order, and the turn it happens on. */
function drawEnding(
  params: GeneratorParams,
  rng: RandomSource,
  length: number,
): { end: PlannedEnd; endTurn: number } {
  const endings: [PlannedEnd, number][] = [
    ['first_turn_failure', params.first_turn_failure_rate],
    ['crash', params.crash_rate],
    ['policy_failure', params.policy_failure_rate],
    ['timeout', params.timeout_rate],
    ['truncation', params.truncation_rate],
  ];
  for (const [name, rate] of endings) {
    if (rng.chance(rate))
      return { end: name, endTurn: name === 'first_turn_failure' ? 0 : rng.int(1, length - 1) };
  }
  return { end: 'submitted', endTurn: length - 1 };
}

/** The most filler words an observation keeps under the engine's 10,000-byte cap. */
const MAX_OBSERVATION_WORDS = 2_900;

/**
 * An uneven group's observation sizes: the compacting rollout prints the most the engine keeps until
 * its context is past the proactive line; the short ones print a line or two.
 */
function shapedObservation(b: VariantBuilder, drawn: number): number {
  if (b.shape === 'short') return Math.min(drawn, 10);
  if (b.shape === 'compacts' && b.kinds.length === 0 && b.history < b.fillLine) return MAX_OBSERVATION_WORDS;
  return drawn;
}

/** Turn `i`'s tool observation (none on the first turn); returns the prompt tokens it adds. */
function planObservation(b: VariantBuilder, rng: RandomSource, turn: Turn, i: number): number {
  if (i === 0) return 0;
  const words = shapedObservation(b, b.observationWords());
  const command = rng.pick(COMMANDS);
  // The shell prompt and the echoed keystrokes come from the tmux model; the observation is only what
  // the command prints (its name as a first line, then filler), so the estimate below still holds.
  turn.observation = { text: command, filler_words: words, kind: 'new_output' };
  return words + 4 + command.split(' ').length;
}

/**
 * The engine's proactive check at the top of the iteration: whether it fired, and the prompt after it
 * (a successful compaction hands the summary over instead).
 */
function planProactive(
  b: VariantBuilder,
  rng: RandomSource,
  params: GeneratorParams,
  i: number,
  prompt: number,
): { fired: boolean; prompt: number } {
  if (i === 0 || params.context_limit - b.history >= params.proactive_threshold)
    return { fired: false, prompt };
  // The compacting rollout of an uneven group compacts at its first proactive check.
  const forced = b.shape === 'compacts' && b.kinds.length === 0;
  if (b.scenarioTurn(i) || (!forced && rng.chance(params.summary_failure_rate))) {
    b.failedProactive();
    return { fired: true, prompt };
  }
  const done = b.successfulCompaction();
  b.compactions.push(done.spec);
  b.kinds.push('proactive');
  b.history = done.historyAfter;
  return { fired: true, prompt: done.handoff };
}

/**
 * On the pair a pending unwind must drop last: sizes its observation and reply so that dropping only the
 * later pairs leaves the history above the unwind line. Returns the prompt and reply words.
 */
function sizeLastUnwoundPair(
  b: VariantBuilder,
  params: GeneratorParams,
  turn: Turn,
  i: number,
  prompt: number,
  replyWords: number,
): { prompt: number; replyWords: number } {
  const scenario = b.scenario;
  if (scenario === null || i !== scenario.overflowTurn - scenario.pairs || scenario.pairs <= 0)
    return { prompt, replyWords };
  const needed = b.unwindLine + b.unwindMargin - b.history - prompt;
  const observation = clamp(needed - replyWords - REPLY_OVERHEAD, 10, 2_900);
  let sized = prompt;
  if (turn.observation !== undefined && typeof turn.observation !== 'string') {
    sized += observation - turn.observation.filler_words;
    turn.observation.filler_words = observation;
  }
  return { prompt: sized, replyWords: clamp(needed - sized - REPLY_OVERHEAD, replyWords, params.reply.max) };
}

/** Where turn `i` stands in the rollout: its index, the rollout's length and whether a check fired. */
interface TurnPlace {
  readonly i: number;
  readonly length: number;
  readonly proactiveFired: boolean;
}

/**
 * The history after turn `i`'s main call: a pending overflow unwinds now, a full context may start a
 * reactive scenario (overflow at once, or after some failed proactive attempts), else the pair is kept.
 */
function accountHistory(
  b: VariantBuilder,
  rng: RandomSource,
  params: GeneratorParams,
  turn: Turn,
  place: TurnPlace,
  sizes: { prompt: number; replyTokens: number },
): void {
  const { i, length, proactiveFired } = place;
  const { prompt, replyTokens } = sizes;
  const after = b.history + prompt + 1 + replyTokens + 1;
  b.peak = Math.max(b.peak, after);
  const pair = prompt + 1 + replyTokens + 1;
  const scenario = b.scenario;
  if (scenario !== null && i === scenario.overflowTurn) {
    turn.context_error = true;
    b.scenario = null;
    const unwound = b.history - b.pairs.slice(-scenario.pairs).reduce((sum, p) => sum + p, 0);
    b.history = b.reactive(scenario.pairs, unwound) + replyTokens + 1;
    b.pairs = [];
  } else if (
    scenario === null &&
    !proactiveFired &&
    i > 0 &&
    i < length - 2 &&
    after >= b.fillLine &&
    rng.chance(params.reactive_rate)
  ) {
    const pairs = rng.weighted(params.unwind_pairs);
    if (pairs === 0 || after > b.unwindLine - b.unwindMargin || i + 1 + pairs >= length - 1) {
      // The request that fills the context overflows: nothing to unwind (free ≥ 8000 ≥ 4000).
      turn.context_error = true;
      b.history = b.reactive(0, b.history) + replyTokens + 1;
      b.pairs = [];
    } else {
      // The next proactive attempts fail; the context grows until a main call overflows.
      b.history = after;
      b.pairs.push(pair);
      b.scenario = { overflowTurn: i + 1 + pairs, pairs };
    }
  } else {
    b.history = after;
    b.pairs.push(pair);
  }
  if (proactiveFired && b.kinds.at(-1) === 'proactive') b.pairs = [pair];
  if (i === 0) b.firstPair = pair;
}

/**
 * The per-rollout faults due at turn `i` (before its proactive check, as the engine applies them): placed
 * on the first turn from their drawn one where no reactive scenario is pending and the rollout's last turn
 * is still ahead. A restart or rollback resets the planned history as the engine will.
 */
function placeRolloutFaults(b: VariantBuilder, turn: Turn, i: number, endTurn: number): void {
  const due = (from: number | null) => from !== null && i >= from && i < endTurn && b.scenario === null;
  const pending = b.pendingFaults;
  if (due(pending.restart)) {
    turn.restart = true;
    pending.restart = null;
    b.history = 0;
    b.pairs = [];
  } else if (due(pending.rollback)) {
    turn.rollback = true;
    pending.rollback = null;
    b.history = U0_TOKENS + b.firstPair;
    b.pairs = [];
  }
}

/** A recovered reply (`length_recover`): cut at the limit, kept in history, re-issued in the same turn. */
function placeRecover(
  b: VariantBuilder,
  params: GeneratorParams,
  rng: RandomSource,
  turn: Turn,
  i: number,
  endTurn: number,
): void {
  const from = b.pendingFaults.recover;
  if (from === null || i < from || i >= endTurn || b.scenario !== null || turn.context_error === true) return;
  b.pendingFaults.recover = null;
  turn.words = params.response_limit + rng.int(200, 2_000);
  turn.recover = true;
  delete turn.discard;
  delete turn.error;
  delete turn.upstream_abort;
  // The prompt and the cut reply stay in history before the re-issued reply.
  b.history += params.response_limit;
}

/** The last turn's ending: an error, a crash, a timeout or an over-long reply. */
function applyEnding(turn: Turn, end: PlannedEnd, params: GeneratorParams, rng: RandomSource): void {
  if (end === 'first_turn_failure' || end === 'policy_failure')
    turn.error = { status: 500, message: 'Internal Server Error' };
  if (end === 'crash') turn.crash = 'RuntimeError: tmux session "harbor" is not running';
  if (end === 'timeout') turn.timeout = true;
  if (end === 'truncation') {
    turn.words = params.response_limit + rng.int(200, 2_000);
    delete turn.discard;
  }
  if (end !== 'submitted') {
    delete turn.context_error;
    delete turn.discard;
  }
}

/** Draws one rollout of `task`: its length, ending, reward and every turn and summarization knob. */
/** The turns an uneven group's compacting rollout needs: enough maximal observations to pass the line. */
function turnsToCompact(params: GeneratorParams): number {
  const fill = params.context_limit - params.proactive_threshold - U0_TOKENS;
  return Math.min(200, 4 + Math.ceil(Math.max(0, fill) / (MAX_OBSERVATION_WORDS - 100)));
}

/** The rollout's ending and length, as its group shape bends them. */
function planEnding(
  task: TaskProfile,
  params: GeneratorParams,
  rng: RandomSource,
  solved: boolean,
  shape: GroupShape | null,
): { end: PlannedEnd; endTurn: number } {
  const length = drawLength(task, params, rng, solved);
  if (shape === 'compacts')
    return { end: 'submitted', endTurn: Math.max(length, turnsToCompact(params)) - 1 };
  const drawnEnding = drawEnding(params, rng, shape === 'short' ? Math.min(length, 3) : length);
  return drawnEnding;
}

export function generateRolloutVariant(
  task: TaskProfile,
  params: GeneratorParams,
  rng: RandomSource,
  shape: GroupShape | null = null,
): PlannedRollout {
  const solved = rng.chance(task.success);
  const reasoning = rng.chance(params.reasoning_rate);
  const { end, endTurn } = planEnding(task, params, rng, solved, shape);
  const length = endTurn + 1;
  const b = new VariantBuilder(params, rng, reasoning);
  b.shape = shape;
  const faults: RolloutFaultTurns = drawRolloutFaults(params, rng, length);
  b.pendingFaults = { ...faults };
  for (let i = 0; i < length; i++) {
    const turn: Turn = {};
    const observed = planObservation(b, rng, turn, i);
    placeRolloutFaults(b, turn, i, endTurn);
    const proactive = planProactive(b, rng, params, i, observed);
    const sized = sizeLastUnwoundPair(b, params, turn, i, proactive.prompt, b.replyWords());
    const replyTokens = b.mainCall(turn, i, sized.replyWords);
    const place = { i, length, proactiveFired: proactive.fired };
    accountHistory(b, rng, params, turn, place, { prompt: sized.prompt, replyTokens });
    placeRecover(b, params, rng, turn, i, endTurn);
    if (i === endTurn) applyEnding(turn, end, params, rng);
    b.turns.push(turn);
  }
  if (end === 'submitted') {
    // Terminus asks for confirmation: the last two replies both mark the task complete.
    for (const turn of b.turns.slice(-2)) turn.complete = true;
  }
  return {
    variant: {
      reward: solved && end === 'submitted' ? 1 : 0,
      turns: b.turns,
      compactions: b.compactions,
      reasoning,
    },
    end,
    solved,
    turns: length,
    reasoning,
    compactions: b.kinds,
    unwinds: b.unwinds,
    peakContext: b.peak,
    shape,
  };
}
