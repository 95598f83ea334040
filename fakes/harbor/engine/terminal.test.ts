import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fillerText, findNewContent, limitOutputLength, ShellTerminal } from './terminal.ts';
import { PANE_HEIGHT } from './tmux-pane.ts';
import { countWords } from './token-estimate.ts';

describe('fillerText', () => {
  it('has exactly the requested number of words, ten per line', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 3000 }), fc.integer({ min: 0, max: 99 }), (n, seed) => {
        const text = fillerText(n, seed);
        return countWords(text) === n && text.split('\n').every((line) => countWords(line) <= 10);
      }),
    );
  });

  it('keeps 2000 words under the 10,000-byte observation cap', () => {
    expect(Buffer.byteLength(`New Terminal Output:\n${fillerText(2000, 99)}`)).toBeLessThan(10_000);
  });
});

describe('limitOutputLength', () => {
  it('keeps short output and cuts long output to first/last 5000 bytes around a marker', () => {
    expect(limitOutputLength('abc')).toBe('abc');
    const long = `${'a'.repeat(6000)}${'b'.repeat(6000)}`;
    expect(limitOutputLength(long)).toBe(
      `${'a'.repeat(5000)}\n[... output limited to 10000 bytes; 2000 interior bytes omitted ...]\n${'b'.repeat(5000)}`,
    );
  });

  it('never splits a multi-byte character and never grows past the cap plus the marker', () => {
    fc.assert(
      // Text without U+FFFD of its own, so a U+FFFD in the result can only be a split character (a text's
      // own U+FFFD is kept: limit-output.oracle.test.ts).
      fc.property(
        fc.string({ unit: 'grapheme', minLength: 0, maxLength: 4000 }).filter((s) => !s.includes('\uFFFD')),
        (s) => {
          const out = limitOutputLength(s, 100);
          return !out.includes('\uFFFD') && Buffer.byteLength(out) <= 100 + 90;
        },
      ),
    );
  });
});

describe('the shell in the tmux pane', () => {
  const PROMPT = 'root@0123456789ab:/app# ';

  it('echoes a command on the prompt line, prints its output, then a new prompt; capture trims and pads rows', () => {
    const terminal = new ShellTerminal(PROMPT, PROMPT);
    expect(terminal.incrementalOutput()).toBe(
      `Current Terminal Screen:\nroot@0123456789ab:/app#\n${'\n'.repeat(39)}`,
    );
    terminal.runBatch(['cat hello.txt\n'], { output: 'Hello, world!' });
    expect(terminal.incrementalOutput()).toBe(
      `New Terminal Output:\n${PROMPT}cat hello.txt\nHello, world!\nroot@0123456789ab:/app#\n${'\n'.repeat(37)}`,
    );
  });

  it("repeats the old buffer's last line: the cut index comes from the old buffer (tmux_session.py L700)", () => {
    expect(findNewContent('a\nb\n\n', 'a\nb\nc\n')).toBe('\nb\nc\n');
    expect(findNewContent('xyz', 'zz')).toBeUndefined();
    expect(findNewContent('  p  ', 'q p r')).toBe('p r');
  });

  it('falls back to the visible screen after a clear (the old buffer is gone)', () => {
    const terminal = new ShellTerminal(PROMPT, PROMPT);
    terminal.incrementalOutput();
    terminal.runBatch(['ls\n'], { output: 'a b' });
    terminal.incrementalOutput();
    terminal.runBatch(['clear\n'], { output: '' });
    expect(terminal.incrementalOutput()).toBe(
      `Current Terminal Screen:\nroot@0123456789ab:/app#\n${'\n'.repeat(39)}`,
    );
  });

  it('wraps at 160 columns and scrolls into history; the visible screen stays 40 rows', () => {
    const terminal = new ShellTerminal(PROMPT, PROMPT);
    terminal.runBatch(['seq\n'], {
      output: `${'x'.repeat(170)}\n${Array.from({ length: 60 }, (_, i) => `line ${i}`).join('\n')}`,
    });
    const visible = terminal.visibleScreen().split('\n');
    expect(visible).toHaveLength(PANE_HEIGHT + 1);
    expect(visible.at(-2)).toBe('root@0123456789ab:/app#');
    const entire = terminal.pane.captureEntire().split('\n');
    expect(entire[1]).toBe('x'.repeat(160));
    expect(entire[2]).toBe('x'.repeat(10));
  });

  it('holds back the output of a command that outlives its wait until the next keystrokes', () => {
    const terminal = new ShellTerminal(PROMPT, PROMPT);
    terminal.incrementalOutput();
    terminal.runBatch(['sleep 5; echo done\n'], { output: 'done', outlivesWait: true });
    expect(terminal.incrementalOutput()).toContain('sleep 5; echo done\n\n');
    expect(terminal.visibleScreen()).not.toContain('done\nroot@');
    terminal.runBatch([''], { output: '' });
    expect(terminal.visibleScreen()).toContain('echo done\ndone\nroot@0123456789ab:/app#\n');
  });

  it('prints the output of a batch that submits nothing on a new line, then a prompt', () => {
    const terminal = new ShellTerminal(PROMPT, PROMPT);
    terminal.runBatch([], { output: 'progress 50%' });
    expect(
      terminal.visibleScreen().startsWith(`${PROMPT.trimEnd()}\nprogress 50%\n${PROMPT.trimEnd()}\n`),
    ).toBe(true);
  });

  it('interrupts with C-c and treats other key names as keys, not text', () => {
    const terminal = new ShellTerminal(PROMPT, PROMPT);
    terminal.runBatch(['sleep 100', 'C-c', 'Escape'], { output: '' });
    expect(terminal.visibleScreen().startsWith(`${PROMPT}sleep 100^C\nroot@0123456789ab:/app#\n`)).toBe(true);
  });
});
