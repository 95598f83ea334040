import fc from 'fast-check';
import type { InjectedFault } from './faults.ts';

/**
 * The `--faults` kinds of a fuzz case: every case injects all of them (a campaign must not thin its own
 * mix), and shrinking drops them one at a time, so a failure is written with only the kinds it needs
 * (none, when it fails without any). fast-check's own subarray arbitraries draw random subsets instead.
 */
class DroppableKinds extends fc.Arbitrary<readonly InjectedFault[]> {
  private readonly all: readonly InjectedFault[];

  constructor(all: readonly InjectedFault[]) {
    super();
    this.all = all;
  }

  generate(): fc.Value<readonly InjectedFault[]> {
    return new fc.Value(this.all, undefined);
  }

  canShrinkWithoutContext(value: unknown): value is readonly InjectedFault[] {
    return Array.isArray(value) && value.every((v) => this.all.includes(v as InjectedFault));
  }

  shrink(value: readonly InjectedFault[]): fc.Stream<fc.Value<readonly InjectedFault[]>> {
    return fc.Stream.of(
      ...value.map((_, i) => new fc.Value([...value.slice(0, i), ...value.slice(i + 1)], undefined)),
    );
  }
}

export function droppableKinds(all: readonly InjectedFault[]): fc.Arbitrary<readonly InjectedFault[]> {
  return new DroppableKinds(all);
}
