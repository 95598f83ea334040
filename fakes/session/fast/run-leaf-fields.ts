import type { LeafTokenFieldsFor, MergeRules } from '../assembly.ts';
import { SnapshotPrefix } from '../values/turn-tokens.ts';
import { deferAccumulatedIds, deferredWireSample } from './deferred-leaf.ts';
import { promptSource } from './prompt-ids-getter.ts';
import { foldAsRuns, reusingDecoder } from './run-fold.ts';
import { SharedOnes } from './shared-ones.ts';

/**
 * The samples op's default per-token fields (fakes/session/assembly.ts `LeafTokenFields`; switch:
 * `performance: { foldAsRuns: false }` for `plainLeafFields`): records' masks from one shared array
 * per length, each prompt read in place from the node's snapshot when the record's `input_ids` is the
 * chat route's getter (prompt-ids-getter.ts: no copy of the prompt), the fold kept as runs, and the
 * leaf's per-token fields and `accumulated_token_ids` deferred. The same values as the plain lists,
 * guarded by `fakes/session/samples-bytes.test.ts`. Miles' rules come in from compose.ts: the plain
 * fields (a fresh mask, a record's own prompt) where nothing is shared, and the merge rules of the fold.
 */
export function runLeafFields(plainFields: LeafTokenFieldsFor, rules: MergeRules): LeafTokenFieldsFor {
  return (decode) => {
    const plain = plainFields(decode);
    const shared = new SharedOnes(plain.ones);
    const decodeSlice = reusingDecoder(decode);
    return {
      ones: (n) => shared.get(n),
      prompt: (record) => {
        const source = promptSource(record.request);
        return source === null ? plain.prompt(record) : new SnapshotPrefix(source.snapshot, source.length);
      },
      fold: (turns) => {
        const { sample, parts } = foldAsRuns(turns, decodeSlice, rules);
        if (parts === null) sample.loss_mask = shared.own(sample.loss_mask);
        return deferredWireSample(sample, parts);
      },
      setAccumulatedIds: deferAccumulatedIds,
    };
  };
}
