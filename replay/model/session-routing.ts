/**
 * Where one session's calls went: the session-server workers (`host:port`) that received a request
 * naming the session, in the order they first did. Under `--session-server-workers N` every call of a
 * session must reach the one worker its URL names (check 11, `session_affinity`).
 */
export interface SessionRouting {
  readonly session_id: string;
  readonly workers: readonly string[];
}
