import { z } from 'zod';

/** The JSON `npm run bench -- --json` prints and benchmarks/results/latest.json holds (format harness-bench/1). */

const Latency = z.object({
  count: z.number().int(),
  p50_ms: z.number(),
  p90_ms: z.number(),
  p99_ms: z.number(),
  max_ms: z.number(),
  mean_ms: z.number(),
  wall_ms: z.number(),
  throughput_rps: z.number(),
  cpu_ms_per_request: z.number(),
});

/** One process's share of a step: its CPU time and its peak RSS. */
const ProcessUsageSchema = z.object({ cpu_ms: z.number(), peak_rss_mb: z.number() });

/** What a run was measured on (machine.ts `machineInfo`). */
export const MachineSchema = z.object({
  nproc: z.number().int(),
  memory_gib: z.number(),
  cpu_model: z.string(),
  node: z.string(),
  platform: z.string(),
  load_average_1m: z.number(),
});

export const BenchResultSchema = z.object({
  format: z.literal('harness-bench/2'),
  mode: z.enum(['quick', 'full']),
  started_at: z.string(),
  duration_s: z.number(),
  machine: MachineSchema,
  session_server: Latency.extend({
    sessions: z.number().int(),
    turns: z.number().int(),
    /** Measured rounds pooled into each short-context figure (`count` = sessions × turns × rounds). */
    rounds: z.number().int(),
    p50_ratio: z.number(),
    p99_ratio: z.number(),
    throughput_ratio: z.number(),
    p50_ratio_two_hop: z.number(),
    p50_ratio_two_hop_json: z.number(),
    cpu_ratio_two_hop_json: z.number(),
  }),
  bare_http: Latency,
  two_hop: Latency,
  two_hop_json: Latency,
  chat_contexts: z.array(
    z.object({
      context_tokens: z.number().int(),
      session_server_p50_ms: z.number(),
      two_hop_json_p50_ms: z.number(),
      bare_http_p50_ms: z.number(),
      p50_ratio_two_hop_json: z.number(),
      session_server_cpu_ms_per_request: z.number(),
      two_hop_json_cpu_ms_per_request: z.number(),
      cpu_ratio_two_hop_json: z.number(),
    }),
  ),
  samples_op: z.object({
    nodes: z.number().int(),
    leaves: z.number().int(),
    tokens_per_leaf: z.number().int(),
    op_ms: z.number(),
    op_cpu_ms: z.number(),
    first_op_ms: z.number(),
    first_op_cpu_ms: z.number(),
    collect_ms: z.number(),
    encode_ms: z.number(),
    decode_ms: z.number(),
    collect_cpu_ms: z.number(),
    encode_cpu_ms: z.number(),
    decode_cpu_ms: z.number(),
    reply_mb: z.number(),
  }),
  realistic_step: z.object({
    rollouts: z.number().int(),
    turns: z.number().int(),
    context_tokens: z.number().int(),
    max_sample_tokens: z.number().int(),
    /** The fake policy, the fake session server and the client each a process (realistic-bench.ts). */
    layout: z.literal('processes'),
    step_ms: z.number(),
    /** CPU time of every process of the step. */
    step_cpu_ms: z.number(),
    /** The fakes' processes (policy + session server), summed. */
    peak_rss_mb: z.number(),
    session_server: ProcessUsageSchema,
    policy: ProcessUsageSchema,
    client: ProcessUsageSchema,
    connection_resets_retried: z.number().int(),
    /** The same rollouts against baseline (c), the two-hop with native JSON, its hops each a process. */
    two_hop_json_step_ms: z.number(),
    two_hop_json_step_cpu_ms: z.number(),
    /** Fake over (c), same run: wall time and CPU time of the step. */
    step_ratio_two_hop_json: z.number(),
    cpu_ratio_two_hop_json: z.number(),
    /** Both again with everything in one process; `peak_rss_mb` is that process's, client included. */
    single_process: z.object({
      step_ms: z.number(),
      step_cpu_ms: z.number(),
      peak_rss_mb: z.number(),
      two_hop_json_step_ms: z.number(),
      two_hop_json_step_cpu_ms: z.number(),
      step_ratio_two_hop_json: z.number(),
      cpu_ratio_two_hop_json: z.number(),
    }),
  }),
  steps: z.object({
    steps: z.number().int(),
    rollouts: z.number().int(),
    turns: z.number().int(),
    context_tokens: z.number().int(),
    step_ms: z.array(z.number()),
    heap_mb_after_step: z.array(z.number()),
    heap_growth_mb: z.number(),
    peak_rss_mb: z.number(),
  }),
  attach_point: z.object({
    chain_length: z.number().int(),
    request_messages: z.number().int(),
    sizes: z.array(
      z.object({ nodes: z.number().int(), ns_per_search: z.number(), searches: z.number().int() }),
    ),
    ratio_largest_smallest: z.number(),
  }),
  replay: z.discriminatedUnion('available', [
    z.object({
      available: z.literal(true),
      default_step: z.object({
        rollouts: z.number().int(),
        wall_ms: z.number(),
        step_ms: z.number(),
        peak_rss_mb: z.number(),
        exit_code: z.number().int(),
      }),
      consecutive: z
        .object({
          steps: z.number().int(),
          step_ms: z.array(z.number()),
          heap_mb_after_step: z.array(z.number()),
          rss_mb_after_step: z.array(z.number()),
          heap_growth_per_step_mb: z.number(),
          /** `harness replay`'s own live heap after the last step minus after the first. */
          heap_growth_mb: z.number(),
          retained_after_run_mb: z.number().nullable(),
          peak_rss_mb: z.number(),
        })
        .nullable(),
    }),
    z.object({ available: z.literal(false), reason: z.string() }),
  ]),
  npm_test: z.discriminatedUnion('ran', [
    z.object({
      ran: z.literal(true),
      wall_s: z.number(),
      // Absent in results written before the CPU-seconds were recorded.
      user_s: z.number().nullable().optional(),
      sys_s: z.number().nullable().optional(),
      cpu_s: z.number().nullable().optional(),
      exit_code: z.number().int(),
      summary: z.string().nullable(),
    }),
    z.object({ ran: z.literal(false), reason: z.string() }),
  ]),
});
export type BenchResult = z.infer<typeof BenchResultSchema>;

