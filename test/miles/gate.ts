import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { describe, expect, it } from 'vitest';
import { DEFAULT_PYTHON, LAUNCHER } from '../../replay/conformance/miles-server.ts';
import { ROLLOUT_DRIVER } from '../../replay/differential/miles-rollout.ts';

/**
 * The `miles` project's gate, like the GPU suite's: Miles' real code on CPU needs a radixark/miles
 * checkout (MILES_ROOT) and a Python with Debian's packages (HARNESS_MILES_PYTHON, default
 * /usr/bin/python3). Where either is missing the suites skip with the reasons printed; with
 * HARNESS_MILES_REQUIRED=1 they fail instead.
 */

export interface MilesGate {
  readonly milesRoot: string;
  readonly python: string;
  /** `code: reason` for each unmet precondition. */
  readonly unmet: readonly string[];
  readonly required: boolean;
}

/**
 * What a suite runs of Miles: its session server (fastapi, uvicorn, …), its rollout path (the
 * differential's driver: tqdm, sympy, …) and/or its torch dump writers.
 */
export interface MilesNeeds {
  readonly sessionServer?: boolean;
  readonly rollout?: boolean;
  readonly torch?: boolean;
  /** The launcher's (and with `rollout`, the rollout driver's) `--tokenizer qwen3` (python3-regex, python3-jinja2, the npm tokenizer file). */
  readonly qwen3?: boolean;
}

export async function milesGate(
  needs: MilesNeeds = { sessionServer: true },
  env: NodeJS.ProcessEnv = process.env,
): Promise<MilesGate> {
  const milesRoot = env.MILES_ROOT ?? '';
  const python = env.HARNESS_MILES_PYTHON ?? DEFAULT_PYTHON;
  const unmet: string[] = [];
  if (milesRoot === '') {
    unmet.push('miles.no_root: MILES_ROOT is not set (a radixark/miles checkout)');
  } else if (!existsSync(join(milesRoot, 'miles', 'rollout', 'session', 'server.py'))) {
    unmet.push(`miles.no_checkout: MILES_ROOT=${milesRoot} is not a radixark/miles checkout`);
  } else if (needs.sessionServer === true) {
    // The launcher's own check: the same module list and the Debian package of each missing one.
    const tokenizer = needs.qwen3 === true ? ['--tokenizer', 'qwen3'] : [];
    const check = await execa(python, [LAUNCHER, '--miles-root', milesRoot, '--preflight', ...tokenizer], {
      reject: false,
      stdin: 'ignore',
    });
    if (check.exitCode !== 0) {
      const reason = `${check.stderr}`.trim() || `${python}: ${check.shortMessage ?? 'cannot run'}`;
      unmet.push(`miles.python: ${reason.replace(/^precondition: /, '')}`);
    }
  }
  if (unmet.length === 0 && needs.rollout === true) {
    // The rollout driver's own check: the recipe's example directory and the Debian package of each missing module.
    const tokenizer = needs.qwen3 === true ? ['--tokenizer', 'qwen3'] : [];
    const check = await execa(
      python,
      [ROLLOUT_DRIVER, '--miles-root', milesRoot, '--preflight', ...tokenizer],
      { reject: false, stdin: 'ignore' },
    );
    if (check.exitCode !== 0) {
      const reason =
        `${check.stderr}`.trim().split('\n').at(-1) || `${python}: ${check.shortMessage ?? 'cannot run'}`;
      unmet.push(`miles.rollout: ${reason.replace(/^precondition: /, '')}`);
    }
  }
  if (needs.torch === true) {
    const torch = await execa(python, ['-c', 'import torch'], { reject: false, stdin: 'ignore' });
    if (torch.exitCode !== 0)
      unmet.push(`miles.torch: ${python} cannot import torch (Debian: apt-get install python3-torch)`);
  }
  return { milesRoot, python, unmet, required: env.HARNESS_MILES_REQUIRED === '1' };
}

/**
 * The gate of a suite that runs the newer Miles tree: MILES_NEXT_ROOT (the tree) and MILES_NEXT_PYTHON (a
 * Python with pydantic 2) in place of MILES_ROOT and HARNESS_MILES_PYTHON; its reasons name them.
 */
export async function newerMilesGate(
  needs: MilesNeeds,
  env: NodeJS.ProcessEnv = process.env,
): Promise<MilesGate> {
  const gate = await milesGate(needs, {
    MILES_ROOT: env.MILES_NEXT_ROOT ?? '',
    HARNESS_MILES_PYTHON: env.MILES_NEXT_PYTHON ?? DEFAULT_PYTHON,
    HARNESS_MILES_REQUIRED: env.HARNESS_MILES_REQUIRED,
  });
  const unmet = gate.unmet.map((u) =>
    u.replace(
      'MILES_ROOT is not set (a radixark/miles checkout)',
      'MILES_NEXT_ROOT is not set (a newer Miles tree)',
    ),
  );
  return { ...gate, unmet };
}

/**
 * A gated suite's announcement: where preconditions are unmet it prints why it skips, and under
 * HARNESS_MILES_REQUIRED=1 registers the one test that fails on them instead of skipping.
 */
export function announceGate(gate: MilesGate, suite: string): void {
  if (gate.unmet.length > 0)
    console.warn(`[skip] ${suite}, unmet preconditions:\n  ${gate.unmet.join('\n  ')}`);
  describe.runIf(gate.required && gate.unmet.length > 0)(`${suite} (HARNESS_MILES_REQUIRED=1)`, () => {
    it('has its preconditions', () => {
      expect(gate.unmet).toEqual([]);
    });
  });
}
