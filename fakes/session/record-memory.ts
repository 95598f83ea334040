import { pythonJsonPieces, pythonJsonPiecesToBytes } from '../../common/python-json/dumps.ts';
import type { TokenSnapshot } from './token-snapshot.ts';
import type { TrajectoryNode } from './tree.ts';

/**
 * How the chat route holds a request it records and forwards. Miles' rule
 * (radixark/miles@31f1ca96 miles/rollout/session/v2/core.py `chat_completions`) is the plain one below:
 * the request as parsed, `request_body["input_ids"] = prompt_token_ids`, the body sent as `json.dumps`
 * writes it. The server's default, `fakes/session/fast/record-sharing.ts`, holds the same values with
 * less memory and writes the same bytes faster; a record prints the same either way
 * (`SessionServerPerformance.shareRecordMemory`, docs/performance.md "Catalogue").
 */
export interface RecordMemory {
  /**
   * Called once the attach point is found: the request's `messages` may have re-sent messages replaced
   * by the equal objects stored on the path to `attach`.
   */
  adoptHistory(messages: unknown[], attach: TrajectoryNode | null): void;
  /** `body.input_ids = prompt` (the key keeps its position when the client sent one). */
  setPromptIds(body: Record<string, unknown>, prompt: TokenSnapshot): void;
  /** The bytes of `json.dumps(body)`; with `into`, written into the buffer it gives. */
  forwardedBytes(body: Record<string, unknown>, into?: (size: number) => Uint8Array): Buffer;
  /** Called once `request` is recorded on `node` (whose snapshot starts with the prompt sent). */
  committed(request: Record<string, unknown>, node: TrajectoryNode): void;
}

/** Miles' way: nothing shared, `input_ids` a list, the body written whole. */
export const plainRecordMemory: RecordMemory = {
  adoptHistory: () => {},
  setPromptIds: (body, prompt) => {
    body.input_ids = prompt.toArray();
  },
  // The pieces path writes the ids as digits straight into bytes: the same bytes as
  // `Buffer.from(pythonJsonDumps(body))` (common/python-json/fast-path.test.ts).
  forwardedBytes: (body, into) => pythonJsonPiecesToBytes(pythonJsonPieces(body), ', ', into),
  committed: () => {},
};