/** `npm run bench:workers -- --out FILE` (workers-bench.ts, format harness-bench-workers/1). */
export const WorkersResultSchema = z.object({
  format: z.literal('harness-bench-workers/1'),
  // Absent in results written before the date was recorded.
  started_at: z.string().optional(),
  machine: MachineSchema,
  seed: z.number().int(),
  workers: z.number().int(),
  runs: z.array(
    z.object({
      workers: z.number().int(),
      wall_ms: z.number(),
      step_ms: z.array(z.number()),
      rollouts: z.array(z.number()),
      verdict: z.string(),
      peak_rss_mb: z.number(),
    }),
  ),
  many_over_one: z.object({ wall: z.number(), step: z.number(), peak_rss_added_mb: z.number() }),
  step_ratio_per_pair: z.array(z.number()),
});
export type WorkersResult = z.infer<typeof WorkersResultSchema>;

/** `npm run bench:tokenizer -- --out FILE` (tokenizer-bench.ts, format harness-bench-tokenizer/2). */
const TokenizerRatiosSchema = z.object({
  tree: z.enum(['this', 'baseline']),
  episodes: z.enum(['default', 'same']),
  step: z.number(),
  cpu: z.number(),
  wall: z.number(),
  peak_rss: z.number(),
  step_per_pair: z.array(z.number()),
  cpu_per_pair: z.array(z.number()),
});

export const TokenizerResultSchema = z.object({
  format: z.literal('harness-bench-tokenizer/2'),
  started_at: z.string().optional(),
  machine: MachineSchema,
  tokenizer: z.object({
    load_ms: z.number(),
    heap_added_mb: z.number(),
    rss_added_mb: z.number(),
    encode_tokens_per_s: z.number(),
  }),
  replay: z.object({
    rollouts: z.number().int(),
    pairs: z.number().int(),
    /** The other checkout measured alternately (`--baseline DIR`), or null. */
    baseline: z.string().nullable(),
    runs: z.array(
      z.object({
        tree: z.enum(['this', 'baseline']),
        /** `default`: each flag's own episodes (qwen3 turns tool calls on); `same`: one written set on both. */
        episodes: z.enum(['default', 'same']),
        tokenizer: z.enum(['toy', 'qwen3']),
        exit_code: z.number().int(),
        wall_ms: z.number(),
        step_ms: z.number(),
        cpu_s: z.number(),
        peak_rss_mb: z.number(),
      }),
    ),
    qwen3_over_toy: z.array(TokenizerRatiosSchema),
  }),
});
export type TokenizerResult = z.infer<typeof TokenizerResultSchema>;

/** `node scripts/bench/npm-test-bench.ts --out FILE` (format harness-bench-npm-test/1). */
export const NpmTestResultSchema = z.object({
  format: z.literal('harness-bench-npm-test/1'),
  started_at: z.string(),
  machine: MachineSchema,
  wall_s: z.number(),
  user_s: z.number().nullable(),
  sys_s: z.number().nullable(),
  cpu_s: z.number().nullable(),
  exit_code: z.number().int(),
  summary: z.string().nullable(),
});
export type NpmTestFileResult = z.infer<typeof NpmTestResultSchema>;

/** Stryker's kill counts of one module, as mutation-scores.ts reads them from its JSON report. */
const MutantCountsSchema = z.object({
  killed: z.number().int(),
  survived: z.number().int(),
  timeout: z.number().int(),
  no_coverage: z.number().int(),
  /** Mutants Stryker could not run (compile or runtime errors), outside the score. */
  errors: z.number().int(),
});

/**
 * Mutation scores before and after a change (`node scripts/bench/mutation-scores.ts`, format
 * harness-mutation/1): per module set, each tree's files and counts.
 */
export const MutationResultSchema = z.object({
  format: z.literal('harness-mutation/1'),
  started_at: z.string(),
  machine: MachineSchema,
  configuration: z.string(),
  trees: z.object({ before: z.string(), after: z.string() }),
  sets: z.array(
    z.object({
      name: z.string(),
      tests: z.string(),
      before: z.array(MutantCountsSchema.extend({ file: z.string() })).nullable(),
      after: z.array(MutantCountsSchema.extend({ file: z.string() })).nullable(),
    }),
  ),
});
export type MutationResult = z.infer<typeof MutationResultSchema>;
