import { describe, expect, it } from 'vitest';
import type { WireSample } from '../../contracts/wire-sample.ts';
import { titoFamily } from '../tokenizer/tito.ts';
import { samplesOpSpeed } from './compose.ts';
import { defaultPostprocess } from './hooks/default-postprocess.ts';
import { DEFAULT_PICKER_PATH, DEFAULT_POSTPROCESSOR_PATH } from './hooks/types.ts';
import { collectSamples } from './samples-op.ts';
import { SessionState } from './state.ts';
import { addTurn } from './testing/build-tree.ts';

// The samples op shares one array of ones per output length among its turns' masks (fast/shared-ones.ts
// `SharedOnes`): a leaf sample that keeps such a mask as its own must hold a copy, or a hook writing one
// leaf's mask would write every other leaf's (and the next leaf's turns) too. The plain lists
// (`foldAsRuns: false`) must behave alike.
describe.each([
  { path: 'runs', foldAsRuns: true },
  { path: 'plain lists', foldAsRuns: false },
])('loss masks the samples op hands to hooks ($path)', ({ foldAsRuns }) => {
  it('are each their own array: a picker writing one leaves the others all ones', () => {
    const state = new SessionState('s');
    // Three single-turn roots with outputs of the same length, then a two-turn chain of that length.
    for (let r = 0; r < 3; r += 1) addTurn(state.tree, null, { prompt: [1, 2, 3 + r], output: [10, 11, 12] });
    const root = addTurn(state.tree, null, { prompt: [5, 6], output: [20, 21, 22] });
    addTurn(state.tree, root, { prompt: [5, 6, 20, 21, 22, 7], output: [30, 31, 32] });
    const seen: Array<number[] | null> = [];
    const picker = (samples: WireSample[]) => {
      for (const s of samples) {
        seen.push(s.loss_mask === null ? null : [...s.loss_mask]);
        if (s.loss_mask !== null) s.loss_mask[0] = 7;
      }
      return samples;
    };
    const reply = collectSamples(
      state,
      titoFamily('default'),
      {
        picker,
        postprocessor: defaultPostprocess,
        pickerPath: DEFAULT_PICKER_PATH,
        postprocessorPath: DEFAULT_POSTPROCESSOR_PATH,
      },
      { maxSeqLen: null, agentMetadata: undefined },
      samplesOpSpeed({ foldAsRuns }),
    );
    expect(seen).toEqual([
      [1, 1, 1],
      [1, 1, 1],
      [1, 1, 1],
      [1, 1, 1, 0, 1, 1, 1],
    ]);
    expect(reply.samples.map((s) => s.loss_mask)).toEqual([
      [7, 1, 1],
      [7, 1, 1],
      [7, 1, 1],
      [7, 1, 1, 0, 1, 1, 1],
    ]);
  });
});
