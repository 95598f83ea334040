import { HarnessError } from '../../common/errors.ts';
import { isJsonObject } from '../../common/python-json/values.ts';
import type { IdBuffer } from './id-buffer.ts';
import { qwen3Family } from './qwen3-family.ts';
import { DEFAULT_ROLE_TOKENS, GENERATION_TOKEN, SPECIAL, ToyTokenizer } from './toy-tokenizer.ts';

/**
 * Toy TITO ("token in, token out") families: how a child prompt is built from the parent's token
 * snapshot plus an incremental render of the new messages (radixark/miles@31f1ca96
 * miles/utils/chat_template_utils/tito_tokenizer.py `merge_tokens`; docs/session-server.md "TITO families").
 *
 * - `default`: plain concatenation, `max_trim_tokens` 0, all four roles appendable.
 * - `glm47`: GLM's templates have no end-of-message token: a reply stops on the next role opener,
 *   `<|user|>` (toy 7) or `<|observation|>` (toy 8, after tool calls), and the same opener starts the next
 *   message. The junction drops that trailing opener from the parent snapshot before appending the
 *   incremental render, so a stored snapshot may lose exactly one trailing token (`max_trim_tokens` 1).
 *   In the toy, user messages open with 7 and tool messages with 8, so a reply that stopped on 7 and is
 *   followed by a tool result is rewritten at the junction (7 → 8), which is what the trim rules exist for.
 */

/** The toy families (`--tito-model`); `qwen3` comes with the real tokenizer (`--tokenizer qwen3`). */
export const TITO_MODELS = ['default', 'glm47'] as const;
export type ToyTitoModel = (typeof TITO_MODELS)[number];
export type TitoModel = ToyTitoModel | 'qwen3';

/** The tokenizers a fake can run on (`--tokenizer`): the toy word tokenizer, or Qwen3's real one. */
export const TOKENIZERS = ['toy', 'qwen3'] as const;
export type TokenizerName = (typeof TOKENIZERS)[number];

/**
 * The family a fake runs for a `--tokenizer` and a toy `--tito-model`: the toy tokenizer serves the toy
 * families; Qwen3's tokenizer serves the qwen3 family only (GLM-4.7's tokenizer and authoritative
 * template are not available offline, so glm47 stays on toy ids).
 */
/** The replay's family: the recipe's `--tito-model glm47` on toy ids, the qwen3 family on Qwen3's ids. */
export function recipeFamily(tokenizer: TokenizerName): TitoModel {
  return tokenizer === 'qwen3' ? 'qwen3' : 'glm47';
}

export function familyModel(tokenizer: TokenizerName, toyModel: ToyTitoModel): TitoModel {
  if (tokenizer === 'toy') return toyModel;
  if (toyModel !== 'default') {
    throw new HarnessError(
      'usage.conflicting_options',
      `--tito-model ${toyModel} is a toy family; --tokenizer qwen3 runs the qwen3 family (leave --tito-model out)`,
      { details: { options: ['--tokenizer', '--tito-model'] } },
    );
  }
  return 'qwen3';
}

/** Chat-template kwargs as the request or the launch gives them. */
export type TemplateKwargs = Readonly<Record<string, unknown>>;

/** What the session server and the comparison need of a family's tokenizer, toy or real. */
export interface FamilyTokenizer {
  /** Readable text of ids (`decode(ids, skip_special_tokens=False)` for a real tokenizer). */
  decode(ids: readonly number[]): string;
  /** The comparator's segment boundaries (`TokenSeqComparator.collect_special_ids`). */
  isSpecial(id: number): boolean;
  /** Bumped whenever `decode` could give another text for the same ids (the toy learns words). */
  readonly vocabularyVersion: number;
  /** Lets the tokenizer see a reply it did not produce (the toy learns its words to decode them). */
  learnMessage(message: unknown): void;
}

/** What a child prompt's render needs beyond the suffix (tito_tokenizer.py `merge_tokens`; docs/tokenizers.md). */
export interface MergeContext {
  /** The stored path's last message (the assistant whose tool calls the dummy prefix keeps). */
  readonly lastStored?: unknown;
  /** The request's `tools`. */
  readonly tools?: unknown;
}

export interface TitoFamily<T extends FamilyTokenizer = FamilyTokenizer> {
  readonly model: TitoModel;
  /** Python class name, as error texts name it. */
  readonly className: string;
  readonly maxTrimTokens: number;
  /** Roles a suffix (appended) message may have, sorted as Python's `sorted()` prints them. */
  readonly allowedAppendRoles: readonly string[];
  /** Kwargs the family fixes; a request value that differs is a 400. */
  readonly fixedKwargs: TemplateKwargs;
  /**
   * Whether the tokenizer's jinja chat template renders a later, non-leading system message inline
   * (SGLang's `detect_inline_system_support`, which the newer Miles' `/health` reports): false without a
   * template (the toy families have none), true for Qwen3's (probed on Miles' qwen3_fixed.jinja).
   */
  readonly inlineSystemTemplate: boolean;
  readonly tokenizer: T;
  /** A fresh prompt: every message rendered, then the generation prompt. */
  renderPrompt(messages: readonly unknown[], kwargs: TemplateKwargs, tools?: unknown): number[];
  /** A child prompt: the parent snapshot after the junction rule, then the suffix render and generation prompt. */
  mergeTokens(
    prefixIds: readonly number[],
    suffix: readonly unknown[],
    kwargs: TemplateKwargs,
    context?: MergeContext,
  ): number[];
  /** The ids a policy generates for an assistant message (no role token; ends with the stop token). */
  completionIds(message: unknown): number[];
  /**
   * The canonical render of a finished conversation, used for `tito_session_mismatch`, appended to `out`
   * (the samples op reuses one buffer across its leaves).
   */
  canonicalRenderInto(out: IdBuffer, messages: readonly unknown[], tools?: unknown): void;
  /** How Miles' `TokenSeqComparator` is configured for the family (`TITOTokenizer.create_comparator`). */
  readonly comparator: {
    /** `trailing_token_ids`: trimmed from both tails before comparing. */
    readonly trailingIds: readonly number[];
    /** `assistant_start_str`: decoded text that marks assistant content (`null`: never). */
    readonly assistantStart: string | null;
  };
}

