import type { BenchResult } from '../result-schema.ts';
import { count, machineLine, mb, met, millis, seconds, signedMb, times } from './format.ts';

/**
 * docs/performance.md "Where it stands": the targets of `npm run bench` (benchmarks/results/latest.json)
 * with this run's figures and whether each holds. The targets are the project's (issue 12, issue 29);
 * the rules that decide "met" are the comparisons written in the first column.
 */

const CHAT_RATIO_TARGET = 1.5;
const STEP_WALL_TARGET_MS = 6000;
const STEP_RSS_TARGET_MB = 600;
const HEAP_GROWTH_TARGET_MB = 5;
const SAMPLES_OP_TARGET_MS = 500;

const k = (tokens: number) => `${Math.round(tokens / 1024)}k`;

function chatRows(r: BenchResult): string[] {
  const s = r.session_server;
  const c = r.two_hop_json;
  const contexts = r.chat_contexts;
  return [
    `| chat p50 ≤ ${CHAT_RATIO_TARGET}× (c), short contexts (${s.sessions} sessions × ${s.turns} turns, ${s.rounds} pooled rounds) | p50 ${millis(s.p50_ms)} / ${millis(c.p50_ms)}: ${times(s.p50_ratio_two_hop_json)}; CPU ${s.cpu_ms_per_request.toFixed(2)} / ${c.cpu_ms_per_request.toFixed(2)} ms per call: ${times(s.cpu_ratio_two_hop_json)} | ${met(s.p50_ratio_two_hop_json <= CHAT_RATIO_TARGET)} |`,
    `| the same at ${contexts.map((x) => k(x.context_tokens)).join(' / ')}-token contexts | p50 ${contexts.map((x) => times(x.p50_ratio_two_hop_json)).join(' / ')}; CPU ${contexts.map((x) => times(x.cpu_ratio_two_hop_json)).join(' / ')} | ${met(contexts.every((x) => x.p50_ratio_two_hop_json <= CHAT_RATIO_TARGET))} |`,
  ];
}

function stepRows(r: BenchResult): string[] {
  const st = r.realistic_step;
  const one = st.single_process;
  return [
    `| realistic step ≤ ${STEP_WALL_TARGET_MS / 1000} s wall (${st.rollouts} rollouts × ${st.turns} turns to ${count(st.max_sample_tokens)} tokens, samples collected; client, session server and policy each a process) | ${seconds(st.step_ms)} wall, ${seconds(st.step_cpu_ms)} CPU (session server ${seconds(st.session_server.cpu_ms)}, policy ${seconds(st.policy.cpu_ms)}, client ${seconds(st.client.cpu_ms)}); (c) ${seconds(st.two_hop_json_step_ms)}: ${times(st.step_ratio_two_hop_json)} | ${met(st.step_ms <= STEP_WALL_TARGET_MS)} |`,
    `| realistic step ≤ ${STEP_RSS_TARGET_MB} MB peak RSS (the two fakes' processes' peaks summed) | ${mb(st.peak_rss_mb)} (session server ${mb(st.session_server.peak_rss_mb)}, policy ${mb(st.policy.peak_rss_mb)}) | ${met(st.peak_rss_mb <= STEP_RSS_TARGET_MB)} |`,
    `| the realistic step in one process (\`single_process\`) | ${seconds(one.step_ms)}, ${mb(one.peak_rss_mb)}; (c) ${seconds(one.two_hop_json_step_ms)}: ${times(one.step_ratio_two_hop_json)} | not a target |`,
  ];
}

function heapAndSamplesRows(r: BenchResult): string[] {
  const h = r.steps;
  const op = r.samples_op;
  return [
    `| live heap growth over ${h.steps} steps ≤ ${HEAP_GROWTH_TARGET_MB} MB (the fakes, ${h.rollouts} × ${h.turns} turns to ${k(h.context_tokens)} a step, one process) | ${signedMb(h.heap_growth_mb)} | ${met(h.heap_growth_mb <= HEAP_GROWTH_TARGET_MB)} |`,
    `| samples op on the ${count(op.nodes)}-node ${k(op.tokens_per_leaf)} tree ≤ ${SAMPLES_OP_TARGET_MS / 1000} s (server side: collect + encode, the reply streamed as the route sends it) | ${seconds(op.op_ms, 2)} (${seconds(op.op_cpu_ms, 2)} CPU); a server's first request ${seconds(op.first_op_ms, 2)} (${seconds(op.first_op_cpu_ms, 2)} CPU) | ${met(op.op_ms <= SAMPLES_OP_TARGET_MS)}${op.first_op_ms <= SAMPLES_OP_TARGET_MS ? ', the first request included' : '; the first request not'} |`,
  ];
}

function otherRows(r: BenchResult): string[] {
  const a = r.attach_point;
  const rows = [
    `| attach-point search, ${a.sizes.map((s) => s.nodes).join(' / ')} nodes (${a.request_messages}-message request) | ${a.sizes.map((s) => `${s.ns_per_search} ns`).join(' / ')}: largest over smallest ${times(a.ratio_largest_smallest)} | not a target |`,
  ];
  if (r.replay.available) {
    const d = r.replay.default_step;
    const c = r.replay.consecutive;
    const five = c === null ? '' : `; ${c.steps} steps: peak RSS ${mb(c.peak_rss_mb)}`;
    rows.push(
      `| \`harness replay\` (the README's step: ${d.rollouts} generated compacting rollouts, Harbor engine and checks, one process) | one step ${seconds(d.step_ms)}, ${mb(d.peak_rss_mb)}${five} | not a target |`,
    );
  }
  return rows;
}

export function benchTargets(r: BenchResult): string {
  return [
    `\`npm run bench\` (${r.mode}), \`benchmarks/results/latest.json\`: ${machineLine(r.machine, r.started_at)}. Ratios are between figures of this one run.`,
    '',
    '| target (2 cores) | figure | met? |',
    '| --- | --- | --- |',
    ...chatRows(r),
    ...stepRows(r),
    ...heapAndSamplesRows(r),
    ...otherRows(r),
  ].join('\n');
}
