/**
 * What the trie search (message-trie.ts) learnt on the way, kept for the record sharing
 * (shared-messages.ts): at index i the stored message of the edge the search took for `messages[i]` when
 * the two are the same JSON, else anything else. The search compares the whole message anyway (a same
 * message is the common case), so the sharing need not compare it again. Keyed by the very array
 * searched, weakly: the rule code never sees it, and a request's hints go with its messages.
 */
const hints = new WeakMap<readonly unknown[], readonly unknown[]>();

export function rememberEqualStored(messages: readonly unknown[], equalStored: readonly unknown[]): void {
  hints.set(messages, equalStored);
}

/** The hints of the last search over `messages`, once (they are dropped as they are read). */
export function takeEqualStored(messages: readonly unknown[]): readonly unknown[] | undefined {
  const found = hints.get(messages);
  if (found !== undefined) hints.delete(messages);
  return found;
}
