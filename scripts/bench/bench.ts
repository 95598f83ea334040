import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { parseScriptFlags, switchFlag, valueFlag } from '../../common/cli-flags.ts';
import { benchAttachPoint, DEFAULT_TREE_SIZES } from './attach-bench.ts';
import { benchChat } from './chat-bench.ts';
import { machineInfo } from './machine.ts';
import { benchNpmTest } from './npm-test-bench.ts';
import { benchRealistic } from './realistic-bench.ts';
import { benchReplay } from './replay-bench.ts';
import { type BenchResult, BenchResultSchema } from './result-schema.ts';
import { benchSamplesOp, DEFAULT_SAMPLES_BENCH } from './samples-bench.ts';

/**
 * `npm run bench`: the harness's benchmarks (docs: benchmarks/README.md).
 *   1. chat latency of the fake session server vs a bare one-hop server, a bare two-hop proxy and a
 *      two-hop that parses and writes JSON at each hop, same run; then at 1k/4k/16k/32k-token contexts
 *   2. attach-point search cost against tree size, up to the 1024-node cap
 *   3. the samples op on a 1024-node tree of 32k-token chains
 *   4. a realistic step (built-in profile: 32 rollouts, ~50 turns, contexts to 32k): wall time, peak
 *      RSS; then the live heap after each of 20 steps
 *   5. `harness replay`: one default step (wall time, peak RSS), then several steps (memory per step)
 *   6. the wall time of `npm test` (full runs only)
 * A full run writes benchmarks/results/latest.json. `--quick` is a reduced run; `--json` prints exactly
 * one JSON object (format harness-bench/2) on stdout; progress always goes to stderr.
 */

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const LATEST = resolve(ROOT, 'benchmarks/results/latest.json');

const Count = z.coerce.number().int().positive();
/** `A,B,C`: three positive integers. */
const TripleSchema = z
  .string()
  .transform((s) => s.split(',').map(Number))
  .pipe(z.tuple([z.number().int().positive(), z.number().int().positive(), z.number().int().positive()]));
/** `A,B,...`: positive integers up to `max`. */
const listOf = (max: number) =>
  z
    .string()
    .transform((s) => s.split(',').map(Number))
    .pipe(z.array(z.number().int().min(1).max(max)).min(1));

const FLAGS = {
  quick: switchFlag(
    'reduced run (16 sessions x 20 turns, contexts 1k/4k, a 256-node samples tree,\nan 8 x 20 x 8k step, 5 heap steps, 3 replay steps, no npm test), nothing written',
  ),
  json: switchFlag('print exactly one JSON object on stdout (progress goes to stderr)'),
  out: valueFlag(
    'FILE',
    z.string().min(1).optional(),
    'also write the result here (full runs default to benchmarks/results/latest.json)',
  ),
  sessions: valueFlag('N', Count.optional(), 'chat benchmark sessions [full 32, quick 16]'),
  turns: valueFlag('N', Count.optional(), 'chat benchmark turns per session [full 50, quick 20]'),
  'tree-sizes': valueFlag(
    'A,B,...',
    listOf(1024).optional(),
    'attach-point tree sizes in nodes, each at most 1024 [16,64,256,1024]',
  ),
  searches: valueFlag(
    'N',
    Count.optional(),
    'attach-point searches per size and repeat [full 20000, quick 5000]',
  ),
  'replay-steps': valueFlag(
    'K',
    z.coerce.number().int().min(0).optional(),
    'steps of the replay memory run, 0 to skip it [full 20, quick 3]',
  ),
  'replay-batch': valueFlag('N', Count.optional(), "replay --rollout-batch-size [the recipe's 4]"),
  'replay-samples': valueFlag('M', Count.optional(), "replay --n-samples-per-prompt [the recipe's 8]"),
  contexts: valueFlag(
    'A,B,...',
    listOf(65_536).optional(),
    'chat context sizes in tokens [full 1024,4096,16384,32768, quick 1024,4096]',
  ),
  'samples-tree': valueFlag(
    'C,T,K',
    TripleSchema.optional(),
    'samples op tree: C chains of T turns of K tokens [full 64,16,2048, quick 16,16,2048]',
  ),
  step: valueFlag(
    'R,T,C',
    TripleSchema.optional(),
    'realistic step: R rollouts, T turns, contexts to C tokens [full 32,50,32768, quick 8,20,8192]',
  ),
  'heap-step': valueFlag(
    'R,T,C',
    TripleSchema.optional(),
    'the step profile of the live-heap run [full 8,25,8192, quick 4,10,4096]',
  ),
  'heap-steps': valueFlag('N', Count.optional(), 'steps of the live-heap run [full 20, quick 5]'),
  'no-npm-test': switchFlag('skip the npm test timing in a full run'),
};

