import { seededRandom } from '../../common/random.ts';
import type { SessionClient } from '../../fakes/session/index.ts';

/** One session-server instance as the rollout side addresses it. */
export interface SessionEndpoint {
  readonly client: SessionClient;
  /** Its 32-hex instance id (`session_server_instance_id` in the `/run` body, the key `/flush` takes). */
  readonly instanceId: string;
}

/**
 * The rollout side's choice of session server: `OpenAIEndpointTracer.create` (radixark/miles@067dc320
 * miles/rollout/generate_utils/openai_endpoint_utils.py) picks one instance per session with
 * `random.choice` over the workers, "the only routing decision in the system"; every later call of the
 * session reuses the URL it made. The replay draws from a seeded source so a seed reproduces the
 * routing (which worker owns a session changes nothing a client sees).
 */
export interface SessionRouter {
  readonly endpoints: readonly SessionEndpoint[];
  pick(): SessionEndpoint;
}

export function sessionRouter(endpoints: readonly SessionEndpoint[], seed: number): SessionRouter {
  const random = seededRandom(seed ^ 0x5e55_1011);
  return {
    endpoints,
    pick: () =>
      endpoints.length === 1 ? endpoints[0]! : endpoints[Math.floor(random() * endpoints.length)]!,
  };
}

/**
 * `session_server_id` as the newer agent function sends it: the `host:port` its session URL names
 * (radixark/miles@0518852e examples/swe-agent-harbor-docker/swe_agent_function.py `run`:
 * `urlsplit(session_url).netloc`), the same as `OpenAIEndpointTracer.session_server_id` (the router URL
 * without `http://`).
 */
export function sessionServerIdOf(sessionUrl: string): string {
  return new URL(sessionUrl).host;
}
