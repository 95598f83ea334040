import type { TokenSnapshot } from './token-snapshot.ts';

/**
 * One committed generation as Miles stores it (`SessionRecord`, radixark/miles@31f1ca96
 * miles/rollout/session/types.py), in the key order GET /sessions/{id} prints.
 */
export interface SessionRecord {
  /** Epoch seconds at commit. */
  readonly timestamp: number;
  /** Epoch seconds when the chat handler was entered. */
  readonly request_timestamp: number;
  readonly method: 'POST';
  readonly path: '/v1/chat/completions';
  /** The rewritten body sent to the backend, including `input_ids`. */
  readonly request: Record<string, unknown>;
  /** The full backend JSON (routed experts and indexer top-k included). */
  readonly response: Record<string, unknown>;
  readonly status_code: 200;
}

/**
 * Memory only: what a record prints stays byte for byte the same. At a 32k-token context a session's
 * records are mostly the request's `input_ids` (a prompt copy per turn) and the message texts (the whole
 * history parsed again every turn); docs/performance.md "Memory".
 */

/** The snapshot behind each getter `promptIdsFromSnapshot` installed (keyed by the getter itself). */
const promptSources = new WeakMap<() => number[], PromptSource>();

/** `request.input_ids` is `snapshot.slice(0, length)`. */
export interface PromptSource {
  readonly snapshot: TokenSnapshot;
  readonly length: number;
}

/**
 * Where `request.input_ids` reads from, when it is still the getter `promptIdsFromSnapshot` installed
 * (null for a plain value or any other property): a reader that only needs the ids' pieces (the samples
 * op) can take them from the snapshot instead of a fresh copy of the prompt.
 */
export function promptSource(request: Record<string, unknown>): PromptSource | null {
  const get = Object.getOwnPropertyDescriptor(request, 'input_ids')?.get;
  return get === undefined ? null : (promptSources.get(get as () => number[]) ?? null);
}

/**
 * Turns `request.input_ids` into a getter over the committed node's snapshot (`tokens` starts with the
 * prompt), in the same key position, so the record holds no second copy of the prompt. Each read gives
 * a fresh plain array equal to the prompt sent (a list when printed, never a typed array).
 */
export function promptIdsFromSnapshot(
  request: Record<string, unknown>,
  snapshot: TokenSnapshot,
  promptLength: number,
): void {
  if (!Array.isArray(request.input_ids) || request.input_ids.length !== promptLength) return;
  const get = () => snapshot.slice(0, promptLength);
  promptSources.set(get, { snapshot, length: promptLength });
  Object.defineProperty(request, 'input_ids', { get, enumerable: true, configurable: true });
}

/**
 * Replaces each message of `messages` equal to the one at the same position of `earlier` (the attach
 * parent's request) by that earlier object, so the texts a client re-sends every turn are held once.
 * Equal means the same JSON with the same key order (what a record prints), plain objects, arrays and
 * primitives only; anything else stays as it is.
 */
export function shareEarlierMessages(messages: unknown[], earlier: readonly unknown[]): void {
  const n = Math.min(messages.length, earlier.length);
  for (let i = 0; i < n; i++) if (sameJson(messages[i], earlier[i])) messages[i] = earlier[i];
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return typeof a !== 'number' || !Object.is(a, -0) === !Object.is(b, -0);
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!sameJson(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b) || !isPlain(a) || !isPlain(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  for (let i = 0; i < ka.length; i++) {
    const key = ka[i]!;
    if (key !== kb[i] || !sameJson((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]))
      return false;
  }
  return true;
}

function isPlain(v: object): boolean {
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}
