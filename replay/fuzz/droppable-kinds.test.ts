import fc from 'fast-check';
import { expect, it } from 'vitest';
import { droppableKinds } from './droppable-kinds.ts';
import { injectedFaults } from './faults.ts';

const ALL = injectedFaults('concurrent_requests,upstream_abort,length_abort,rollback_then_longer:0.3', 'toy');

it('injects every kind in every case', () => {
  fc.assert(fc.property(droppableKinds(ALL), (kinds) => kinds === ALL));
});

it('shrinks a failure to exactly the kinds it needs, none when it needs none', () => {
  for (const needed of [[], ['length_abort'], ['concurrent_requests', 'rollback_then_longer']]) {
    const details = fc.check(
      fc.property(fc.integer(), droppableKinds(ALL), (_n, kinds) =>
        needed.some((k) => !kinds.some((f) => f.kind === k)),
      ),
      { seed: 7 },
    );
    expect(details.counterexample?.[1].map((f) => f.kind)).toEqual(needed);
  }
});
