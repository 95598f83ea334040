import { pythonJsonLoadsBytes } from '../../common/python-json/loads.ts';

/**
 * How one session parses its chat bodies. Miles' rule (radixark/miles@31f1ca96
 * miles/rollout/session/v2/core.py: `json.loads` of the body) is the whole parse below, floats kept as
 * floats (`"temperature": 1.0` is forwarded and recorded as `1.0`). The server's default reuses the
 * previous body's bytes (fakes/session/fast/chat-body-reuse.ts, plugged in by compose.ts): the same value
 * or the same error in every case (`SessionServerPerformance.reuseChatBodyBytes`).
 */
export interface ChatBodyReader {
  load(raw: Buffer): unknown;
  /** Forgets whatever the reader kept (the session is closing). */
  release(): void;
}

/** Miles' way: every body parsed whole. */
export function wholeBodyReader(): ChatBodyReader {
  return { load: (raw) => pythonJsonLoadsBytes(raw, { keepFloats: true }), release: () => {} };
}
