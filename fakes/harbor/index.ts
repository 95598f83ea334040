/** The mock Harbor agent server and the Terminus-2 episode engine: the API the rest of the harness uses. */

export { type CallEvent, MAIN_CALL_ATTEMPTS, SUB_CALL_ATTEMPTS } from './engine/episode-calls.ts';
export type { TokenCounter } from './engine/episode-history.ts';
export { type EpisodeResult, type PlayEpisodeOptions, playEpisode } from './engine/play-episode.ts';
export { estimateTokens } from './engine/token-estimate.ts';
export {
  DEFAULT_EPISODES_DIR,
  EpisodeCatalog,
  loadEpisodeScripts,
  parseEpisodeScript,
  readTb2Tasks,
  stableHash,
  TB2_TASKS_FILE,
} from './episode-catalog.ts';
export {
  type EpisodeExpect,
  type EpisodeScript,
  type EpisodeScriptInput,
  EpisodeScriptSchema,
  type ExitStatus,
  ExitStatusSchema,
  type ResolvedEpisode,
  resolveEpisode,
} from './episode-schema.ts';
export { DEFAULT_AGENT_TIMEOUT_S, DEFAULT_MAX_CONCURRENT, type HarborOptions } from './harbor-options.ts';
export {
  type AgentMetrics,
  AgentMetricsSchema,
  type FlushResult,
  FlushResultSchema,
  type Health,
  HealthSchema,
  type RunRequest,
  RunRequestSchema,
  type RunResult,
  RunResultSchema,
} from './run-protocol.ts';
export { type HarborServer, type HarborServerOptions, startHarborServer } from './server.ts';
export type { TrialRecord, TrialRef } from './trial-record.ts';
