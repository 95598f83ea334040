import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { expect, it } from 'vitest';
import { BenchResultSchema } from './result-schema.ts';

// `npm run bench -- --quick --json` prints exactly one JSON object (progress on stderr). This runs a
// very reduced configuration so the keys are checked on every test run without a long benchmark.
const BENCH = fileURLToPath(new URL('./bench.ts', import.meta.url));

it('--quick --json prints one harness-bench/2 object with the documented keys', async () => {
  const run = await execa(
    process.execPath,
    [
      BENCH,
      '--quick',
      '--json',
      ...['--sessions', '2', '--turns', '3', '--tree-sizes', '16,32', '--searches', '50'],
      ...['--replay-steps', '2', '--replay-batch', '1', '--replay-samples', '2'],
      ...['--contexts', '64', '--samples-tree', '2,3,32', '--step', '2,3,200', '--heap-step', '1,2,100'],
      ...['--heap-steps', '3'],
    ],
    { reject: false },
  );
  expect(run.exitCode, run.stderr).toBe(0);
  const lines = run.stdout.trim().split('\n');
  expect(lines).toHaveLength(1);
  const result = BenchResultSchema.parse(JSON.parse(lines[0] as string));
  expect(result.mode).toBe('quick');
  // Three measured rounds pooled.
  expect(result.session_server).toMatchObject({ sessions: 2, turns: 3, rounds: 3, count: 18 });
  for (const key of ['p50_ms', 'p99_ms', 'p50_ratio'] as const)
    expect(result.session_server[key]).toBeGreaterThan(0);
  expect(result.bare_http.p50_ms).toBeGreaterThan(0);
  expect(result.session_server.p50_ratio).toBeCloseTo(
    result.session_server.p50_ms / result.bare_http.p50_ms,
    1,
  );
  // The keys docs/performance.md reads, each from this one run.
  for (const v of [result.two_hop.p50_ms, result.two_hop_json.p50_ms, result.realistic_step.step_ms])
    expect(v).toBeGreaterThan(0);
  expect(result.session_server.p50_ratio_two_hop_json).toBeCloseTo(
    result.session_server.p50_ms / result.two_hop_json.p50_ms,
    1,
  );
  expect(result.session_server.cpu_ratio_two_hop_json).toBeCloseTo(
    result.session_server.cpu_ms_per_request / result.two_hop_json.cpu_ms_per_request,
    1,
  );
  expect(result.chat_contexts.map((c) => c.context_tokens)).toEqual([64]);
  expect(result.samples_op).toMatchObject({ nodes: 6, leaves: 2, tokens_per_leaf: 96 });
  expect(result.realistic_step).toMatchObject({ rollouts: 2, turns: 3, layout: 'processes' });
  // The fakes' peak RSS is their two processes' peaks; each process did some of the step's work.
  const { session_server: session, policy, client } = result.realistic_step;
  expect(result.realistic_step.peak_rss_mb).toBeCloseTo(session.peak_rss_mb + policy.peak_rss_mb, 1);
  for (const usage of [session, policy, client]) {
    expect(usage.cpu_ms).toBeGreaterThan(0);
    expect(usage.peak_rss_mb).toBeGreaterThan(0);
  }
  expect(result.realistic_step.step_cpu_ms).toBeGreaterThanOrEqual(
    session.cpu_ms + policy.cpu_ms + client.cpu_ms - 1,
  );
  const single = result.realistic_step.single_process;
  expect(single.step_ms).toBeGreaterThan(0);
  expect(single.step_ratio_two_hop_json).toBeCloseTo(single.step_ms / single.two_hop_json_step_ms, 1);
  // The step against baseline (c), and the ratios' arithmetic.
  expect(result.realistic_step.two_hop_json_step_ms).toBeGreaterThan(0);
  expect(result.realistic_step.step_ratio_two_hop_json).toBeCloseTo(
    result.realistic_step.step_ms / result.realistic_step.two_hop_json_step_ms,
    1,
  );
  expect(result.realistic_step.cpu_ratio_two_hop_json).toBeCloseTo(
    result.realistic_step.step_cpu_ms / result.realistic_step.two_hop_json_step_cpu_ms,
    1,
  );
  expect(result.steps.heap_mb_after_step).toHaveLength(3);
  expect(result.steps.heap_growth_mb).toBeCloseTo(
    result.steps.heap_mb_after_step[2]! - result.steps.heap_mb_after_step[0]!,
    5,
  );
  expect(result.attach_point.sizes.map((s) => s.nodes)).toEqual([16, 32]);
  expect(result.replay.available).toBe(true);
  if (result.replay.available) {
    expect(result.replay.default_step.rollouts).toBe(2);
    const heap = result.replay.consecutive?.heap_mb_after_step ?? [];
    expect(heap).toHaveLength(2);
    expect(result.replay.consecutive?.heap_growth_mb).toBeCloseTo(heap[1]! - heap[0]!, 5);
  }
  expect(result.npm_test).toEqual({ ran: false, reason: 'skipped in --quick' });
  expect(run.stderr).toMatch(/^bench: chat: 2 sessions x 3 turns/m);
  // A safety net, not a speed bound: about 25 CPU-seconds over a dozen processes, which a shared
  // 2-core machine stretches well past a minute of wall time.
}, 240_000);

it('refuses a bad option with exit 2', async () => {
  const run = await execa(process.execPath, [BENCH, '--tree-sizes', '0,5000'], { reject: false });
  expect(run.exitCode).toBe(2);
  expect(run.stdout).toBe('');
}, 30_000);
