import { chmodSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The fake Miles checkout of fixtures/smoke/fake-miles (see its README). */
const FAKE_MILES_FIXTURE = fileURLToPath(new URL('../../fixtures/smoke/fake-miles/', import.meta.url));

export interface FakeMachineOptions {
  /** What `nvidia-smi` reports: a GPU count, `fail` (a broken driver), or `missing` (not on PATH). */
  readonly gpus?: number | 'fail' | 'missing';
  /** Whether the real `python3` is reachable on PATH. */
  readonly python?: boolean;
  /** Remove these paths (relative to the Miles root) from the fake checkout. */
  readonly removeFromMiles?: readonly string[];
  /** `fake`: pickle-backed torch; `broken`: a torch whose import fails. */
  readonly torch?: 'fake' | 'broken';
  readonly hfCheckpoint?: boolean;
  readonly torchDist?: boolean;
}

export interface FakeMachine {
  readonly root: string;
  readonly bin: string;
  readonly milesRoot: string;
  readonly modelDir: string;
  readonly outputDir: string;
  /** Where the fake `ray` records its calls, one line each. */
  readonly rayCalls: string;
  /** The environment a command on this machine sees. */
  readonly env: Record<string, string>;
  cleanup(): void;
}

function script(path: string, body: string): void {
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
}

/**
 * A temporary machine for precondition and end-to-end tests: fake `nvidia-smi` and `ray` on a PATH of
 * their own, the fake Miles checkout, a model folder, and a `torch` of choice. Nothing touches the real
 * GPUs, Ray or Miles.
 */
export function createFakeMachine(options: FakeMachineOptions = {}): FakeMachine {
  const root = mkdtempSync(join(tmpdir(), 'smoke-machine-'));
  const bin = join(root, 'bin');
  mkdirSync(bin);
  const gpus = options.gpus ?? 8;
  if (gpus === 'fail')
    script(
      join(bin, 'nvidia-smi'),
      'echo "NVIDIA-SMI has failed because it couldn\'t communicate with the NVIDIA driver" >&2\nexit 9',
    );
  else if (gpus !== 'missing')
    script(
      join(bin, 'nvidia-smi'),
      Array.from({ length: gpus }, (_, i) => `echo "${i}, NVIDIA H200, 143771 MiB"`).join('\n'),
    );
  const rayCalls = join(root, 'ray-calls.txt');
  script(join(bin, 'ray'), `echo "ray $*" >> '${rayCalls}'`);

  const milesRoot = join(root, 'miles');
  cpSync(FAKE_MILES_FIXTURE, milesRoot, { recursive: true });
  for (const rel of options.removeFromMiles ?? [])
    rmSync(join(milesRoot, rel), { recursive: true, force: true });
  // The fake torch lives outside the checkout, so removing the checkout leaves it.
  const site = join(root, 'site');
  cpSync(join(FAKE_MILES_FIXTURE, 'fake-site'), site, { recursive: true });
  if (options.torch === 'broken')
    writeFileSync(join(site, 'torch.py'), 'raise ImportError("No module named \'torch\'")\n');

  const modelDir = join(root, 'models');
  const hf = join(modelDir, 'GLM-4.7-Flash');
  if (options.hfCheckpoint ?? true) {
    mkdirSync(hf, { recursive: true });
    writeFileSync(join(hf, 'config.json'), '{}\n');
  }
  if (options.torchDist) {
    mkdirSync(`${hf}_torch_dist`, { recursive: true });
    writeFileSync(join(`${hf}_torch_dist`, 'latest_checkpointed_iteration.txt'), 'release\n');
  }
  const outputDir = join(root, 'out');
  // The real python3 (and sh, sleep) stay reachable unless a test says otherwise.
  const systemPath = (options.python ?? true) ? (process.env.PATH ?? '') : '/nonexistent';
  return {
    root,
    bin,
    milesRoot,
    modelDir,
    outputDir,
    rayCalls,
    env: {
      PATH: [bin, systemPath].join(delimiter),
      PYTHONPATH: site,
      PYTHONDONTWRITEBYTECODE: '1',
      HOME: root,
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}
