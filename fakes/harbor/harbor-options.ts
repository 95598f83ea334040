import type { CallEvent } from './engine/episode-calls.ts';
import type { TokenCounter } from './engine/episode-history.ts';
import type { TrialRef } from './trial-record.ts';

/** Recipe values: `--max-concurrent 32 --agent-timeout 3600` (docs/harbor.md "Running it"). */
export const DEFAULT_MAX_CONCURRENT = 32;
export const DEFAULT_AGENT_TIMEOUT_S = 3600;
/** A /run body is a few KB of metadata and sampling params; 1 MiB is generous. */
export const DEFAULT_RUN_BODY_LIMIT_BYTES = 1024 * 1024;

/** How the Harbor core (app.ts) runs trials, whatever transport carries its requests. */
export interface HarborOptions {
  readonly maxConcurrent?: number;
  /** Agent-phase limit in seconds (fractions allowed); the trial ends as TimeLimitExceeded. */
  readonly agentTimeoutS?: number;
  /** When set, `/flush` requires `Authorization: Bearer <secret>`. */
  readonly adminSecret?: string;
  readonly bodyLimitBytes?: number;
  /** Accept a `/run` whose `base_url` host is not loopback (default: refused with 400 invalid_base_url). */
  readonly allowRemoteBaseUrl?: boolean;
  /** The episodes' HTTP client (tests may inject one). */
  readonly fetchImpl?: typeof fetch;
  /** Every model-call attempt of every trial, as it happens. */
  readonly onCall?: (trial: TrialRef, event: CallEvent) => void;
  /** The history token counter of the summarization decisions (default: each script's own, see episodes.md). */
  readonly countTokens?: TokenCounter;
}
