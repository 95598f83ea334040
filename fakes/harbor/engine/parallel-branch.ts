import type { ParsedCommand } from './parse-result.ts';
import { timeoutPrompt } from './prompts.ts';
import { pyNumberStr } from './python-text.ts';
import { limitOutputLength } from './terminal.ts';

/**
 * The last message of a `concurrent` turn's twin request: a fault injection, not something Terminus 2
 * does. radixark/miles#3258's agent sends two requests into one session at once from parallel tool
 * branches: the same history, the same command, two outcomes ("1 failed: test_add…" and "tests timed
 * out"). The twin plays the second branch with the engine's own Terminus 2 texts: the episode's last
 * command timed out (templates/timeout.txt, as `send_timeout` answers) over the pane read whole
 * (`get_incremental_output`'s `Current Terminal Screen:` read). Before any command was sent, the branch
 * is that read alone. Either way it differs from the main request's last message (`main`), so the two
 * requests part where parallel branches do; nothing random is drawn, so no episode's stream moves.
 */
export function parallelBranchPrompt(
  main: string,
  lastCommand: ParsedCommand | undefined,
  visibleScreen: string,
): string {
  const wholeRead = limitOutputLength(`Current Terminal Screen:\n${visibleScreen}`);
  if (lastCommand === undefined) return wholeRead;
  const timedOut = timeoutPrompt(pyNumberStr(lastCommand.duration), lastCommand.keystrokes, wholeRead);
  // A main prompt that is this very timeout (a `send_timeout` turn read the same screen): the plain read.
  return timedOut === main ? wholeRead : timedOut;
}
