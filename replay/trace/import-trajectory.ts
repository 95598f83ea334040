import type { SessionTrace } from '../../contracts/trace.ts';
import type { TrajectoryRow } from '../run-check/dump-schema.ts';

/**
 * One `trajectory/<step>.jsonl` row as a `session-trace/1` file (issue 36 item 2). The row is one kept
 * sample's conversation: the last request's messages plus the reply (radixark/miles@31f1ca96
 * miles/rollout/session/samples/merge.py, `metadata["messages"]`; written by
 * miles/ray/rollout/debug_data.py `trajectory_rows`). Terminus re-sends its whole history within a
 * segment, so every assistant message at position i was the reply to the request `messages[:i]`: that
 * is the turn. Finish reasons are not dumped: every reply is `stop` but a truncated sample's last, which
 * is `length`. Calls no kept sample holds (a trimmed retry or summary) are not in the rows, so the
 * trace has the kept conversation only.
 */
export function traceFromTrajectoryRow(row: TrajectoryRow): SessionTrace | null {
  const turns: SessionTrace['turns'] = [];
  const last = row.messages.findLastIndex((m) => m.role === 'assistant');
  row.messages.forEach((message, i) => {
    if (message.role !== 'assistant') return;
    turns.push({
      request: { messages: row.messages.slice(0, i) },
      response: {
        message: { ...message, content: message.content ?? null },
        finish_reason: i === last && row.status === 'truncated' ? 'length' : 'stop',
      },
    });
  });
  if (turns.length === 0) return null;
  return {
    format: 'session-trace/1',
    max_seq_len: null,
    // What the agent server reports, as POST /samples' metadata: the trajectory's reward.
    ...(row.reward === null ? {} : { agent_metadata: { reward: row.reward } }),
    turns,
  };
}
