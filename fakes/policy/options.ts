import type { SessionTrace } from '../../contracts/trace.ts';
import type { TitoModel } from '../tokenizer/tito.ts';
import type { PolicyRequestLog } from './request-log.ts';
import type { ReplyFormat } from './synthetic.ts';

/** How the fake policy is set up (`createPolicy`, `startPolicyServer`, `harness serve policy`). */

export type PolicyMode = 'synthetic' | 'script';

export interface PolicyOptions {
  readonly mode: PolicyMode;
  /** Script mode: one trace (id `default`). */
  readonly script?: SessionTrace;
  /** Script mode: several traces by id, chosen with `x-harness-trace-id`. */
  readonly scripts?: Readonly<Record<string, SessionTrace>>;
  /** The toy TITO family whose stop tokens completions end with (match the session server's). */
  readonly tokenizer?: TitoModel;
  readonly model?: string;
  /** Synthetic reply length in words (analysis + plan); default 12. */
  readonly completionWords?: number;
  /** Synthetic `reasoning_content` length in words; default 0 (none). */
  readonly reasoningWords?: number;
  /** Synthetic reply format: Terminus-2's JSON (default) or XML template. */
  readonly replyFormat?: ReplyFormat;
  /** Prompt tokens at or above this (or prompt + `max_tokens` above it) get SGLang's 400. */
  readonly contextLength?: number;
  readonly weightVersion?: string;
  /** URL prefix the handlers match, e.g. `http://policy.test`; default `*` (any origin). */
  readonly origin?: string;
  /** Where requests are recorded; a fresh bounded log by default. */
  readonly log?: PolicyRequestLog;
  /** Epoch milliseconds; default the wall clock. */
  readonly clock?: () => number;
}
