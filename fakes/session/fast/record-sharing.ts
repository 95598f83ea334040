import type { RecordMemory } from '../record-memory.ts';
import { takeEqualStored } from './attach-hints.ts';
import { forwardedBodyBytes } from './forwarded-body.ts';
import { installPromptIds, promptIdsFromSnapshot } from './prompt-ids-getter.ts';
import { shareStoredMessages } from './shared-messages.ts';

/**
 * The chat route's records with their memory shared (the server's default; the plain rule is
 * `plainRecordMemory` in record-memory.ts): re-sent messages become the stored objects they equal
 * (shared-messages.ts), `input_ids` a getter over the prompt's snapshot and then the committed node's
 * (prompt-ids-getter.ts), and the forwarded body written from each shared message's cached bytes
 * (forwarded-body.ts). What a record prints and what is forwarded are the same bytes.
 */
export const sharedRecordMemory: RecordMemory = {
  adoptHistory: (messages, attach) => shareStoredMessages(messages, attach, takeEqualStored(messages)),
  setPromptIds: (body, prompt) => installPromptIds(body, prompt, prompt.length),
  forwardedBytes: (body, into) => forwardedBodyBytes(body, into),
  committed: (request, node) => promptIdsFromSnapshot(request, node.tokens, node.completionSpan[0]),
};
