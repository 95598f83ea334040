import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { SamplesOpPerformance } from './compose.ts';
import { resetTurnCounter } from './testing/build-tree.ts';
import { probeOutcome } from './testing/samples-probe.ts';

// The samples op's outcome on seeded trees (branches, retries, glm47 trims, max_seq_len cuts, broken
// chains, non-ASCII and escaped words, lone surrogates, -0 and float ids, snapshot-backed and plain
// records) must stay byte for byte what the code before the samples op's speed work gave: the wire bytes and
// decoded samples, or the same error. The digests were computed on commit df4343a. Both ways of
// assembling a leaf are held to them: the default (the fold kept as runs, its fields deferred;
// fast/run-leaf-fields.ts) and Miles' rules on plain lists (assembly.ts `plainLeafFields`).
const pinned = JSON.parse(
  readFileSync(new URL('../../fixtures/samples-probe-digests.json', import.meta.url), 'utf8'),
) as { digests: Record<string, string> };

/**
 * The seeds whose outcome differs from the pinned one, with what came out instead. The trees' default
 * messages are numbered across the whole run of seeds (build-tree.ts), so each run starts the count anew.
 */
function differing(performance: SamplesOpPerformance): string[] {
  resetTurnCounter();
  const seeds = Object.keys(pinned.digests);
  expect(seeds.length).toBeGreaterThan(300);
  return seeds
    .map((seed) => ({ seed, outcome: probeOutcome(Number(seed), undefined, undefined, performance) }))
    .filter(({ seed, outcome }) => outcome.digest !== pinned.digests[seed])
    .map(({ seed, outcome }) => `${seed}: ${outcome.summary}`);
}

describe('samples op: byte identity with the code before its speed work', () => {
  it('gives the pinned outcome for every probe seed', () => {
    expect(differing({})).toEqual([]);
  });

  it('gives the pinned outcome for every probe seed on plain lists (foldAsRuns: false)', () => {
    expect(differing({ foldAsRuns: false })).toEqual([]);
  });
});
