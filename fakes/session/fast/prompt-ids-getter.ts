import type { TokenSnapshot } from '../token-snapshot.ts';

/**
 * Memory only: a record's `request.input_ids` read from a node's snapshot instead of held as a copy of
 * the prompt (at a 32k-token context a session's records are mostly these copies, one per turn). What a
 * record prints stays byte for byte the same; docs/performance.md "Catalogue".
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
  // A getter installed here already says its length without building the array.
  const source = promptSource(request);
  if (source !== null ? source.length !== promptLength : !isPromptOfLength(request.input_ids, promptLength))
    return;
  installPromptIds(request, snapshot, promptLength);
}

function isPromptOfLength(value: unknown, length: number): boolean {
  return Array.isArray(value) && value.length === length;
}

/**
 * Sets `request.input_ids` (same key position when present, else last) to a getter reading
 * `snapshot.slice(0, length)`: a fresh plain array on each read. The chat route installs one over the
 * prompt it sends, then over the committed node's snapshot.
 */
export function installPromptIds(
  request: Record<string, unknown>,
  snapshot: TokenSnapshot,
  length: number,
): void {
  const get = () => snapshot.slice(0, length);
  promptSources.set(get, { snapshot, length });
  Object.defineProperty(request, 'input_ids', { get, enumerable: true, configurable: true });
}
