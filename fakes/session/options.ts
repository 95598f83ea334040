import type { BodyBufferPool } from '../../common/http/body-buffers.ts';
import type { MilesProfile } from '../../contracts/miles-profile.ts';
import type { TemplateKwargs, TitoModel } from '../tokenizer/tito.ts';
import type { SamplePicker, SamplePostprocessor } from './hooks/types.ts';

/** How a fake session server is started (`startSessionServer`, `harness serve session-server`). */
export interface SessionServerOptions {
  /** The policy backend (Miles: the inference router), e.g. `http://127.0.0.1:30000`. */
  readonly backendUrl: string;
  readonly titoModel?: TitoModel;
  readonly host?: string;
  readonly port?: number;
  /**
   * Which Miles the fake answers as (contracts/miles-profile.ts): its switches choose the rules
   * (docs/session-server.md "Miles profiles"). Default: `DEFAULT_MILES_PROFILE`.
   */
  readonly milesProfile?: MilesProfile;
  /** A picker function; wins over `pickerPath`. Default: the profile's `defaultPicker`. */
  readonly picker?: SamplePicker;
  /**
   * `--session-sample-picker-path`: one of the pickers Miles ships, by import path
   * (hooks/picker-paths.ts); an unknown path is refused at start (`config.session_picker_path`).
   */
  readonly pickerPath?: string;
  /** Default: `default_postprocess`. */
  readonly postprocessor?: SamplePostprocessor;
  /** Request bodies above this are answered 413 (the fake's own guard; Miles has none). */
  readonly bodyLimitBytes?: number;
  /** `--apply-chat-template-kwargs`. */
  readonly chatTemplateKwargs?: TemplateKwargs;
  /** `--miles-router-timeout` in ms; default none. */
  readonly backendTimeoutMs?: number;
  /** `--use-rollout-routing-replay`: forces `return_routed_experts`. */
  readonly returnRoutedExperts?: boolean;
  /** `--use-rollout-indexer-replay`: forces `return_indexer_topk`. */
  readonly returnIndexerTopk?: boolean;
  /** LoRA on: forces `lora_path="miles_lora"`. */
  readonly lora?: boolean;
  /** Node cap per session; Miles' is 1024 (its tests patch it lower, as this option allows). */
  readonly maxNodes?: number;
  /** Epoch seconds for record timestamps; default the wall clock. */
  readonly clock?: () => number;
  /** Called with every unhandled error answered as a plain 500. */
  readonly onInternalError?: (error: unknown) => void;
  /** Called when a client hangs up before its request body arrived (nothing is answered). */
  readonly onClientGone?: (request: { readonly method: string; readonly url: string }) => void;
  /**
   * Live sessions allowed at once; `POST /sessions` past it answers 503 (the fake's own guard: Miles
   * keeps every session until DELETE and grows until the process dies). Default: no limit.
   */
  readonly maxSessions?: number;
  /** Live sessions at which `onWarning` fires (once per crossing). Default: 10,000, or 80% of `maxSessions`. */
  readonly sessionWarningThreshold?: number;
  /** Operator warnings (the CLI prints them to stderr). */
  readonly onWarning?: (message: string) => void;
  /** The speed machinery's switches; the defaults are the fast paths, which answer byte for byte alike. */
  readonly performance?: SessionServerPerformance;
}

/**
 * Each switch turns one speed mechanism off (docs/performance.md "Catalogue" names its equivalence
 * test); nothing a client sees changes.
 */
export interface SessionServerPerformance {
  /** False parses every chat body whole (default true: the same values, reusing re-sent bytes; chat.ts). */
  readonly reuseChatBodyBytes?: boolean;
  /** False writes every forwarded chat body into a fresh buffer (default true: pooled buffers; chat.ts). */
  readonly poolForwardedBodies?: boolean;
  /**
   * False keeps each chat request as Miles does: the messages as parsed, `input_ids` a list, the body
   * written whole (default true: re-sent messages share the stored objects, `input_ids` read from the
   * snapshot, the body written from cached bytes; fast/record-sharing.ts).
   */
  readonly shareRecordMemory?: boolean;
  /**
   * Where chat request bodies are read into, each given back once its chat is answered (default a
   * pool of its own; common/http/body-buffers.ts). `false`: a fresh buffer per body.
   */
  readonly chatBodyBuffers?: BodyBufferPool | false;
  /**
   * False assembles each leaf's sample on plain lists, as Miles does (default true: prompts read in place
   * from the snapshots, the fold's per-token pieces kept as runs and handed on deferred;
   * fast/run-leaf-fields.ts).
   */
  readonly foldAsRuns?: boolean;
  /**
   * False finds each chat's attach point by Miles' walk over the nodes (tree.ts `milesAttachWalk`; default
   * true: a trie over the strict matcher's message keys, fast/message-trie.ts).
   */
  readonly indexAttachSearch?: boolean;
}

/** What `GET /harness/stats` answers: the live sessions and what they hold (the fake's own route). */
export interface SessionServerStats {
  readonly sessions: number;
  readonly max_sessions: number | null;
  /** Tree nodes over all live sessions. */
  readonly nodes: number;
  /** Token ids in the nodes' snapshots (each node keeps a full one; its record keeps the prompt's again). */
  readonly stored_token_ids: number;
  readonly heap_used_bytes: number;
  readonly rss_bytes: number;
}
