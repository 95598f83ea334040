import { HistoryReuse } from './fast/history-reuse.ts';
import { splitInputIds } from './fast/input-ids-body.ts';
import { PromptHashes } from './fast/prompt-hashes.ts';
import type { PromptHashing } from './ids-hashes.ts';
import type { BodyBytesReader } from './read-chat-body.ts';

/**
 * The one place the policy's speed machinery (fakes/policy/fast/) meets its rules: the rule modules
 * declare the interfaces (read-chat-body.ts `BodyBytesReader`, ids-hashes.ts `PromptHashing`), and this
 * module plugs in the fast implementations, each answering as the plain way does.
 */

/**
 * Reads the session server's layout from a body's bytes: a session's re-sent history reused
 * (history-reuse.ts), or, for a log that keeps the messages and so needs them all parsed, the ids split
 * off without the reuse (input-ids-body.ts).
 */
export function bodyBytesReader(keepMessages: boolean): BodyBytesReader {
  if (keepMessages)
    return {
      read: (_key, bytes) => {
        const split = splitInputIds(bytes);
        return split === null ? null : { rest: split.rest, inputIds: split.inputIds, summary: null };
      },
    };
  const history = new HistoryReuse();
  return {
    read: (key, bytes) => {
      const reused = history.read(key, bytes);
      return reused === null
        ? null
        : { rest: reused.rest, inputIds: reused.inputIds, summary: reused.messages };
    },
  };
}

/** Each session's prompt hashes, continued turn to turn. */
export function promptHashing(): PromptHashing {
  return new PromptHashes();
}