/**
 * `ids` with `more` appended in place, returned. Token arrays are whole contexts (32k ids at the
 * recipe's scale): spreading them into new arrays copies each one again.
 */
function append(ids: number[], more: readonly number[]): number[] {
  for (const id of more) ids.push(id);
  return ids;
}

function generationPrompt(kwargs: TemplateKwargs): number[] {
  return kwargs.enable_thinking === false ? [GENERATION_TOKEN, SPECIAL.emptyThink] : [GENERATION_TOKEN];
}

const FOUR_ROLES = ['assistant', 'system', 'tool', 'user'] as const;

function hasToolCalls(message: unknown): boolean {
  return isJsonObject(message) && Array.isArray(message.tool_calls) && message.tool_calls.length > 0;
}

function isAssistant(message: unknown): boolean {
  return isJsonObject(message) && message.role === 'assistant';
}

function defaultFamily(): TitoFamily<ToyTokenizer> {
  const tokenizer = new ToyTokenizer(DEFAULT_ROLE_TOKENS);
  return {
    model: 'default',
    className: 'DefaultTITOTokenizer',
    maxTrimTokens: 0,
    allowedAppendRoles: FOUR_ROLES,
    fixedKwargs: {},
    inlineSystemTemplate: false,
    tokenizer,
    renderPrompt: (messages, kwargs) => append(tokenizer.renderMessages(messages), generationPrompt(kwargs)),
    mergeTokens: (prefix, suffix, kwargs) =>
      prefix.concat(tokenizer.renderMessages(suffix), generationPrompt(kwargs)),
    completionIds: (message) => append(tokenizer.renderBody(message), [SPECIAL.end]),
    canonicalRenderInto: (out, messages) => {
      for (const m of messages) {
        tokenizer.renderMessageInto(out, m);
        if (isAssistant(m)) out.push(SPECIAL.end);
      }
    },
    // Miles' default family: no trailing ids, no assistant start string.
    comparator: { trailingIds: [], assistantStart: null },
  };
}

function glm47Family(): TitoFamily<ToyTokenizer> {
  const tokenizer = new ToyTokenizer({
    system: SPECIAL.system,
    user: SPECIAL.glmUser,
    assistant: SPECIAL.assistant,
    tool: SPECIAL.glmObservation,
  });
  const stopToken = (message: unknown) => (hasToolCalls(message) ? SPECIAL.glmObservation : SPECIAL.glmUser);
  // The parent snapshot without a trailing opener (a copy, extended in place by the caller).
  const junction = (prefix: readonly number[]) => {
    const last = prefix.at(-1);
    return last === SPECIAL.glmUser || last === SPECIAL.glmObservation ? prefix.slice(0, -1) : prefix.slice();
  };
  return {
    model: 'glm47',
    className: 'GLM47TITOTokenizer',
    maxTrimTokens: 1,
    allowedAppendRoles: FOUR_ROLES,
    fixedKwargs: {},
    inlineSystemTemplate: false,
    tokenizer,
    renderPrompt: (messages, kwargs) => append(tokenizer.renderMessages(messages), generationPrompt(kwargs)),
    mergeTokens: (prefix, suffix, kwargs) =>
      append(append(junction(prefix), tokenizer.renderMessages(suffix)), generationPrompt(kwargs)),
    completionIds: (message) => append(tokenizer.renderBody(message), [stopToken(message)]),
    canonicalRenderInto: (out, messages) => {
      for (const m of messages) tokenizer.renderMessageInto(out, m);
      const last = messages.at(-1);
      if (isAssistant(last)) out.push(stopToken(last));
    },
    // GLM47TITOTokenizer: the ambiguous boundary ids are trailing ids; assistant content follows `<|assistant|>`.
    comparator: {
      trailingIds: [SPECIAL.glmUser, SPECIAL.glmObservation],
      assistantStart: '<|assistant|>',
    },
  };
}

/**
 * A fresh family instance. A toy family owns its tokenizer and the words it has learned; every qwen3
 * family shares the process's one Qwen3 tokenizer (loaded on first use).
 */
export function titoFamily(model?: ToyTitoModel): TitoFamily<ToyTokenizer>;
export function titoFamily(model: TitoModel): TitoFamily;
export function titoFamily(model: TitoModel = 'default'): TitoFamily {
  if (model === 'qwen3') return qwen3Family();
  return model === 'glm47' ? glm47Family() : defaultFamily();
}
