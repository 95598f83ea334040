import { describe, expect, it } from 'vitest';
import { nearestNames } from './nearest-names.ts';

// Distances worked out by hand (optimal string alignment: insert, delete, substitute, swap neighbours).
describe('nearestNames', () => {
  it('keeps candidates within the budget, nearest first, ties alphabetical', () => {
    // '--abcde' is 7 characters: budget max(2, 7 / 5) = 2.
    const candidates = [
      '--xyzde', // 3 substitutions: out
      '--axcye', // 2 substitutions
      '--abc', // 2 deletions
      '--bacde', // 1 swap
      '--abde', // 1 deletion
      '--abcdef', // 1 insertion
      '--abcde', // itself
      '--abcdexyz', // 3 longer: out before any distance is computed
      '--ab', // 3 shorter: out
    ];
    expect(nearestNames('--abcde', candidates, 20)).toEqual([
      '--abcde',
      '--abcdef',
      '--abde',
      '--bacde',
      '--abc',
      '--axcye',
    ]);
    expect(nearestNames('--abcde', candidates)).toEqual(['--abcde', '--abcdef', '--abde']);
    expect(nearestNames('--abcde', candidates, 1)).toEqual(['--abcde']);
  });

  it('counts a swap of neighbours as one edit, not two', () => {
    // Without the swap rule '--bacdefgh' would be 2 edits and sort after '--aacdefgy' (also 2).
    expect(nearestNames('--abcdefgh', ['--aacdefgy', '--bacdefgh', '--abcdefgx'])).toEqual([
      '--abcdefgx',
      '--bacdefgh',
      '--aacdefgy',
    ]);
  });

  it('grows the budget with the name: a fifth of its length', () => {
    const name = '--rollout-batch-size-per-gpu'; // 28 characters: budget 5
    // 4 substitutions in, 7 out.
    expect(nearestNames(name, ['--rollout-batch-size-pxx-gxx', '--rollxxt-batch-sxze-pxx-gxx'])).toEqual([
      '--rollout-batch-size-pxx-gxx',
    ]);
  });
});
