import type { RunResult } from './run-protocol.ts';

/** Which trial something belongs to. */
export interface TrialRef {
  readonly id: number;
  readonly instanceId: string;
  /** How many earlier trials this instance id had on this server (picks the variant without a sample index). */
  readonly trialIndex: number;
  /** The script's own instance id. */
  readonly episode: string;
  readonly variant: number;
  readonly sessionServerInstanceId: string | undefined;
  readonly baseUrl: string;
}

/** What the server remembers about each trial it answered. */
export interface TrialRecord extends TrialRef {
  readonly result: RunResult;
}
