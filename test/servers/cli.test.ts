import { copyFile, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { command as serveCommand } from '../../cli/commands/serve.ts';
import { captureIo } from '../../cli/io.ts';
import { main } from '../../cli/main.ts';
import { createSessionClient } from '../../fakes/session/client.ts';
import { startSessionServer } from '../../fakes/session/server.ts';
import { VECTORS_MILES_PROFILE } from '../../replay/conformance/bundled-vectors.ts';
import { awaitOutput } from '../helpers/cli-output.ts';
import { REPO_ROOT, VECTOR_DIRS, VECTORS_DIR } from './vectors.ts';

// `harness serve` and `harness trace replay` through the dispatcher, with captured io and an abort
// signal standing in for SIGINT/SIGTERM.

const repoRoot = REPO_ROOT;
const vectors = VECTORS_DIR ?? VECTOR_DIRS[0]!;
const trace = (n: string) => join(vectors, `trace-${n}.json`);

/** Starts a long-running command, waits for its `listening <url>` line, and returns a stopper. */
async function serve(argv: string[]) {
  const controller = new AbortController();
  const io = captureIo({}, { signal: controller.signal });
  const exit = main(['serve', ...argv], io);
  const [, url = ''] = await awaitOutput(io, exit, /^listening (\S+)$/m);
  return {
    url,
    io,
    async stop() {
      controller.abort();
      return exit;
    },
  };
}

describe('harness serve', () => {
  it('serve session-server prints its address, serves, and stops cleanly on abort', async () => {
    const server = await serve(['session-server', '--tito-model', 'glm47']);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(server.io.out()).toMatch(
      /^listening http:\/\/127\.0\.0\.1:\d+\nbackend http:\/\/127\.0\.0\.1:\d+\n$/,
    );
    const client = createSessionClient(server.url);
    const id = await client.create();
    expect((await client.chat(id, { messages: [{ role: 'user', content: 'hi' }] })).status).toBe(200);
    expect((await client.get(id)).metadata.max_trim_tokens).toBe(1);
    expect(await server.stop()).toBe(0);
    await expect(fetch(`${server.url}/health`)).rejects.toThrow();
  });

  it('serve session-server --workers N runs N instances, each on its own port, and stops them all', async () => {
    const server = await serve(['session-server', '--workers', '3']);
    // The `backend` line comes after every `listening` line.
    await awaitOutput(server.io, new Promise<number>(() => undefined), /^backend \S+$/m);
    const urls = [...server.io.out().matchAll(/^listening (\S+)$/gm)].map((m) => m[1]!);
    expect(urls).toHaveLength(3);
    expect(new Set(urls.map((u) => new URL(u).port)).size).toBe(3);
    // Each its own instance: its own id, and a session made on one is unknown to another.
    const ids = await Promise.all(
      urls.map(async (u) => (await createSessionClient(u).health()).session_server_instance_id),
    );
    expect(new Set(ids).size).toBe(3);
    const id = await createSessionClient(urls[0]!).create();
    await expect(createSessionClient(urls[1]!).get(id)).rejects.toMatchObject({ status: 404 });
    expect(await server.stop()).toBe(0);
    for (const u of urls) await expect(fetch(`${u}/health`)).rejects.toThrow();
  });

  it('serve policy answers completions and reports unhandled requests', async () => {
    const policy = await serve(['policy', '--completion-words', '4']);
    const answer = await fetch(`${policy.url}/v1/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(answer.status).toBe(200);
    expect((await fetch(`${policy.url}/nope`)).status).toBe(404);
    expect(await policy.stop()).toBe(0);
    expect(policy.io.err()).toMatch(/^unhandled GET http:\/\/127\.0\.0\.1:\d+\/nope \(answered 404\)$/m);
  });

  it.each([
    [['nope'], 'usage.unknown_subcommand'],
    [['session-server', '--port', 'x'], 'usage.invalid_option_value'],
    [['session-server', '--backend', 'ftp://x'], 'usage.invalid_option_value'],
    [['session-server', '--workers', '0'], 'usage.invalid_option_value'],
    [['policy', '--tito-model', 'qwen3'], 'usage.invalid_option_value'],
    [['policy', '--tokenizer', 'glm47'], 'usage.invalid_option_value'],
    [['session-server', '--tokenizer', 'qwen3', '--tito-model', 'glm47'], 'usage.conflicting_options'],
    [['policy', '--bogus'], 'usage.unknown_option'],
  ])('exits 2 for %j with code %s', async (argv, code) => {
    const io = captureIo();
    expect(await main(['serve', ...argv], io)).toBe(2);
    expect(io.err()).not.toBe('');
    await expect(serveCommand.run(argv, captureIo())).rejects.toMatchObject({ code });
  });

  it('prints help with exit 0', async () => {
    const io = captureIo();
    expect(await main(['serve', 'policy', '--help'], io)).toBe(0);
    expect(io.out()).toContain('--script TRACE');
  });
});

describe('harness trace replay', () => {
  it('prints one JSON line per trace in the documented shape', async () => {
    const io = captureIo();
    expect(await main(['trace', 'replay', trace('003'), trace('037'), '--json'], io)).toBe(0);
    const lines = io
      .out()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(2);
    expect(Object.keys(lines[0])).toEqual(['trace', 'turns', 'tree', 'samples', 'empty_reason']);
    expect(lines[0].turns.map((t: { status: number }) => t.status)).toEqual([200, 500, 200, 200, 400, 200]);
    expect(Object.keys(lines[0].samples[0])).toEqual([
      'tokens',
      'loss_mask',
      'response_length',
      'status',
      'reward',
      'metadata',
    ]);
  });

  it('shows the tree and marks trained tokens in the readable view', async () => {
    const io = captureIo();
    expect(await main(['trace', 'replay', trace('003')], io)).toBe(0);
    expect(io.out()).toContain('└─ node 1');
    expect(io.out()).toMatch(/#0 leaf 3 path \[0,1,3\]\s+completed/);
    expect(io.out()).toContain(' [6740 5] ');
  });

  it('--check agrees with the expected files and fails on a wrong one', async () => {
    const io = captureIo();
    expect(await main(['trace', 'replay', trace('000'), trace('017'), '--check', '--json'], io)).toBe(0);
    expect(io.err()).toContain('2/2 agree');
    // A trace next to another trace's expected file must fail the check.
    const dir = await mkdtemp(join(tmpdir(), 'harness-trace-'));
    await copyFile(trace('003'), join(dir, 'mislabelled.json'));
    await copyFile(join(vectors, 'trace-037.expected.json'), join(dir, 'mislabelled.expected.json'));
    const wrong = captureIo();
    const code = await main(['trace', 'replay', join(dir, 'mislabelled.json'), '--check'], wrong);
    await rm(dir, { recursive: true });
    expect(code).toBe(1);
    expect(wrong.err()).toContain('differs from its expected file in turns');
  });

  it('--target replays against a running server whose backend scripts several traces', async () => {
    const policy = await serve(['policy', '--script', trace('005'), '--script', trace('017')]);
    // The expected files are 31f1ca96's (fixtures/conformance/PROVENANCE.md): the target answers as that Miles.
    const session = await startSessionServer({ backendUrl: policy.url, milesProfile: VECTORS_MILES_PROFILE });
    try {
      const io = captureIo();
      expect(
        await main(['trace', 'replay', trace('005'), trace('017'), '--target', session.url, '--check'], io),
      ).toBe(0);
      expect(io.err()).toContain('2/2 agree');
      expect(session.sessionCount()).toBe(0);
    } finally {
      await session.close();
      await policy.stop();
    }
  });

  it('exits 2 for a missing file or a file that is not a trace', async () => {
    const missing = captureIo();
    expect(await main(['trace', 'replay', join(vectors, 'nope.json')], missing)).toBe(2);
    const notTrace = captureIo();
    expect(await main(['trace', 'replay', join(repoRoot, 'package.json')], notTrace)).toBe(2);
    expect(await main(['trace', 'replay'], captureIo())).toBe(2);
  });
});

describe('--tokenizer qwen3 on the CLI', () => {
  it('trace replay on Qwen3 ids: the same tree as on toy ids', async () => {
    const toy = captureIo();
    const qwen3 = captureIo();
    expect(await main(['trace', 'replay', trace('003'), '--json'], toy)).toBe(0);
    expect(await main(['trace', 'replay', trace('003'), '--json', '--tokenizer', 'qwen3'], qwen3)).toBe(0);
    const shape = (out: string) => {
      const result = JSON.parse(out) as {
        tree: { nodes: Array<{ parent: number | null }> };
        samples: unknown[];
      };
      return { parents: result.tree.nodes.map((n) => n.parent), samples: result.samples.length };
    };
    expect(shape(qwen3.out())).toEqual(shape(toy.out()));
  }, 60_000);

  it('replay --tokenizer rejects a name it does not know (exit 2)', async () => {
    const io = captureIo();
    expect(await main(['replay', '--tokenizer', 'glm47'], io)).toBe(2);
    expect(io.err()).toMatch(/--tokenizer must be toy or qwen3/);
  });
});
