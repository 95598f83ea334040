import { isJsonObject, pythonRepr } from '../../common/python-json/values.ts';
import type { TemplateKwargs, TitoFamily } from '../tokenizer/tito.ts';
import { type ChatBodyReader, wholeBodyReader } from './chat-body-reader.ts';
import { jsonError } from './errors.ts';
import { AsyncLock } from './lock.ts';
import type { SessionRecord } from './record.ts';
import { type SessionRequestDefaults, TRAINING_SESSION } from './request-args.ts';
import { TokenSnapshot } from './token-snapshot.ts';
import { type AttachIndex, isTruncated, pathNodes, SessionTree, type TrajectoryNode } from './tree.ts';

/**
 * The speed a session is built with (compose.ts plugs in the server's); the defaults are Miles' rules:
 * the attach search walks the nodes, every chat body is parsed whole.
 */
export interface SessionSpeed {
  readonly attachIndex: () => AttachIndex | null;
  readonly chatBodyReader: () => ChatBodyReader;
}

export const MILES_SESSION_SPEED: SessionSpeed = { attachIndex: () => null, chatBodyReader: wholeBodyReader };

/**
 * One v2 session (radixark/miles@31f1ca96 miles/rollout/session/v2/session_state.py): the tree, the
 * active leaf (the "view"), the per-session lock and the closing flag, plus the three steps a chat takes
 * on it: positioning, pretokenization and commit.
 */
export class SessionState {
  readonly id: string;
  readonly lock = new AsyncLock();
  readonly tree: SessionTree;
  closing = false;
  /**
   * The view GET and the session metadata show: the active leaf (31f1ca96), or without the `activeLeaf`
   * switch the last committed node, which a commit always makes it.
   */
  activeLeaf: TrajectoryNode | null = null;
  /** What `POST /sessions` fixed (the `validateCreateSession` switch; create-session.ts). */
  readonly requestDefaults: SessionRequestDefaults;
  /** How this session's chat bodies are parsed (chat-body-reader.ts). */
  readonly bodyReader: ChatBodyReader;

  constructor(
    id: string,
    maxNodes?: number,
    requestDefaults: SessionRequestDefaults = TRAINING_SESSION,
    speed: SessionSpeed = MILES_SESSION_SPEED,
  ) {
    this.id = id;
    this.requestDefaults = requestDefaults;
    this.tree = new SessionTree(maxNodes, speed.attachIndex());
    this.bodyReader = speed.chatBodyReader();
  }

  /** Records of the active path, root → active leaf. */
  activeRecords(): SessionRecord[] {
    return pathNodes(this.activeLeaf).map((n) => n.record);
  }

  activeTokenIds(): number[] {
    return this.activeLeaf?.tokens.toArray() ?? [];
  }
}

export const TRUNCATED_EXTENSION_ERROR =
  "truncated generation cannot be extended: the matched node ended with finish_reason='length' and truncation closes that path for good; branch before the cut instead";

/**
 * Finds the attach node and, with the `activeLeaf` switch, moves the view there
 * (radixark/miles@31f1ca96 miles/rollout/session/v2/session_state.py `position_for_request`). A truncated
 * attach node is a 409 with no state change; otherwise the move persists even if a later step fails.
 * Without the switch the search is pure and the view stays on the last committed node
 * (sii-avalanche/miles@4d412b5a v2/session_state.py `attach_point_for_request`, `SessionStateV2.latest`;
 * radixark PR #3258).
 */
export function positionForRequest(
  state: SessionState,
  messages: readonly unknown[],
  moveView = true,
): TrajectoryNode | null {
  const { node } = state.tree.findAttachPoint(messages);
  if (node !== null && isTruncated(node)) throw jsonError(409, TRUNCATED_EXTENSION_ERROR);
  if (moveView) state.activeLeaf = node;
  return node;
}

/** `_validate_suffix_roles`: a 400 for the first appended message whose role the family cannot append. */
export function validateSuffixRoles(family: TitoFamily, suffix: readonly unknown[]): void {
  for (const message of suffix) {
    const role = isJsonObject(message) ? message.role : undefined;
    if (typeof role !== 'string' || !family.allowedAppendRoles.includes(role)) {
      throw jsonError(
        400,
        `appended message role=${pythonRepr(role ?? null)} not allowed (allowed=${pythonRepr([...family.allowedAppendRoles])}); the selected TITO fixed template does not support appending this role`,
      );
    }
  }
}

/**
 * The prompt ids for a request positioned at `attach` (session_state.py `prepare_pretokenized`): a full
 * render for a new root (no role
 * gating), otherwise the parent snapshot through the family's junction plus the suffix render. The stored
 * prefix is never re-rendered. A snapshot: the ids kept of the parent's stay its own by reference (no
 * 32k-element copy per call; `toArray()` gives the plain list).
 */
