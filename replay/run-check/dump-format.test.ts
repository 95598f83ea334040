import { describe, expect, it } from 'vitest';
import { toLoggedSample } from '../metrics/logged-sample.ts';
import { dumpFormatOf, RolloutDumpSchema } from './dump-schema.ts';
import { dumpSampleToReplay } from './to-check-data.ts';

// Which Miles wrote a dump, from Sample.weight_versions: radixark/miles@31f1ca96 miles/utils/types.py keeps
// version strings; the newer Miles one list of span dicts per call (sii-avalanche/miles@4d412b5a
// miles/utils/types.py `Sample.to_dict`, what its debug_data.py `save_debug_rollout_data` pickles; the
// newer writers' own output is checked in test/miles/check-run-next.test.ts).
const sample = (weight_versions: unknown[]) =>
  RolloutDumpSchema.parse({
    kind: 'rollout_data',
    source: 'x',
    rollout_id: 0,
    metadata: {},
    samples: [
      {
        group_index: 0,
        index: 0,
        tokens: [1, 2, 3],
        response_length: 1,
        loss_mask: [1],
        reward: 1,
        status: 'completed',
        weight_versions,
      },
    ],
  }).samples;

describe('dump format', () => {
  it('tells the pinned Miles from the newer one, and says when it cannot', () => {
    expect(dumpFormatOf(sample(['3', '4']))).toBe('miles-31f1ca96');
    expect(dumpFormatOf(sample([[{ version: '4', abs_start: 0, abs_end: 3 }]]))).toBe('miles-next-spans');
    // A first call without spans (no logprobs reported) does not hide a later call's.
    expect(dumpFormatOf(sample([[], [{ version: '4', abs_start: 3, abs_end: 5 }]]))).toBe('miles-next-spans');
    expect(dumpFormatOf(sample([]))).toBe('undetermined');
    expect(dumpFormatOf(sample([[], []]))).toBe('undetermined');
    // A flat list of span dicts is neither Miles' (the newer Sample.from_dict reads one list per call).
    expect(dumpFormatOf(sample([{ version: '4', abs_start: 0, abs_end: 3 }]))).toBe('undetermined');
  });

  it("reads the newer spans' versions for the weight_version metrics", () => {
    const [s] = sample([
      [
        { version: '3', abs_start: 0, abs_end: 2 },
        { version: '4', abs_start: 2, abs_end: 3 },
      ],
      [{ version: '5', abs_start: 5, abs_end: 7 }],
    ]);
    expect(toLoggedSample(dumpSampleToReplay(s!)).weight_versions).toEqual(['3', '4', '5']);
    expect(toLoggedSample(dumpSampleToReplay(sample(['5'])[0]!)).weight_versions).toEqual(['5']);
  });
});
