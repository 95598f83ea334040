/**
 * The agent function's closing `abort` (radixark/miles@0518852e
 * examples/swe-agent-harbor-docker/swe_agent_function.py `abort`): `POST {agent server}/flush` once per
 * session-server instance id, so the agent server cancels every trial still running against any of the
 * workers. A failed flush is only logged in Miles; here it is counted.
 */
export async function flushSessionInstances(
  harborUrl: string,
  instanceIds: readonly string[],
): Promise<{ readonly flushed: number; readonly failed: number }> {
  let flushed = 0;
  let failed = 0;
  for (const id of new Set(instanceIds)) {
    try {
      const response = await fetch(`${harborUrl.replace(/\/+$/, '')}/flush`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ session_server_instance_id: id }),
      });
      await response.body?.cancel();
      if (response.ok) flushed += 1;
      else failed += 1;
    } catch {
      failed += 1;
    }
  }
  return { flushed, failed };
}
