import type { FaultRollout, FaultScenario } from '../../contracts/fault-scenario.ts';
import { isTraceReply, type TraceTurn } from '../../contracts/trace.ts';
import { qwen3Family } from '../../fakes/tokenizer/qwen3-family.ts';
import { QWEN3_IDS } from '../../fakes/tokenizer/qwen3-tokenizer.ts';
import type { TemplateKwargs, TitoFamily } from '../../fakes/tokenizer/tito.ts';
import { idDiff } from './id-diff.ts';

/**
 * Where a catalogue row's fault shows in ids (the HTML page, docs/field-failures.md "The HTML page"),
 * derived from the row's own data, the requests the agent sends and the ids the policy emits, by one diff
 * (`idDiff`) applied three ways, turn by turn:
 * - `emitted_vs_render`: a reply's emitted ids against the render of the message the agent gets back
 *   (`completionIds`), in the turn's sample (its prompt, then the emitted ids);
 * - `not_an_extension`: a request's prompt against the tokens of the turn sent before it (that turn's
 *   prompt and emitted ids): a rollback, a retry, a re-sent turn, an edited or stripped history, a new
 *   segment after compaction;
 * - `concurrent_diverge`: a turn sent at the same moment as the one before it, against that one's prompt.
 * Two kinds' faults are no difference at all, where a request extends the tokens before it: at an
 * assistant-to-tool boundary the template writes a `\n` after `<|im_end|>` the model never emitted
 * (`template_newline`, for `newline_after_im_end`); the previous reply's think block as the request
 * re-renders it (`rerendered_think`, for `empty_think_rerendered`).
 */

export type SiteRule =
  | 'emitted_vs_render'
  | 'not_an_extension'
  | 'concurrent_diverge'
  | 'template_newline'
  | 'rerendered_think';

export interface FaultSite {
  readonly rollout: number;
  readonly turn: number;
  readonly rule: SiteRule;
  /** The sequence where the fault shows: the turn's sample (prompt + emitted ids) or its request's prompt. */
  readonly where: 'sample' | 'request';
  readonly actual: readonly number[];
  /** `[start, end)` of the fault's ids in `actual` (empty where `actual` stops short). */
  readonly actualSpan: readonly [number, number];
  /** What the ids would be without the fault, per the rule. */
  readonly expected: readonly number[];
  readonly expectedSpan: readonly [number, number];
}

export interface RowSites {
  readonly sites: readonly FaultSite[];
  /** Why no window is shown, when there is none. */
  readonly none: string | null;
}

type Reply = Extract<TraceTurn['response'], { message: unknown }>;

function kwargsOf(turn: TraceTurn): TemplateKwargs {
  const kwargs = (turn.request as { chat_template_kwargs?: unknown }).chat_template_kwargs;
  return typeof kwargs === 'object' && kwargs !== null ? (kwargs as TemplateKwargs) : {};
}

/** One rollout's turns as ids: each prompt, and each 200 reply's emitted ids (null for an error answer). */
function turnIds(family: TitoFamily, rollout: FaultRollout) {
  return rollout.turns.map((turn) => {
    const prompt = family.renderPrompt(turn.request.messages, kwargsOf(turn), turn.request.tools);
    const reply: Reply | null = isTraceReply(turn.response) ? turn.response : null;
    const emitted = reply === null ? null : (reply.completion_ids ?? family.completionIds(reply.message));
    return { prompt, reply, emitted };
  });
}

function site(
  at: { rollout: number; turn: number; rule: SiteRule; where: FaultSite['where'] },
  expected: readonly number[],
  actual: readonly number[],
): FaultSite | null {
  const diff = idDiff(expected, actual);
  if (diff === null) return null;
  return {
    ...at,
    actual,
    actualSpan: [diff.start, diff.actualEnd],
    expected,
    expectedSpan: [diff.start, diff.expectedEnd],
  };
}

/** Whether `prompt` starts with every id of `before` (the session extends its leaf). */
function extendsIds(before: readonly number[], prompt: readonly number[]): boolean {
  return prompt.length >= before.length && before.every((id, i) => prompt[i] === id);
}

