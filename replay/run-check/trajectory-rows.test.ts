import { describe, expect, it } from 'vitest';
import { type TrajectoryRow, TrajectoryRowSchema } from './dump-schema.ts';
import { rowOfOccurrence, trajectoryIndex } from './lost-branches.ts';

// Which trajectory row is a sample's. radixark/miles@31f1ca96 miles/ray/rollout/debug_data.py
// `trajectory_rows` writes one row per sample with messages, in sample order, and nothing else: the k-th
// row of an index is its k-th sample with messages. sii-avalanche/miles@4d412b5a's adds
// `sample_occurrence`, counted over every sample of the index (`occurrences[sample.index]` is bumped
// before the `messages is None` skip), so a sample without messages leaves a gap the rows name.
const row = (index: number, text: string, occurrence?: number): TrajectoryRow =>
  TrajectoryRowSchema.parse({
    sample_index: index,
    ...(occurrence === undefined ? {} : { sample_occurrence: occurrence }),
    group_index: 0,
    status: 'completed',
    reward: 1.0,
    prompt: 'p',
    messages: [{ role: 'assistant', content: text }],
  });

describe("a sample's trajectory row", () => {
  it('is the k-th row of its index in 31f1ca96 dumps', () => {
    const rows = trajectoryIndex([row(3, 'a'), row(4, 'x'), row(3, 'b')]).get('0:3');
    expect(rowOfOccurrence(rows, 0)?.messages[0]?.content).toBe('a');
    expect(rowOfOccurrence(rows, 1)?.messages[0]?.content).toBe('b');
    expect(rowOfOccurrence(rows, 2)).toBeUndefined();
  });

  it("is the row naming its occurrence in the newer writer's dumps, past a sample without messages", () => {
    // Samples 3#0 (no messages), 3#1, 3#2: the newer writer writes occurrences 1 and 2 only.
    const rows = trajectoryIndex([row(3, 'second', 1), row(3, 'third', 2)]).get('0:3');
    expect(rowOfOccurrence(rows, 0)).toBeUndefined();
    expect(rowOfOccurrence(rows, 1)?.messages[0]?.content).toBe('second');
    expect(rowOfOccurrence(rows, 2)?.messages[0]?.content).toBe('third');
  });

  it('has no row when its index has none', () => {
    expect(rowOfOccurrence(undefined, 0)).toBeUndefined();
  });

  it('refuses a negative occurrence as not the newer layout', () => {
    expect(TrajectoryRowSchema.safeParse({ ...row(3, 'a'), sample_occurrence: -1 }).success).toBe(false);
  });
});
