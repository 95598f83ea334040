import type { MilesProfile } from '../../contracts/miles-profile.ts';
import type { EpisodeScript } from '../../fakes/harbor/episode-schema.ts';
import { type HarborServer, startHarborServer } from '../../fakes/harbor/server.ts';
import { PolicyRequestLog, type PolicyServerHandle, startPolicyServer } from '../../fakes/policy/index.ts';
import type { SamplePicker, SamplePostprocessor } from '../../fakes/session/hooks/types.ts';
import type { SessionServerHandle } from '../../fakes/session/index.ts';
import { startSessionServerWorkers } from '../../fakes/session/workers.ts';
import type { TitoModel } from '../../fakes/tokenizer/tito.ts';

/** Enough for several steps of 32 Terminus episodes; the log is cleared after each step. */
const POLICY_LOG_LIMIT = 100_000;

export interface StackOptions {
  readonly episodes: readonly EpisodeScript[];
  readonly maxConcurrent: number;
  readonly titoModel: TitoModel;
  /** Which Miles the fake session server answers as; default `DEFAULT_MILES_PROFILE`. */
  readonly milesProfile?: MilesProfile;
  /** The recipe's `--agent-timeout 3600`. */
  readonly agentTimeoutS: number;
  /** Session sample hooks other than Miles' defaults (`harness fuzz` plants defects with them). */
  readonly sessionHooks?: { readonly picker?: SamplePicker; readonly postprocessor?: SamplePostprocessor };
  /** Keep each request's messages in the policy log (off by default; see `PolicyRequestLog`). */
  readonly keepRequestMessages?: boolean;
  /** Starts another session server in front of the policy instead of the fake (Miles' own, on CPU). */
  readonly sessionServer?: (backendUrl: string) => Promise<StackSessionServer>;
  /** `--session-server-workers`: fake session servers, each on its own port (default 1). */
  readonly sessionServerWorkers?: number;
}

/** What the replay needs of a session server: where it listens, its instance id, and how to stop it. */
export interface StackSessionServer {
  readonly url: string;
  readonly host: string;
  readonly port: number;
  readonly instanceId: string;
  close(): Promise<void>;
}

/** The three servers a replay drives, each on a free loopback port. */
export interface ReplayStack {
  readonly policy: PolicyServerHandle;
  /** The first (or only) session server. */
  readonly session: StackSessionServer;
  /** Every session server the rollouts route to, in worker order (`session` first). */
  readonly sessionServers: readonly StackSessionServer[];
  /** The fake workers among them, for what watches their requests (empty with Miles' own server). */
  readonly fakeSessionWorkers: readonly SessionServerHandle[];
  readonly harbor: HarborServer;
  /** Stops all three, harbor first (it cancels its trials), then the session server, then the policy. */
  close(): Promise<void>;
}

/**
 * Starts the fake policy, the fake session server v2 (or `sessionServer`) in front of it, and the mock Harbor server, in that
 * order; if one fails to start, the ones already running are stopped before the error propagates.
 */
export async function startReplayStack(options: StackOptions): Promise<ReplayStack> {
  const started: { close(): Promise<void> }[] = [];
  const stopAll = async () => {
    for (const server of started.reverse()) await server.close();
    started.length = 0;
  };
  try {
    const policy = await startPolicyServer({
      mode: 'synthetic',
      replyFormat: 'xml',
      tokenizer: options.titoModel,
      log: new PolicyRequestLog(POLICY_LOG_LIMIT, { keepMessages: options.keepRequestMessages ?? false }),
    });
    started.push(policy);
    let sessionServers: readonly StackSessionServer[];
    let fakeSessionWorkers: readonly SessionServerHandle[] = [];
    if (options.sessionServer === undefined) {
      const workers = await startSessionServerWorkers(
        {
          backendUrl: policy.url,
          titoModel: options.titoModel,
          ...(options.milesProfile === undefined ? {} : { milesProfile: options.milesProfile }),
          ...options.sessionHooks,
        },
        options.sessionServerWorkers ?? 1,
      );
      started.push(workers);
      sessionServers = fakeSessionWorkers = workers.workers;
    } else {
      const own = await options.sessionServer(policy.url);
      started.push(own);
      sessionServers = [own];
    }
    const harbor = await startHarborServer({
      episodes: options.episodes,
      maxConcurrent: options.maxConcurrent,
      agentTimeoutS: options.agentTimeoutS,
    });
    started.push(harbor);
    let closing: Promise<void> | undefined;
    return {
      policy,
      session: sessionServers[0]!,
      sessionServers,
      fakeSessionWorkers,
      harbor,
      close() {
        closing ??= stopAll();
        return closing;
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
}
