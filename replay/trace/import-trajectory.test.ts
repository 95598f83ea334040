import { describe, expect, it } from 'vitest';
import { parseSessionTrace } from '../../contracts/trace.ts';
import { TrajectoryRowSchema } from '../run-check/dump-schema.ts';
import { traceFromTrajectoryRow } from './import-trajectory.ts';
import { replayTraceFresh } from './replay.ts';

// A row as radixark/miles@31f1ca96 writes it: debug_data.py trajectory_rows' keys, and merge.py's
// messages = the last request's messages + the reply.
const row = TrajectoryRowSchema.parse({
  sample_index: 5,
  group_index: 1,
  status: 'truncated',
  reward: 1.0,
  prompt: 'task fail fix pytest cat',
  messages: [
    { role: 'system', content: 'you are terminus' },
    { role: 'user', content: 'task fail fix pytest cat' },
    { role: 'assistant', content: 'pytest' },
    { role: 'user', content: 'FAILED test_x' },
    { role: 'assistant', content: 'cat x.py' },
  ],
});

describe('trace import of a trajectory row', () => {
  it('makes one turn per assistant message, its request the messages before it', () => {
    const trace = traceFromTrajectoryRow(row)!;
    expect(trace.turns.map((t) => t.request.messages.length)).toEqual([2, 4]);
    expect(trace.turns.map((t) => ('message' in t.response ? t.response.message.content : null))).toEqual([
      'pytest',
      'cat x.py',
    ]);
    // Truncated: the last reply was cut at the length limit.
    expect(trace.turns.map((t) => ('finish_reason' in t.response ? t.response.finish_reason : null))).toEqual(
      ['stop', 'length'],
    );
    expect(trace.agent_metadata).toEqual({ reward: 1 });
    expect(() => parseSessionTrace(JSON.parse(JSON.stringify(trace)))).not.toThrow();
  });

  it('replays through the fake session server as one segment whose leaf holds every turn', async () => {
    const trace = traceFromTrajectoryRow({ ...row, status: 'completed' })!;
    const { result } = await replayTraceFresh(trace, { titoModel: 'default' });
    expect(result.turns.map((t) => t.status)).toEqual([200, 200]);
    expect(result.tree.leaves).toHaveLength(1);
    expect(result.tree.leaves[0]!.path_node_ids).toHaveLength(2);
  });

  it('a row without an assistant message has no turn to replay', () => {
    expect(traceFromTrajectoryRow({ ...row, messages: row.messages.slice(0, 2) })).toBeNull();
  });
});
