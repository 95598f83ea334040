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
