import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ShellTerminal } from './terminal.ts';

/**
 * The terminal model against a real tmux read through Harbor's own TmuxSession
 * (scripts/oracles/harbor_tmux_oracle.py): wrapping at 160 columns, scrolling into history, `clear`, C-c,
 * a wrapped command line, and the incremental-output rule. Skipped, with the reason, where Debian's
 * python3, tmux or Harbor's source is missing (CI).
 */

const HARBOR_SRC = process.env.HARBOR_SRC ?? '/work/ext/harbor';
const PYTHON = '/usr/bin/python3';
const missing = [
  existsSync(PYTHON) ? undefined : `${PYTHON} is missing`,
  existsSync('/usr/bin/tmux') ? undefined : 'tmux is missing',
  existsSync(join(HARBOR_SRC, 'src/harbor/agents/terminus_2/tmux_session.py'))
    ? undefined
    : `Harbor's source is not at HARBOR_SRC=${HARBOR_SRC}`,
].filter((r): r is string => r !== undefined);

const PROMPT = 'root@4f3c2b1a0d9e:/app# ';
const LONG = 'a'.repeat(200);
/** Each step: the keystrokes (one per command) and what its last submitted command prints. */
const STEPS: ReadonlyArray<readonly [readonly string[], string]> = [
  [["printf 'x%.0s' {1..170}; echo\n"], 'x'.repeat(170)],
  [['seq 1 60\n'], Array.from({ length: 60 }, (_, i) => String(i + 1)).join('\n')],
  [['clear\n'], ''],
  [['sleep 100', 'C-c'], ''],
  [[`echo ${LONG}\n`], LONG],
  [['\n'], ''],
  [['echo one\n', 'echo two\n'], 'two'],
];

describe.skipIf(missing.length > 0)(
  `the pane against real tmux through Harbor's TmuxSession${missing.length > 0 ? ` (skipped: ${missing.join('; ')})` : ''}`,
  () => {
    it('gives the same incremental output and visible screen after every step', () => {
      const raw = execFileSync(
        PYTHON,
        [fileURLToPath(new URL('../../../scripts/oracles/harbor_tmux_oracle.py', import.meta.url))],
        {
          input: JSON.stringify({ prompt: PROMPT, steps: STEPS.map(([keys]) => keys) }),
          env: { ...process.env, HARBOR_SRC },
          timeout: 90_000,
        },
      );
      const oracle = JSON.parse(raw.toString('utf8')) as {
        initial: string;
        steps: Array<{ incremental: string; visible: string }>;
      };
      const terminal = new ShellTerminal(PROMPT, PROMPT);
      expect(terminal.incrementalOutput()).toBe(oracle.initial);
      STEPS.forEach(([keys, output], i) => {
        // 'echo one' prints 'one' before the batch's last command: the model prints only the last one's.
        const printed = i === STEPS.length - 1 ? undefined : output;
        terminal.runBatch(keys, { output: printed ?? output });
        if (printed === undefined) return;
        expect(terminal.incrementalOutput(), `step ${i} incremental`).toBe(oracle.steps[i]?.incremental);
        expect(terminal.visibleScreen(), `step ${i} visible`).toBe(oracle.steps[i]?.visible);
      });
    }, 120_000);
  },
);