/**
 * The think block of the previous reply as the next request re-renders it (`empty_think_rerendered`):
 * Miles' template keeps it, so it equals the emitted ids; the stock Qwen3 template would drop it.
 */
function rerenderedThink(
  at: { rollout: number; turn: number },
  before: readonly number[],
  prompt: readonly number[],
  emittedFrom: number,
): FaultSite | null {
  const open = prompt.indexOf(QWEN3_IDS.think, emittedFrom);
  const close = prompt.indexOf(QWEN3_IDS.thinkEnd, open);
  if (open === -1 || close === -1 || close >= before.length) return null;
  return {
    ...at,
    rule: 'rerendered_think',
    where: 'request',
    actual: prompt,
    actualSpan: [open, close + 1],
    expected: before,
    expectedSpan: [open, close + 1],
  };
}

/** The `\n` the template writes after `<|im_end|>` where a tool message follows the emitted ids. */
function templateNewline(
  at: { rollout: number; turn: number },
  before: readonly number[],
  prompt: readonly number[],
  rollout: FaultRollout,
): FaultSite | null {
  const turn = rollout.turns[at.turn]!;
  const previous = rollout.turns[at.turn - 1]!;
  const added = turn.request.messages[previous.request.messages.length + 1] as { role?: unknown } | undefined;
  if (before.at(-1) !== QWEN3_IDS.imEnd || added?.role !== 'tool') return null;
  if (prompt[before.length] !== QWEN3_IDS.newline) return null;
  return {
    ...at,
    rule: 'template_newline',
    where: 'request',
    actual: prompt,
    actualSpan: [before.length, before.length + 1],
    expected: before,
    expectedSpan: [before.length, before.length],
  };
}

function rolloutSites(family: TitoFamily, scenario: FaultScenario, r: number): FaultSite[] {
  const rollout = scenario.rollouts[r]!;
  const turns = turnIds(family, rollout);
  const sites: Array<FaultSite | null> = [];
  // The tokens of the last turn answered with ids, which the next request should extend.
  let before: number[] | null = null;
  let emittedFrom = 0;
  turns.forEach(({ prompt, reply, emitted }, t) => {
    const at = { rollout: r, turn: t };
    if (rollout.concurrent.includes(t))
      sites.push(site({ ...at, rule: 'concurrent_diverge', where: 'request' }, turns[t - 1]!.prompt, prompt));
    else if (before !== null && !extendsIds(before, prompt))
      sites.push(site({ ...at, rule: 'not_an_extension', where: 'request' }, before, prompt));
    else if (before !== null && scenario.kind === 'newline_after_im_end')
      sites.push(templateNewline(at, before, prompt, rollout));
    else if (before !== null && scenario.kind === 'empty_think_rerendered')
      sites.push(rerenderedThink(at, before, prompt, emittedFrom));
    if (reply === null || emitted === null) return;
    const rendered = family.completionIds(reply.message);
    sites.push(
      site(
        { ...at, rule: 'emitted_vs_render', where: 'sample' },
        [...prompt, ...rendered],
        [...prompt, ...emitted],
      ),
    );
    before = [...prompt, ...emitted];
    emittedFrom = prompt.length;
  });
  return sites.filter((s): s is FaultSite => s !== null);
}

/** Every fault site of a row, rollout by rollout, turn by turn; for a row with none, why. */
export function faultSites(scenario: FaultScenario, family: TitoFamily = qwen3Family()): RowSites {
  if (scenario.tokenizer !== 'qwen3')
    return {
      sites: [],
      none: 'toy ids are CRC-32s of the words the toy tokenizer learns: they cannot be decoded outside a run',
    };
  const sites = scenario.rollouts.flatMap((_, r) => rolloutSites(family, scenario, r));
  if (sites.length > 0) return { sites, none: null };
  const errors = scenario.rollouts.flatMap((rollout) =>
    rollout.turns.flatMap((turn) => ('status' in turn.response ? [turn.response.status] : [])),
  );
  return {
    sites: [],
    none:
      errors.length > 0
        ? `the fault is an error answer (${[...new Set(errors)].join(', ')}) with no ids; every reply's ids are its message's render and every request extends the tokens before it`
        : "every reply's ids are its message's render and every request extends the tokens before it: the fault is not in the ids",
  };
}
