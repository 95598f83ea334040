import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { WireSample } from '../../../contracts/wire-sample.ts';
import { mergeRules, mergeTurnSamples } from '../assembly.ts';
import { turnWireSample } from '../testing/turn-wire-sample.ts';
import { toTurnSample } from '../values/turn-tokens.ts';
import { deferredWireSample } from './deferred-leaf.ts';
import { foldAsRuns, reusingDecoder } from './run-fold.ts';

// The oracle is `mergeTurnSamples`, Miles' `merge_samples` on plain lists (assembly.ts): the runs fold
// must give the same sample, turns without per-token lists included (`_fill_defaults`), which the
// samples op never folds (every record has its mask) but the rule covers.

const decode = (ids: readonly number[]) => ids.join(',');

/** A chain of turns, each extending the last by an observation and a response. */
const chains = fc
  .array(
    fc.record({
      observation: fc.array(fc.integer({ min: 1, max: 50 }), { minLength: 1, maxLength: 3 }),
      response: fc.array(fc.integer({ min: 51, max: 99 }), { minLength: 0, maxLength: 3 }),
      lists: fc.boolean(),
    }),
    { minLength: 1, maxLength: 5 },
  )
  .map((steps) => {
    const turns: WireSample[] = [];
    let tokens: number[] = [];
    for (const { observation, response, lists } of steps) {
      tokens = [...tokens, ...observation, ...response];
      turns.push(
        turnWireSample({
          tokens,
          response: decode(response),
          response_length: response.length,
          loss_mask: lists ? response.map(() => 1) : null,
          rollout_log_probs: lists ? response.map((_, k) => -0.25 * (k + 1)) : null,
        }),
      );
    }
    return turns;
  });

describe('foldAsRuns', () => {
  it('folds as merge_samples does on plain lists, turns without mask or log-probs included', () => {
    fc.assert(
      fc.property(chains, (turns) => {
        const plain = mergeTurnSamples(turns, decode);
        const { sample, parts } = foldAsRuns(turns.map(toTurnSample), reusingDecoder(decode), mergeRules);
        const runs = deferredWireSample(sample, parts);
        expect({ ...runs, metadata: runs.metadata }).toEqual(plain);
      }),
    );
  });
});
