import { mergeRules, plainLeafFields } from './assembly.ts';
import { wholeBodyReader } from './chat-body-reader.ts';
import { ChatBodyReuse } from './fast/chat-body-reuse.ts';
import { MessageTrie } from './fast/message-trie.ts';
import { sharedRecordMemory } from './fast/record-sharing.ts';
import { runLeafFields } from './fast/run-leaf-fields.ts';
import { strictKeys } from './matcher.ts';
import type { SessionServerPerformance } from './options.ts';
import { plainRecordMemory, type RecordMemory } from './record-memory.ts';
import type { SamplesOpSpeed } from './samples-op.ts';
import type { SessionSpeed } from './state.ts';

/**
 * The one place the speed machinery (fakes/session/fast/) meets the rules: each rule module declares the
 * interface it works through and holds Miles' plain way as its default (tree.ts `AttachIndex`,
 * chat-body-reader.ts `ChatBodyReader`, record-memory.ts `RecordMemory`, assembly.ts `LeafTokenFields`);
 * this module picks, switch by switch (`SessionServerPerformance`), the fast implementation or the
 * plain one, and hands the fast ones the rules they reuse (the strict matcher's keys, Miles' merge): fast/
 * imports no rule module, types aside. Every fast one answers byte for byte as the plain one
 * (docs/performance.md "Catalogue").
 * The Miles profile's switches are rules and never pass through here.
 */

/** The switches the samples op reads. */
export type SamplesOpPerformance = Pick<SessionServerPerformance, 'foldAsRuns'>;

/** The server's attach index: the trie over the strict matcher's keys (the rule: tree.ts `milesAttachWalk`). */
export const messageTrie = (): MessageTrie => new MessageTrie(strictKeys);

/** Miles' leaf fields, the fold kept as runs (fast/run-leaf-fields.ts). */
export const runFoldLeafFields = runLeafFields(plainLeafFields, mergeRules);

/** How each session is built: the trie over the attach walk, the body reuse over whole parses. */
export function sessionSpeed(performance: SessionServerPerformance = {}): SessionSpeed {
  return {
    attachIndex: () => (performance.indexAttachSearch === false ? null : messageTrie()),
    chatBodyReader: () =>
      performance.reuseChatBodyBytes === false ? wholeBodyReader() : new ChatBodyReuse(),
  };
}

/** How the chat route holds what it records and forwards. */
export function recordMemory(performance: SessionServerPerformance = {}): RecordMemory {
  return performance.shareRecordMemory === false ? plainRecordMemory : sharedRecordMemory;
}

/** How the samples op folds each leaf's per-token fields. */
export function samplesOpSpeed(performance: SamplesOpPerformance = {}): SamplesOpSpeed {
  return { leafFields: performance.foldAsRuns === false ? plainLeafFields : runFoldLeafFields };
}
