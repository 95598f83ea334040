import { describe, expect, it } from 'vitest';
import { parallelBranchPrompt } from './parallel-branch.ts';
import { pyFloat } from './python-text.ts';

/**
 * The twin's last message of a `concurrent` turn (radixark/miles#3258's parallel branches): the branch
 * where the episode's last command timed out, in Harbor 6c9ba3f0's timeout.txt wording (`Previous
 * command:`, `timed out after {timeout_sec} seconds`, the terminal state last), never the main message.
 */

const SCREEN = 'root@box:/app# pytest -q\n1 failed\nroot@box:/app# ';
const PYTEST = { keystrokes: 'pytest -q\n', duration: pyFloat(5) };

describe('parallelBranchPrompt', () => {
  it('answers the last command with the timeout branch over the pane read whole', () => {
    const branch = parallelBranchPrompt('New Terminal Output:\n1 failed', PYTEST, SCREEN);
    expect(branch.startsWith('Previous command:\npytest -q\n')).toBe(true);
    // Python's str() of a float duration: 5.0.
    expect(branch).toContain('The previous command timed out after 5.0 seconds');
    // The terminal state fills the template's last placeholder (timeout.txt ends `{terminal_state} `).
    expect(branch).toContain(
      `Here is the current state of the terminal:\n\nCurrent Terminal Screen:\n${SCREEN}`,
    );
  });

  it('is the pane read whole before any command was sent', () => {
    expect(parallelBranchPrompt('Task: make the tests pass.', undefined, SCREEN)).toBe(
      `Current Terminal Screen:\n${SCREEN}`,
    );
  });

  it('never repeats the main message: a main timeout prompt gets the plain read', () => {
    const main = parallelBranchPrompt('', PYTEST, SCREEN);
    expect(parallelBranchPrompt(main, PYTEST, SCREEN)).toBe(`Current Terminal Screen:\n${SCREEN}`);
  });
});
