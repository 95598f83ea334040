import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { captureIo } from '../../cli/io.ts';
import { main } from '../../cli/main.ts';
import { EpisodeScriptSchema } from '../../fakes/harbor/episode-schema.ts';
import { type HarborServer, startHarborServer } from '../../fakes/harbor/server.ts';
import { startPolicyServer } from '../../fakes/policy/server.ts';
import { startSessionServer } from '../../fakes/session/server.ts';
import { awaitOutput } from '../helpers/cli-output.ts';

/**
 * Security guarantees of docs/security.md that need servers or whole commands: loopback binding,
 * secrets absent from every output and written file, and instance ids that cannot leave the tasks root.
 */

// Plain alphanumerics and dashes: no escaping (JSON, shell quoting, URL encoding) can hide a leak.
const WANDB_KEY = 'wandbkey-7c1e9f0a2b3d4e5f6a7b8c9d0e1f2a3b';
const ADMIN_SECRET = 'harboradmin-4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f90';
const SECRETS = [WANDB_KEY, ADMIN_SECRET];
const ENV = { WANDB_API_KEY: WANDB_KEY, HARBOR_ADMIN_SECRET: ADMIN_SECRET };
const BIN = fileURLToPath(new URL('../../bin/harness.ts', import.meta.url));

let workdir: string;
beforeAll(async () => {
  workdir = await mkdtemp(join(tmpdir(), 'harness-security-'));
});
afterAll(async () => {
  await rm(workdir, { recursive: true, force: true });
});

async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

/** Every secret found in the text or in any file written under `dir`, as `where: secret` lines. */
async function leaks(text: string, dir: string): Promise<string[]> {
  const found: string[] = [];
  for (const secret of SECRETS) if (text.includes(secret)) found.push(`output: ${secret}`);
  for (const file of await filesUnder(dir)) {
    const content = await readFile(file, 'latin1');
    for (const secret of SECRETS) if (content.includes(secret)) found.push(`${file}: ${secret}`);
  }
  return found;
}