const SPEC = {
  command: 'bench',
  invocation: 'npm run bench --',
  flags: FLAGS,
  about: "The harness's benchmarks (benchmarks/README.md); progress on stderr.",
};

async function run(argv: readonly string[]): Promise<number> {
  const o = parseScriptFlags(argv, SPEC, process);
  if (typeof o === 'number') return o;
  const quick = o.quick;
  const progress = (line: string) => process.stderr.write(`bench: ${line}\n`);
  const startedAt = new Date();
  const started = performance.now();
  const machine = await machineInfo();

  const sessions = o.sessions ?? (quick ? 16 : 32);
  const turns = o.turns ?? (quick ? 20 : 50);
  const contexts = o.contexts ?? (quick ? [1024, 4096] : [1024, 4096, 16_384, 32_768]);
  progress(
    `chat: ${sessions} sessions x ${turns} turns: fake session server, bare one-hop, two-hop, two-hop with JSON; then contexts ${contexts.join(', ')}`,
  );
  const chat = await benchChat({
    sessions,
    turns,
    contexts,
    contextSessions: quick ? 4 : 8,
    contextTurns: quick ? 4 : 6,
  });

  const tree = o.samples_tree;
  const samplesOptions =
    tree !== undefined
      ? {
          ...DEFAULT_SAMPLES_BENCH,
          chains: tree[0],
          turns: tree[1],
          tokensPerTurn: tree[2],
          repeats: quick ? 1 : 3,
        }
      : quick
        ? { ...DEFAULT_SAMPLES_BENCH, chains: 16, turns: 16, repeats: 1 }
        : DEFAULT_SAMPLES_BENCH;
  progress(
    `samples op: ${samplesOptions.chains * samplesOptions.turns}-node tree of ${samplesOptions.turns * samplesOptions.tokensPerTurn}-token chains`,
  );
  const samplesOp = benchSamplesOp(samplesOptions);

  const profile = (t: readonly [number, number, number]) => ({
    rollouts: t[0],
    turns: t[1],
    contextTokens: t[2],
  });
  const step = profile(o.step ?? (quick ? [8, 20, 8192] : [32, 50, 32_768]));
  const heapProfile = profile(o.heap_step ?? (quick ? [4, 10, 4096] : [8, 25, 8192]));
  const heapSteps = o.heap_steps ?? (quick ? 5 : 20);
  progress(
    `realistic step: ${step.rollouts} rollouts x ${step.turns} turns to ${step.contextTokens} tokens; then ${heapSteps} steps of ${heapProfile.rollouts} x ${heapProfile.turns} to ${heapProfile.contextTokens} for the heap`,
  );
  const realistic = await benchRealistic(step, heapProfile, heapSteps);

  const sizes = o.tree_sizes ?? [...DEFAULT_TREE_SIZES];
  const searches = o.searches ?? (quick ? 5_000 : 20_000);
  progress(`attach point: trees of ${sizes.join(', ')} nodes, ${searches} searches each`);
  const attach = benchAttachPoint(sizes, searches);

  const replaySteps = o.replay_steps ?? (quick ? 3 : 20);
  progress(`replay: one default step, then ${replaySteps} steps in one run`);
  const replay = await benchReplay({
    consecutiveSteps: replaySteps,
    ...(o.replay_batch === undefined ? {} : { rolloutBatchSize: o.replay_batch }),
    ...(o.replay_samples === undefined ? {} : { nSamplesPerPrompt: o.replay_samples }),
  });

  let npmTest: BenchResult['npm_test'];
  if (quick || o.no_npm_test) {
    npmTest = { ran: false, reason: quick ? 'skipped in --quick' : 'skipped (--no-npm-test)' };
  } else {
    progress('npm test (typecheck, lint, every vitest project)');
    npmTest = await benchNpmTest();
  }

  const result = BenchResultSchema.parse({
    format: 'harness-bench/2',
    mode: quick ? 'quick' : 'full',
    started_at: startedAt.toISOString(),
    duration_s: Math.round((performance.now() - started) / 100) / 10,
    machine,
    session_server: chat.session_server,
    bare_http: chat.bare_http,
    two_hop: chat.two_hop,
    two_hop_json: chat.two_hop_json,
    chat_contexts: chat.contexts,
    samples_op: samplesOp,
    realistic_step: realistic.realistic_step,
    steps: realistic.steps,
    attach_point: attach,
    replay,
    npm_test: npmTest,
  });

  const out = o.out === undefined ? (quick ? undefined : LATEST) : resolve(process.cwd(), o.out);
  if (out !== undefined) {
    await mkdir(dirname(out), { recursive: true });
    await writeFile(out, `${JSON.stringify(result, null, 2)}\n`);
    progress(`wrote ${out}`);
  }
  process.stdout.write(o.json ? `${JSON.stringify(result)}\n` : summary(result));
  return 0;
}

