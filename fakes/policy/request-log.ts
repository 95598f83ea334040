import type { Directive } from '../../contracts/directive.ts';

/** One request the fake policy answered (or refused). */
export interface PolicyLogEntry {
  /** Epoch milliseconds at arrival. */
  readonly at: number;
  readonly method: string;
  readonly path: string;
  /** `X-SMG-Routing-Key` (the session id when the request came through a session server). */
  readonly routingKey: string | null;
  /**
   * What the request sent, as lengths and digests (contracts/request-digest.ts) rather than the arrays:
   * a log entry stays small however long the context, and the replay's resend check compares digests.
   */
  readonly messageCount: number;
  readonly messagesDigest: string;
  /** The opening of the last message's text (`lastMessageHead`): what the replay's accounting reads. */
  readonly lastMessageHead: string;
  /** Null when the body had no integer `input_ids`. */
  readonly inputIdsLength: number | null;
  readonly inputIdsDigest: string | null;
  /** The messages themselves, only in a log built with `keepMessages` (tests that need the text). */
  readonly messages?: readonly unknown[];
  /** The reply's message (a 200's `choices[0].message`), kept with `messages`. */
  readonly reply?: unknown;
  /** The `id` of the completion sent back; null for an error answer. */
  readonly responseId: string | null;
  readonly status: number;
  readonly finishReason: string | null;
  readonly directive: Directive | null;
  /** Script mode: the trace turn answered. */
  readonly traceTurn: number | null;
}

/**
 * A bounded in-memory log of the requests the policy answered: the replay joins tree nodes to requests
 * by `responseId` to tell a superseded retry from a lost completion. Oldest entries go first.
 *
 * Lookups go through keyed indexes (response id, routing key) rather than a scan of the whole log, and
 * eviction is O(1) (a moving head, compacted now and then) instead of `Array.shift` on every add.
 */
export class PolicyRequestLog {
  readonly limit: number;
  /** Whether entries carry the request's `messages` (off by default: they cost ≈ 1 MB at 32k tokens). */
  readonly keepMessages: boolean;
  private items: PolicyLogEntry[] = [];
  private head = 0;
  private dropped = 0;
  private readonly byResponse = new Map<string, PolicyLogEntry[]>();
  private readonly byRouting = new Map<string, PolicyLogEntry[]>();

  constructor(limit = 10_000, options: { readonly keepMessages?: boolean } = {}) {
    this.limit = limit;
    this.keepMessages = options.keepMessages ?? false;
  }

  add(entry: PolicyLogEntry): void {
    this.items.push(entry);
    if (entry.responseId !== null) indexAdd(this.byResponse, entry.responseId, entry);
    if (entry.routingKey !== null) indexAdd(this.byRouting, entry.routingKey, entry);
    if (this.items.length - this.head > this.limit) {
      const oldest = this.items[this.head] as PolicyLogEntry;
      this.head += 1;
      this.dropped += 1;
      // The oldest entry is the first of its lists too.
      if (oldest.responseId !== null) indexDropFirst(this.byResponse, oldest.responseId);
      if (oldest.routingKey !== null) indexDropFirst(this.byRouting, oldest.routingKey);
      if (this.head >= this.limit) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
    }
  }

  entries(): readonly PolicyLogEntry[] {
    return this.items.slice(this.head);
  }

  get size(): number {
    return this.items.length - this.head;
  }

  /** How many entries were evicted by the bound. */
  get droppedCount(): number {
    return this.dropped;
  }

  /** The oldest entry still held with this response id. */
  byResponseId(id: string): PolicyLogEntry | undefined {
    return this.byResponse.get(id)?.[0];
  }

  byRoutingKey(key: string): PolicyLogEntry[] {
    return [...(this.byRouting.get(key) ?? [])];
  }

  clear(): void {
    this.items = [];
    this.head = 0;
    this.dropped = 0;
    this.byResponse.clear();
    this.byRouting.clear();
  }
}

function indexAdd(index: Map<string, PolicyLogEntry[]>, key: string, entry: PolicyLogEntry): void {
  const list = index.get(key);
  if (list === undefined) index.set(key, [entry]);
  else list.push(entry);
}

function indexDropFirst(index: Map<string, PolicyLogEntry[]>, key: string): void {
  const list = index.get(key);
  if (list === undefined) return;
  list.shift();
  if (list.length === 0) index.delete(key);
}
