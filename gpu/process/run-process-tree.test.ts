import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogSink } from './log-sink.ts';
import { isProcessAlive, liveGroupMembers } from './process-group.ts';
import { type CommandSpec, runProcessTree } from './run-process-tree.ts';

// A dummy launcher: it starts a long-running grandchild in the background, reports both pids, and
// waits. With `ignoreTerm` both ignore SIGTERM (the disposition is inherited), so only SIGKILL works.
function dummyTree(options: { ignoreTerm?: boolean; exitAfter?: number } = {}): CommandSpec {
  const script = [
    options.ignoreTerm ? "trap '' TERM" : '',
    'sleep 300 &',
    'echo "grandchild $!"',
    'echo "child $$"',
    'echo "to stderr" >&2',
    options.exitAfter === undefined ? 'wait' : `sleep ${options.exitAfter}; exit 3`,
  ]
    .filter(Boolean)
    .join('\n');
  return { command: 'bash', args: ['-c', script], cwd: tmpdir(), env: { PATH: process.env.PATH ?? '' } };
}

function pidsFrom(lines: string[]): { child: number; grandchild: number } {
  const find = (label: string): number => {
    const line = lines.find((l) => l.startsWith(`${label} `));
    if (!line) throw new Error(`no ${label} pid in ${JSON.stringify(lines)}`);
    return Number(line.split(' ')[1]);
  };
  return { child: find('child'), grandchild: find('grandchild') };
}

/** Collects output lines; `until(n)` resolves when the n-th arrives (from `onLine`, no polling). */
function lineCollector() {
  const lines: string[] = [];
  const waiters: { n: number; resolve: () => void }[] = [];
  const onLine = (line: string) => {
    lines.push(line);
    for (const w of waiters.filter((w) => lines.length >= w.n)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve();
    }
  };
  const until = (n: number) =>
    lines.length >= n ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ n, resolve }));
  return { lines, onLine, until };
}

const leftovers: number[] = [];
afterEach(() => {
  for (const pid of leftovers.splice(0)) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {}
  }
});

describe('runProcessTree', { timeout: 30_000 }, () => {
  it('stops the child and its grandchild with SIGTERM on timeout', async () => {
    const lines: string[] = [];
    const outcome = await runProcessTree(dummyTree(), {
      timeoutMs: 400,
      graceMs: 2_000,
      onLine: (l) => lines.push(l),
      onStart: (pid) => leftovers.push(pid),
    });
    const { child, grandchild } = pidsFrom(lines);
    expect(outcome.kind).toBe('timeout');
    expect(outcome.forced).toBe(false);
    expect(outcome.signal).toBe('SIGTERM');
    expect(isProcessAlive(child)).toBe(false);
    expect(isProcessAlive(grandchild)).toBe(false);
    expect(liveGroupMembers(outcome.pid!)).toEqual([]);
  });

  it('escalates to SIGKILL when the tree ignores SIGTERM', async () => {
    const lines: string[] = [];
    const outcome = await runProcessTree(dummyTree({ ignoreTerm: true }), {
      timeoutMs: 300,
      graceMs: 300,
      onLine: (l) => lines.push(l),
      onStart: (pid) => leftovers.push(pid),
    });
    const { child, grandchild } = pidsFrom(lines);
    expect(outcome.kind).toBe('timeout');
    expect(outcome.forced).toBe(true);
    expect(outcome.signal).toBe('SIGKILL');
    expect(isProcessAlive(child)).toBe(false);
    expect(isProcessAlive(grandchild)).toBe(false);
  });

  it('stops the whole tree when the signal aborts (Ctrl-C)', async () => {
    const { lines, onLine, until } = lineCollector();
    const controller = new AbortController();
    const running = runProcessTree(dummyTree(), {
      timeoutMs: 60_000,
      graceMs: 2_000,
      signal: controller.signal,
      onLine,
      onStart: (pid) => leftovers.push(pid),
    });
    await until(3);
    const { child, grandchild } = pidsFrom(lines);
    expect(isProcessAlive(grandchild)).toBe(true);
    controller.abort(new Error('received SIGINT'));
    const outcome = await running;
    expect(outcome.kind).toBe('aborted');
    expect(isProcessAlive(child)).toBe(false);
    expect(isProcessAlive(grandchild)).toBe(false);
  });

  it('sweeps a grandchild left behind when the launcher fails on its own', async () => {
    const lines: string[] = [];
    const outcome = await runProcessTree(dummyTree({ exitAfter: 0.1 }), {
      timeoutMs: 60_000,
      graceMs: 2_000,
      onLine: (l) => lines.push(l),
      onStart: (pid) => leftovers.push(pid),
    });
    const { grandchild } = pidsFrom(lines);
    expect(outcome).toMatchObject({ kind: 'exited', exitCode: 3 });
    expect(outcome.durationMs).toBeLessThan(10_000);
    expect(isProcessAlive(grandchild)).toBe(false);
  });

  it('takes the group down when the harness itself exits first (a second Ctrl-C exits at once)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smoke-exit-'));
    try {
      const module = new URL('./run-process-tree.ts', import.meta.url).pathname;
      const script = join(dir, 'harness.ts');
      writeFileSync(
        script,
        [
          `import { runProcessTree } from ${JSON.stringify(module)};`,
          'void runProcessTree(',
          `  { command: 'bash', args: ['-c', 'sleep 300 & echo "grandchild $!"; wait'], cwd: '/', env: { PATH: process.env.PATH ?? '' } },`,
          '  { timeoutMs: 60_000, graceMs: 1_000, onLine: (line) => { console.log(line); process.exit(130); } },',
          ');',
        ].join('\n'),
      );
      const run = spawnSync(process.execPath, [script], { encoding: 'utf8', timeout: 20_000 });
      expect(run.status).toBe(130);
      const grandchild = Number(/grandchild (\d+)/.exec(run.stdout)?.[1]);
      expect(grandchild).toBeGreaterThan(0);
      const deadline = Date.now() + 5_000;
      while (isProcessAlive(grandchild) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(isProcessAlive(grandchild)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports a command that cannot start', async () => {
    const outcome = await runProcessTree(
      { command: 'definitely-not-a-command-xyz', args: [], cwd: tmpdir(), env: { PATH: '/nonexistent' } },
      { timeoutMs: 5_000, graceMs: 100, onLine: () => {} },
    );
    expect(outcome.kind).toBe('spawn_failed');
    expect(outcome.spawnError).toBeTruthy();
  });

  it('streams stdout and stderr lines, prefixed, to the terminal and the log file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'smoke-log-'));
    try {
      let terminal = '';
      const sink = createLogSink({
        path: join(dir, 'logs', 'launcher.log'),
        prefix: '[miles]',
        terminal: { write: (c: string) => (terminal += c) },
      });
      const outcome = await runProcessTree(
        {
          command: 'bash',
          args: ['-c', 'echo one; echo two >&2; printf "three"'],
          cwd: dir,
          env: { PATH: process.env.PATH ?? '' },
        },
        { timeoutMs: 10_000, graceMs: 500, onLine: (l) => sink.line(l) },
      );
      await sink.close();
      expect(outcome).toMatchObject({ kind: 'exited', exitCode: 0 });
      const file = readFileSync(sink.path, 'utf8');
      expect(file).toBe(terminal);
      expect(file.split('\n').filter(Boolean).sort()).toEqual([
        '[miles] one',
        '[miles] three',
        '[miles] two',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
