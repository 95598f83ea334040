import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { HarnessError } from '../../common/errors.ts';
import type { TokenizerName } from '../../fakes/tokenizer/tito.ts';

/**
 * Miles' real session server v2, started on CPU by miles-bridge/session_server.py from a checkout
 * (its own modules; only what cannot be imported is replaced, and the tokenizer is the toy). Its stderr
 * names every replacement (`replaced <name>: <why>`); it prints `listening <url>` once bound and exits 3
 * for an unmet precondition (a missing Debian module, with the package that provides it).
 */

import { SESSION_SERVER_LAUNCHER } from '../../miles-bridge/entry-points.ts';

export const LAUNCHER = SESSION_SERVER_LAUNCHER;
export const DEFAULT_PYTHON = '/usr/bin/python3';
const SESSION_SERVER_MODULE = join('miles', 'rollout', 'session', 'server.py');

export interface MilesServerOptions {
  readonly milesRoot: string;
  readonly python: string;
  readonly backendUrl: string;
  /** Trace files whose words the toy tokenizer knows from the start. */
  readonly vocabularyTraces: readonly string[];
  /** The launcher's tokenizer: the toy (default) or Qwen3's real one (`--tokenizer qwen3`). */
  readonly tokenizer?: TokenizerName;
  /** Its `session_server_instance_id` (default: a fresh uuid4, as Miles). */
  readonly instanceId?: string;
}

export interface MilesServer {
  readonly url: string;
  /** The `replaced <name>: <why>` lines the launcher printed. */
  readonly replacements: readonly string[];
  /** The `adapted <what>: <why>` lines: how it met this checkout's shape (miles-bridge/capabilities.py). */
  readonly adaptations: readonly string[];
  close(): Promise<void>;
}

/** An unmet precondition of `harness conformance` (exit 3). */
function preconditionError(reason: 'no_checkout' | 'python', message: string): HarnessError {
  const code = reason === 'python' ? 'precondition.miles_python' : 'precondition.miles_no_checkout';
  return new HarnessError(code, message, { details: { reason } });
}

/** Refuses a path that is not a radixark/miles checkout before anything is started. */
export function checkMilesRoot(milesRoot: string): void {
  if (!existsSync(join(milesRoot, SESSION_SERVER_MODULE))) {
    throw preconditionError(
      'no_checkout',
      `--miles-root ${milesRoot}: no ${SESSION_SERVER_MODULE} (a radixark/miles checkout is required)`,
    );
  }
}

export async function startMilesServer(options: MilesServerOptions): Promise<MilesServer> {
  checkMilesRoot(options.milesRoot);
  const args = [
    LAUNCHER,
    '--miles-root',
    options.milesRoot,
    '--backend',
    options.backendUrl,
    ...options.vocabularyTraces.flatMap((file) => ['--vocabulary-trace', file]),
    ...(options.tokenizer === 'qwen3' ? ['--tokenizer', 'qwen3'] : []),
    ...(options.instanceId === undefined ? [] : ['--instance-id', options.instanceId]),
  ];
  // execa's `cleanup` (the default) kills the child if this process exits first.
  const child = execa(options.python, args, {
    reject: false,
    buffer: false,
    stdin: 'ignore',
    forceKillAfterDelay: 5000,
    env: { PYTHONDONTWRITEBYTECODE: '1', PYTHONUNBUFFERED: '1' },
  });
  const stderr: string[] = [];
  child.stderr?.setEncoding('utf8');
  let pending = '';
  child.stderr?.on('data', (chunk: string) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) stderr.push(line);
  });
  let exited = false;
  void child.then(() => {
    exited = true;
  });
  const close = async () => {
    if (!exited) child.kill('SIGTERM');
    await child;
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout?.setEncoding('utf8');
      child.stdout?.on('data', (chunk: string) => {
        out += chunk;
        const match = /^listening (http:\/\/\S+)$/m.exec(out);
        if (match) resolve(match[1]!);
      });
      child.then((result) => {
        const tail = [...stderr, pending].filter(Boolean).slice(-20).join('\n');
        if (result.exitCode === 3) {
          const reason = stderr.find((l) => l.startsWith('precondition: ')) ?? tail;
          reject(preconditionError('python', reason.replace(/^precondition: /, '')));
        } else if (result.failed && (result as { code?: string }).code === 'ENOENT') {
          reject(preconditionError('python', `--python ${options.python}: not found`));
        } else {
          reject(
            new HarnessError(
              'conformance.miles_failed',
              `Miles' session server exited (code ${result.exitCode ?? result.signal}) before listening:\n${tail}`,
            ),
          );
        }
      });
    });
    return {
      url,
      replacements: stderr.filter((l) => l.startsWith('replaced ')),
      adaptations: stderr.filter((l) => l.startsWith('adapted ')),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