function summary(r: BenchResult): string {
  const s = r.session_server;
  const b = r.bare_http;
  const lines = [
    `benchmarks (${r.mode}) on ${r.machine.nproc} CPUs, ${r.machine.cpu_model}, ${r.machine.memory_gib} GiB, node ${r.machine.node}, load ${r.machine.load_average_1m}`,
    '',
    `1. chat, ${s.sessions} sessions x ${s.turns} turns (closed loop)`,
    `   fake session server + fake policy: p50 ${s.p50_ms} ms  p99 ${s.p99_ms} ms  ${s.throughput_rps} req/s`,
    `   bare node:http, canned completion: p50 ${b.p50_ms} ms  p99 ${b.p99_ms} ms  ${b.throughput_rps} req/s`,
    `   bare two-hop proxy, same bodies:   p50 ${r.two_hop.p50_ms} ms  p99 ${r.two_hop.p99_ms} ms`,
    `   two-hop with JSON at each hop:     p50 ${r.two_hop_json.p50_ms} ms  p99 ${r.two_hop_json.p99_ms} ms`,
    `   fake / bare: p50 x${s.p50_ratio}  p99 x${s.p99_ratio}  throughput x${s.throughput_ratio}`,
    `   fake / two-hop: p50 x${s.p50_ratio_two_hop}   fake / two-hop JSON: p50 x${s.p50_ratio_two_hop_json}`,
    `   CPU per call: fake ${s.cpu_ms_per_request} ms, two-hop JSON ${r.two_hop_json.cpu_ms_per_request} ms (x${s.cpu_ratio_two_hop_json})`,
    ...r.chat_contexts.map(
      (c) =>
        `   context ${String(c.context_tokens).padStart(6)} tokens: fake p50 ${c.session_server_p50_ms} ms, two-hop JSON ${c.two_hop_json_p50_ms} ms (x${c.p50_ratio_two_hop_json}), bare ${c.bare_http_p50_ms} ms; CPU per call x${c.cpu_ratio_two_hop_json}`,
    ),
    '',
    `samples op, ${r.samples_op.nodes} nodes, ${r.samples_op.leaves} leaves of ${r.samples_op.tokens_per_leaf} tokens (${r.samples_op.reply_mb} MB reply)`,
    `   server side ${r.samples_op.op_ms} ms wall, ${r.samples_op.op_cpu_ms} ms CPU (collect ${r.samples_op.collect_ms}, encode ${r.samples_op.encode_ms}); client decode ${r.samples_op.decode_ms} ms`,
    `   first op (a server's first request: cold code, empty pool) ${r.samples_op.first_op_ms} ms wall, ${r.samples_op.first_op_cpu_ms} ms CPU`,
    `   CPU: collect ${r.samples_op.collect_cpu_ms} ms, encode ${r.samples_op.encode_cpu_ms} ms, decode ${r.samples_op.decode_cpu_ms} ms`,
    '',
    `realistic step, ${r.realistic_step.rollouts} rollouts x ${r.realistic_step.turns} turns to ${r.realistic_step.max_sample_tokens} tokens (policy, session server, client each a process): ${r.realistic_step.step_ms} ms (${r.realistic_step.step_cpu_ms} ms CPU), fakes' peak RSS ${r.realistic_step.peak_rss_mb} MB; two-hop JSON baseline ${r.realistic_step.two_hop_json_step_ms} ms (${r.realistic_step.two_hop_json_step_cpu_ms} ms CPU): x${r.realistic_step.step_ratio_two_hop_json} wall, x${r.realistic_step.cpu_ratio_two_hop_json} CPU`,
    `   CPU by process: session server ${r.realistic_step.session_server.cpu_ms} ms, policy ${r.realistic_step.policy.cpu_ms} ms, client ${r.realistic_step.client.cpu_ms} ms; peak RSS ${r.realistic_step.session_server.peak_rss_mb} / ${r.realistic_step.policy.peak_rss_mb} / ${r.realistic_step.client.peak_rss_mb} MB`,
    `   all in one process: ${r.realistic_step.single_process.step_ms} ms (${r.realistic_step.single_process.step_cpu_ms} ms CPU), peak RSS ${r.realistic_step.single_process.peak_rss_mb} MB; two-hop JSON ${r.realistic_step.single_process.two_hop_json_step_ms} ms: x${r.realistic_step.single_process.step_ratio_two_hop_json} wall, x${r.realistic_step.single_process.cpu_ratio_two_hop_json} CPU`,
    `   ${r.steps.steps} steps of ${r.steps.rollouts} x ${r.steps.turns} to ${r.steps.context_tokens}: live heap [${r.steps.heap_mb_after_step.join(', ')}] MB, growth ${r.steps.heap_growth_mb} MB`,
    '',
    `2. attach-point search (${r.attach_point.request_messages}-message request)`,
    ...r.attach_point.sizes.map(
      (z) => `   ${String(z.nodes).padStart(5)} nodes: ${z.ns_per_search} ns per search`,
    ),
    `   largest / smallest: x${r.attach_point.ratio_largest_smallest}`,
    '',
    '3. harness replay',
  ];
  if (r.replay.available) {
    const d = r.replay.default_step;
    lines.push(
      `   one default step (${d.rollouts} rollouts): ${d.step_ms} ms step, ${d.wall_ms} ms wall, peak RSS ${d.peak_rss_mb} MB`,
    );
    const c = r.replay.consecutive;
    if (c !== null) {
      lines.push(
        `   ${c.steps} steps in a row: step ms [${c.step_ms.join(', ')}]`,
        `   live heap after each step (MB, after GC): [${c.heap_mb_after_step.join(', ')}]: ${c.heap_growth_mb} MB over the run, ${c.heap_growth_per_step_mb} MB per step`,
        `   after the run: ${c.retained_after_run_mb ?? '?'} MB more live heap than before it; peak RSS ${c.peak_rss_mb} MB`,
      );
    }
  } else lines.push(`   not available: ${r.replay.reason}`);
  lines.push('', '4. npm test');
  lines.push(
    r.npm_test.ran
      ? `   ${r.npm_test.wall_s} s wall, ${r.npm_test.cpu_s ?? '?'} CPU-s (exit ${r.npm_test.exit_code}) ${r.npm_test.summary ?? ''}`
      : `   ${r.npm_test.reason}`,
  );
  lines.push('', `total ${r.duration_s} s`, '');
  return lines.join('\n');
}

process.exitCode = await run(process.argv.slice(2)).catch((error: unknown) => {
  process.stderr.write(`bench: ${error instanceof Error ? error.message : String(error)}\n`);
  return error instanceof Error && 'code' in error && String(error.code).startsWith('usage.') ? 2 : 1;
});
