import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { z } from 'zod';
import { parseScriptFlags, valueFlag } from '../../common/cli-flags.ts';
import { machineInfo } from './machine.ts';
import { NpmTestResultSchema } from './result-schema.ts';

/**
 * Benchmark 4: `npm test` (typecheck, lint, every vitest project) as a child process: its wall time and
 * the CPU time of the whole process tree (user + sys of every process it waited for), since on a shared
 * or small machine the CPU-seconds say what the suite costs better than the wall. Node has no call for
 * its children's rusage, so python3 starts the command and reads getrusage(RUSAGE_CHILDREN) after it;
 * without python3 the command runs directly and the CPU fields are null.
 * `node scripts/bench/npm-test-bench.ts [--out FILE]` runs it alone and prints the JSON object (format
 * harness-bench-npm-test/1, with the machine and its load average); `--out` also writes it
 * (benchmarks/results/npm-test.json is what docs/performance.md's budget figure is generated from).
 */

export interface NpmTestResult {
  readonly ran: true;
  readonly wall_s: number;
  /** CPU of `npm test` and every process under it; null where it could not be read. */
  readonly user_s: number | null;
  readonly sys_s: number | null;
  readonly cpu_s: number | null;
  readonly exit_code: number;
  /** The summary line the vitest reporter prints (`vitest: N passed, …`), when found. */
  readonly summary: string | null;
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
/** Starts the line that carries the children's CPU seconds in the combined output. */
export const MARK = 'npm-test-bench rusage:';
const RUSAGE = [
  'import resource, subprocess, sys',
  'code = subprocess.run(sys.argv[1:]).returncode',
  'r = resource.getrusage(resource.RUSAGE_CHILDREN)',
  `print('${MARK}', r.ru_utime, r.ru_stime, flush=True)`,
  'sys.exit(code if code >= 0 else 128 - code)',
].join('\n');

/** The children's user and system seconds from the last mark line, or null. */
export function childTimes(log: string): { user: number; sys: number } | null {
  const lines = [...log.matchAll(new RegExp(`^${MARK} ([\\d.e+-]+) ([\\d.e+-]+)$`, 'gm'))];
  const last = lines.at(-1);
  return last === undefined ? null : { user: Number(last[1]), sys: Number(last[2]) };
}

/** Runs `command` under python3's rusage reader (or alone, without python3); output combined. */
export async function runWithChildTimes(
  command: string,
  args: readonly string[],
  cwd: string,
): Promise<{ exitCode: number; all: string; times: { user: number; sys: number } | null }> {
  const wrapped = await execa('python3', ['-c', RUSAGE, command, ...args], { cwd, reject: false, all: true });
  const run =
    wrapped.code === 'ENOENT' ? await execa(command, args, { cwd, reject: false, all: true }) : wrapped;
  const all = run.all ?? '';
  return { exitCode: run.exitCode ?? -1, all, times: childTimes(all) };
}

const tenth = (v: number) => Math.round(v * 10) / 10;

export async function benchNpmTest(): Promise<NpmTestResult> {
  const started = performance.now();
  const run = await runWithChildTimes('npm', ['test'], ROOT);
  const wallS = (performance.now() - started) / 1000;
  const summary = run.all.match(/^vitest: .*$/m)?.[0] ?? null;
  const { times } = run;
  return {
    ran: true,
    wall_s: tenth(wallS),
    user_s: times === null ? null : tenth(times.user),
    sys_s: times === null ? null : tenth(times.sys),
    cpu_s: times === null ? null : tenth(times.user + times.sys),
    exit_code: run.exitCode,
    summary,
  };
}

const SPEC = {
  command: 'npm-test-bench',
  invocation: 'node scripts/bench/npm-test-bench.ts',
  flags: { out: valueFlag('FILE', z.string().min(1).optional(), 'also write the result here') },
  about: '`npm test` timed: wall time and the CPU-seconds of its whole process tree.',
};

async function main(): Promise<number> {
  const values = parseScriptFlags(process.argv.slice(2), SPEC, process);
  if (typeof values === 'number') return values;
  const startedAt = new Date().toISOString();
  const machine = await machineInfo();
  const { ran: _ran, ...run } = await benchNpmTest();
  const result = NpmTestResultSchema.parse({
    format: 'harness-bench-npm-test/1',
    started_at: startedAt,
    machine,
    ...run,
  });
  const text = `${JSON.stringify(result, null, 2)}\n`;
  if (values.out !== undefined) await writeFile(values.out, text);
  process.stdout.write(text);
  return 0;
}

if (import.meta.main) process.exitCode = await main();