export function preparePrompt(
  family: TitoFamily,
  attach: TrajectoryNode | null,
  messages: readonly unknown[],
  kwargs: TemplateKwargs,
  tools?: unknown,
): TokenSnapshot {
  if (attach === null) return TokenSnapshot.of(family.renderPrompt(messages, kwargs, tools));
  const suffix = messages.slice(attach.depth);
  validateSuffixRoles(family, suffix);
  // The junction rule may rewrite or drop only the snapshot's last `maxTrimTokens` ids (what
  // `max_trim_tokens` allows), so the family merges just the snapshot's tail and the rest is kept
  // straight from the snapshot: `mergeTokens(snapshot, …)` would copy the whole context twice
  // (read back, then concatenated). Property-tested against that in state.test.ts, for every family.
  const tokens = attach.tokens;
  const head = Math.max(0, tokens.length - family.maxTrimTokens - 1);
  const merged = family.mergeTokens(tokens.slice(head, tokens.length), suffix, kwargs, {
    lastStored: attach.deltaMessages.at(-1),
    tools,
  });
  return TokenSnapshot.extend(tokens, head, merged);
}

export interface Generation {
  readonly attachParent: TrajectoryNode | null;
  readonly requestMessages: readonly unknown[];
  /** The prompt sent (`preparePrompt`). */
  readonly prompt: TokenSnapshot;
  readonly completionIds: readonly number[];
  readonly assistantMessage: unknown;
  readonly record: SessionRecord;
  readonly responseId: string | null;
  readonly finishReason: string;
  /** The request-scoped family's allowance (a request's kwargs may clone the family). */
  readonly maxTrimTokens: number;
}

/** `assert_pretokenized_prefix`: a `TokenizationError`, answered as a 500 JSON. */
export function assertPretokenizedPrefix(
  stored: readonly number[] | TokenSnapshot,
  all: readonly number[],
  maxTrimTokens: number,
  requestMessages: readonly unknown[],
  assistantMessage: unknown,
): void {
  const checkLen = stored.length - maxTrimTokens;
  if (stored.length === 0 || checkLen <= 0) return;
  let i = 0;
  if (stored instanceof TokenSnapshot) i = Math.min(stored.commonPrefixLength(all), checkLen);
  else while (i < checkLen && i < all.length && stored[i] === all[i]) i += 1;
  prefixCheck(stored.length, all.length, maxTrimTokens, i, requestMessages, assistantMessage);
}

/** The check itself, given how many leading ids (at most the checked count) matched. */
function prefixCheck(
  storedLength: number,
  allLength: number,
  maxTrimTokens: number,
  matched: number,
  requestMessages: readonly unknown[],
  assistantMessage: unknown,
): void {
  const checkLen = storedLength - maxTrimTokens;
  if (storedLength === 0 || checkLen <= 0 || matched === checkLen) return;
  throw jsonError(
    500,
    `pretokenized prefix mismatch: stored ${storedLength} tokens (checking first ${checkLen}, allowing ${maxTrimTokens} trailing) are not a prefix of prompt_token_ids + completion_token_ids (${allLength} tokens), first mismatch at index ${matched}, matched ${matched}/${checkLen} prefix tokens\nrequest_messages=${pythonRepr(requestMessages)}\nassistant_message=${pythonRepr(assistantMessage)}`,
  );
}

/**
 * `commit_generation` (session_state.py): prefix check, node cap, append under the captured parent, move the
 * view.
 */
export function commitGeneration(state: SessionState, gen: Generation): TrajectoryNode {
  const parent = gen.attachParent;
  // The node's snapshot and the common prefix it shares with the parent's, measured once: the prefix
  // check needs that length too. No plain `prompt + completion` array is built (TokenSnapshot.concatFor).
  const { snapshot, shared } = gen.prompt.concatFor(gen.completionIds, parent?.tokens ?? null);
  const storedLength = parent?.tokens.length ?? 0;
  prefixCheck(
    storedLength,
    snapshot.length,
    gen.maxTrimTokens,
    Math.min(shared, storedLength - gen.maxTrimTokens),
    gen.requestMessages,
    gen.assistantMessage,
  );
  const parentDepth = parent?.depth ?? 0;
  const node = state.tree.createNode({
    parent,
    deltaMessages: [...gen.requestMessages.slice(parentDepth), gen.assistantMessage],
    tokenIds: snapshot,
    completionSpan: [gen.prompt.length, snapshot.length],
    committedAt: gen.record.timestamp,
    responseId: gen.responseId,
    record: gen.record,
    finishReason: gen.finishReason,
  });
  state.activeLeaf = node;
  return node;
}
