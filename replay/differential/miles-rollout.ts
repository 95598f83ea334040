import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { z } from 'zod';
import { HarnessError } from '../../common/errors.ts';
import { pythonJsonLoads } from '../../common/python-json/loads.ts';
import { DEFAULT_SURFACE_PATH } from '../../recipe/drift/load-surface.ts';
import { type SideStep, SideStepSchema } from './side.ts';

/**
 * Miles' own rollout path on CPU: miles-bridge/rollout_driver.py imports radixark/miles from the
 * checkout and runs the recipe's rollout function and what the rollout manager does with its output,
 * against servers the harness started. Its stderr names every replacement (`replaced <name>: <why>`) and
 * every value derived at start (`derived <dest>=<value>: <where>`); it exits 3 for an unmet precondition.
 */

export { ROLLOUT_DRIVER } from '../../miles-bridge/entry-points.ts';

import { ROLLOUT_DRIVER } from '../../miles-bridge/entry-points.ts';

const EXAMPLE_GENERATE = join('examples', 'swe-agent-harbor-docker', 'generate.py');

export interface MilesRolloutRequest {
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly overlays: readonly string[];
  readonly policyUrl: string;
  readonly sessionUrl: string;
  readonly sessionServerInstanceId: string;
  readonly harborUrl: string;
  readonly rolloutIds: readonly number[];
  /**
   * The names Miles' `build_chat_request_kwargs` keeps (SGLang's `ChatCompletionRequest.model_fields`,
   * which Debian lacks): the keys of the sampling params the harness's `/run` body carries.
   */
  readonly chatRequestFields: readonly string[];
  /** Miles' loop draws prompts until enough groups pass, without bound; the driver stops a step past this. */
  readonly refillGuardGroups: number;
  /** With Qwen3's ids: the directory of its tokenizer.json, which Miles' `load_tokenizer` reads (qwen3_mode.py). */
  readonly qwen3TokenizerDir?: string;
}

export interface MilesRolloutResult {
  readonly steps: readonly SideStep[];
  readonly replacements: readonly string[];
  readonly derived: readonly string[];
}

const DriverOutputSchema = z.object({
  replacements: z.array(z.string()),
  derived: z.array(z.string()),
  steps: z.array(SideStepSchema),
});

function precondition(reason: 'no_checkout' | 'python', message: string): HarnessError {
  const code = reason === 'python' ? 'precondition.miles_python' : 'precondition.miles_no_checkout';
  return new HarnessError(code, message, { details: { reason } });
}

/** Refuses a path without the recipe's rollout function before anything is started. */
export function checkMilesRolloutRoot(milesRoot: string): void {
  if (!existsSync(join(milesRoot, EXAMPLE_GENERATE)))
    throw precondition(
      'no_checkout',
      `--miles-root ${milesRoot}: no ${EXAMPLE_GENERATE} (a radixark/miles checkout is required)`,
    );
}

/**
 * The driver's own `--preflight`: the checkout and every Python module, each missing one with its Debian
 * package; with `qwen3TokenizerDir` also what the qwen3 mode needs (python3-regex, python3-jinja2, the file).
 */
export async function preflightMilesRollout(
  milesRoot: string,
  python: string,
  qwen3TokenizerDir?: string,
): Promise<void> {
  checkMilesRolloutRoot(milesRoot);
  const qwen3 =
    qwen3TokenizerDir === undefined ? [] : ['--tokenizer', 'qwen3', '--tokenizer-dir', qwen3TokenizerDir];
  const check = await execa(python, [ROLLOUT_DRIVER, '--miles-root', milesRoot, '--preflight', ...qwen3], {
    reject: false,
    stdin: 'ignore',
  });
  if (check.exitCode === 0) return;
  if ((check as { code?: string }).code === 'ENOENT')
    throw precondition('python', `--python ${python}: not found`);
  const reason = `${check.stderr}`.trim().split('\n').at(-1) ?? '';
  throw precondition('python', reason.replace(/^precondition: /, '') || `${python}: ${check.shortMessage}`);
}

/** Runs the driver to the end and reads its result; Miles raising is an error naming its last lines. */
export async function runMilesRollout(
  milesRoot: string,
  python: string,
  request: MilesRolloutRequest,
  signal: AbortSignal,
): Promise<MilesRolloutResult> {
  const dir = await mkdtemp(join(tmpdir(), 'harness-differential-'));
  try {
    const requestFile = join(dir, 'request.json');
    const outFile = join(dir, 'result.json');
    await writeFile(
      requestFile,
      JSON.stringify({
        argv: request.argv,
        env: request.env,
        surface: DEFAULT_SURFACE_PATH,
        overlays: request.overlays,
        policy_url: request.policyUrl,
        session_url: request.sessionUrl,
        session_server_instance_id: request.sessionServerInstanceId,
        harbor_url: request.harborUrl,
        rollout_ids: request.rolloutIds,
        chat_request_fields: request.chatRequestFields,
        refill_guard_groups: request.refillGuardGroups,
        ...(request.qwen3TokenizerDir === undefined
          ? {}
          : { tokenizer: 'qwen3', tokenizer_dir: request.qwen3TokenizerDir }),
      }),
    );
    // execa's `cleanup` (the default) kills the child if this process exits first; the signal stops it on Ctrl-C.
    const result = await execa(
      python,
      [ROLLOUT_DRIVER, '--miles-root', milesRoot, '--request', requestFile, '--out', outFile],
      {
        reject: false,
        stdin: 'ignore',
        cancelSignal: signal,
        forceKillAfterDelay: 5000,
        env: { PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' },
      },
    );
    const stderr = `${result.stderr}`.split('\n');
    if (result.exitCode === 3) {
      const reason = stderr.find((l) => l.startsWith('precondition: ')) ?? stderr.at(-1) ?? '';
      throw precondition('python', reason.replace(/^precondition: /, ''));
    }
    if (result.exitCode !== 0) {
      throw new HarnessError(
        'differential.miles_failed',
        `Miles' rollout driver exited (${result.exitCode ?? result.signal}):\n${stderr.slice(-25).join('\n')}`,
      );
    }
    const output = DriverOutputSchema.parse(pythonJsonLoads(await readFile(outFile, 'utf8')));
    return { steps: output.steps, replacements: output.replacements, derived: output.derived };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