describe('servers bind 127.0.0.1 unless told otherwise', () => {
  it('session server, policy and Harbor mock default to loopback and honour an explicit host', async () => {
    const episodes = [
      EpisodeScriptSchema.parse({ instance_id: 'x', description: 'x', instruction: 'x', turns: [{}] }),
    ];
    const defaults = [
      await startPolicyServer({ mode: 'synthetic' }),
      await startSessionServer({ backendUrl: 'http://127.0.0.1:9' }),
      await startHarborServer({ episodes }),
    ];
    // 127.0.0.2 is loopback too on Linux, so "told otherwise" is testable without leaving the machine.
    const told = [
      await startPolicyServer({ mode: 'synthetic', host: '127.0.0.2' }),
      await startSessionServer({ backendUrl: 'http://127.0.0.1:9', host: '127.0.0.2' }),
      await startHarborServer({ episodes, host: '127.0.0.2' }),
    ];
    try {
      expect(defaults.map((s) => s.host)).toEqual(['127.0.0.1', '127.0.0.1', '127.0.0.1']);
      expect(told.map((s) => s.host)).toEqual(['127.0.0.2', '127.0.0.2', '127.0.0.2']);
      for (const s of defaults) expect(s.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    } finally {
      await Promise.all([...defaults, ...told].map((s) => s.close()));
    }
  });

  it.each(['session-server', 'policy', 'harbor'])(
    'harness serve %s listens on 127.0.0.1 by default',
    async (target) => {
      const controller = new AbortController();
      const io = captureIo({}, { signal: controller.signal });
      const exit = main(['serve', target], io);
      await awaitOutput(io, exit, /^listening /m);
      controller.abort();
      expect(await exit).toBe(0);
      expect(io.out()).toMatch(/^listening http:\/\/127\.0\.0\.1:\d+$/m);
      expect(io.out()).not.toMatch(/0\.0\.0\.0|\[::\]/);
    },
  );
});

describe('secrets never appear in output, reports or printed commands', () => {
  const commands: Array<[string, string[]]> = [
    ['recipe (shell)', ['recipe']],
    ['recipe (json)', ['recipe', '--format', 'json']],
    ['recipe (env)', ['recipe', '--format', 'env']],
    ['recipe diff', ['recipe', 'diff', 'builder', 'builder[--run-id other]']],
    ['surface check of an argv carrying the key', ['surface', 'check', '--', '--wandb-key', WANDB_KEY]],
    ['surface check --json', ['surface', 'check', '--json', '--', '--wandb-key', WANDB_KEY]],
    ['smoke --dry-run', ['smoke', '--dry-run', '--output', 'smoke-out']],
    ['smoke --dry-run --json', ['smoke', '--dry-run', '--json', '--output', 'smoke-out']],
    ['smoke (preconditions fail here)', ['smoke', '--output', 'smoke-run', '--min-free-disk-gib', '0']],
    [
      'replay with JSON and HTML reports',
      [
        'replay',
        '--rollout-batch-size',
        '1',
        '--n-samples-per-prompt',
        '2',
        '--json-file',
        'r.json',
        '--report',
        'r.html',
      ],
    ],
  ];

  it.each(commands)(
    '%s',
    async (_name, argv) => {
      const dir = await mkdtemp(join(workdir, 'cmd-'));
      const io = captureIo(ENV, { cwd: dir });
      await main(argv, io);
      expect(await leaks(io.out() + io.err(), dir)).toEqual([]);
      // The command did run (it wrote something), so the check is not vacuous.
      expect((io.out() + io.err()).length).toBeGreaterThan(0);
    },
    60_000,
  );

  it('the W&B flags are present, redacted, when WANDB_API_KEY is set', async () => {
    const io = captureIo(ENV, { cwd: workdir });
    expect(await main(['recipe', '--format', 'json'], io)).toBe(0);
    const argv = (JSON.parse(io.out()) as { argv: string[] }).argv;
    const at = argv.indexOf('--wandb-key');
    expect(at).toBeGreaterThan(-1);
    expect(argv[at + 1]).toBe('***');
  });

  it.each(['harbor', 'session-server', 'policy'])(
    'harness serve %s, used and stopped, prints no secret',
    async (target) => {
      const controller = new AbortController();
      const io = captureIo(ENV, { signal: controller.signal, cwd: workdir });
      const exit = main(['serve', target], io);
      const [, url] = await awaitOutput(io, exit, /^listening (\S+)$/m);
      expect(url).toBeDefined();
      const flush = await fetch(`${url}/flush`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_SECRET}` },
        body: '{"session_server_instance_id": "x"}',
      });
      expect(flush.status).toBe(target === 'harbor' ? 200 : 404);
      expect(await flush.text()).not.toContain(ADMIN_SECRET);
      controller.abort();
      expect(await exit).toBe(0);
      expect(await leaks(io.out() + io.err(), workdir)).toEqual([]);
    },
  );

  it('the real binary, with the secrets in its environment, prints none of them', async () => {
    const result = await execa(process.execPath, [BIN, 'recipe'], {
      env: ENV,
      cwd: workdir,
      reject: false,
      all: true,
    });
    expect(result.exitCode).toBe(0);
    expect(await leaks(result.all ?? '', workdir)).toEqual([]);
  });
});

describe('instance_id cannot leave the tasks root', () => {
  // A server per test: each asserts on the whole trial list, so none may see another's trials (the tests
  // pass in any order, `--sequence.shuffle`).
  let harbor: HarborServer;
  beforeEach(async () => {
    const pool = EpisodeScriptSchema.parse({
      instance_id: 'pool-one',
      description: 'pool',
      pool: true,
      instruction: 'x',
      turns: [{}],
    });
    harbor = await startHarborServer({ episodes: [pool], adminSecret: ADMIN_SECRET });
  });
  afterEach(async () => {
    await harbor?.close();
  });

  it.each([
    '../etc/passwd',
    '..',
    'a/../../b',
    '/etc/passwd',
    'tasks/../../x',
    '..\\..\\windows',
    '.hidden',
    '-rf',
    'a..b',
    '%2e%2e%2fetc',
    'name\u0000.txt',
    'caf\u00e9',
    '',
    'x'.repeat(201),
  ])('%j is a 400 invalid_instance_id and starts no trial', async (instanceId) => {
    const response = await fetch(`${harbor.url}/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ base_url: 'http://127.0.0.1:9/sessions/s/v1', instance_id: instanceId }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { code: string }).code).toBe('invalid_instance_id');
    expect(harbor.trials()).toEqual([]);
  });

  it('a plain task name is accepted (the checks above are not rejecting everything)', async () => {
    const response = await fetch(`${harbor.url}/run`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ base_url: 'http://127.0.0.1:9/sessions/s/v1', instance_id: 'fix-git.v2_final' }),
    });
    expect(response.status).toBe(200);
    expect(harbor.trials().map((t) => t.instanceId)).toEqual(['fix-git.v2_final']);
  });
});
