import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { z } from 'zod';
import { HARNESS_NODE_FLAGS } from '../../common/node-flags.ts';

/**
 * A realistic step (scripts/bench/realistic-probe.ts, the built-in profile: rollouts at once, each a
 * session whose context grows to the recipe's length over ~50 turns, then its samples collected) in the
 * real layout: the fake policy, the fake session server and the client (standing in for Harbor's agents)
 * each a process, as SGLang, Miles' session server and Harbor's agents are; wall time, the CPU time of
 * every process, and the fakes' peak RSS. The same rollouts against baseline (c) in the same layout (its
 * two hops each a process) for the step's ratio. Then both again with everything in one process (the
 * single-process figures of earlier rounds), and many steps of a smaller profile in one process for the
 * live heap after each step (after a forced GC).
 */

const PROBE = fileURLToPath(new URL('./realistic-probe.ts', import.meta.url));

const UsageSchema = z.object({ cpu_ms: z.number(), peak_rss_mb: z.number() });
const ProbeSchema = z.object({
  rollouts: z.number().int(),
  turns: z.number().int(),
  context_tokens: z.number().int(),
  max_sample_tokens: z.number().int(),
  step_ms: z.array(z.number()),
  step_cpu_ms: z.array(z.number()),
  heap_mb_after_step: z.array(z.number()),
  peak_rss_mb: z.number(),
  connection_resets_retried: z.number().int(),
  client_cpu_ms: z.array(z.number()).optional(),
  client_peak_rss_mb: z.number().optional(),
  children: z.record(z.string(), UsageSchema).optional(),
});
type Probe = z.infer<typeof ProbeSchema>;

export interface StepProfile {
  readonly rollouts: number;
  readonly turns: number;
  readonly contextTokens: number;
}

type ProbeMode = 'fake' | 'processes' | 'two-hop-json' | 'two-hop-json-processes';

async function probe(profile: StepProfile, steps: number, mode: ProbeMode): Promise<Probe> {
  const args = [profile.rollouts, profile.turns, profile.contextTokens, steps, mode].map(String);
  const run = await execa(process.execPath, [...HARNESS_NODE_FLAGS, '--expose-gc', PROBE, ...args], {
    reject: false,
  });
  const last = run.stdout.trim().split('\n').at(-1) ?? '';
  let printed: unknown;
  try {
    printed = JSON.parse(last);
  } catch {
    throw new Error(
      `realistic probe (${mode}) printed no result (exit ${run.exitCode}): ${run.stderr.slice(-1000)}`,
    );
  }
  const parsed = ProbeSchema.safeParse(printed);
  if (!parsed.success)
    throw new Error(`realistic probe (${mode}) printed an unexpected result: ${parsed.error.message}`);
  return parsed.data;
}

const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 100) / 100 : 0);
const round = (v: number) => Math.round(v * 10) / 10;

/** A fake step and (c)'s, of one layout: the figures and their ratios. */
interface Compared {
  readonly step_ms: number;
  /** CPU time (user + system) of every process of the step. */
  readonly step_cpu_ms: number;
  readonly two_hop_json_step_ms: number;
  readonly two_hop_json_step_cpu_ms: number;
  readonly step_ratio_two_hop_json: number;
  readonly cpu_ratio_two_hop_json: number;
}

function compare(fake: Probe, base: Probe): Compared {
  const stepMs = fake.step_ms[0] ?? 0;
  const stepCpuMs = fake.step_cpu_ms[0] ?? 0;
  const baseMs = base.step_ms[0] ?? 0;
  const baseCpuMs = base.step_cpu_ms[0] ?? 0;
  return {
    step_ms: stepMs,
    step_cpu_ms: stepCpuMs,
    two_hop_json_step_ms: baseMs,
    two_hop_json_step_cpu_ms: baseCpuMs,
    step_ratio_two_hop_json: ratio(stepMs, baseMs),
    cpu_ratio_two_hop_json: ratio(stepCpuMs, baseCpuMs),
  };
}

/** A process's share of the step. */
export interface ProcessUsage {
  readonly cpu_ms: number;
  readonly peak_rss_mb: number;
}

export interface RealisticBenchResult {
  readonly realistic_step: Compared & {
    readonly rollouts: number;
    readonly turns: number;
    readonly context_tokens: number;
    readonly max_sample_tokens: number;
    /** Where each part ran: the fake policy, the fake session server and the client each a process. */
    readonly layout: 'processes';
    /** The fakes' processes (policy + session server), summed: what the harness itself holds. */
    readonly peak_rss_mb: number;
    readonly session_server: ProcessUsage;
    readonly policy: ProcessUsage;
    /** The client standing in for Harbor's agents (its histories, the decoded samples). */
    readonly client: ProcessUsage;
    readonly connection_resets_retried: number;
    /**
     * The same two runs with everything in one process (client, session server, policy; for (c) its
     * two hops): one core does all of it. `peak_rss_mb` is that process's, client included.
     */
    readonly single_process: Compared & { readonly peak_rss_mb: number };
  };
  readonly steps: {
    readonly steps: number;
    readonly rollouts: number;
    readonly turns: number;
    readonly context_tokens: number;
    readonly step_ms: readonly number[];
    readonly heap_mb_after_step: readonly number[];
    /** Live heap after the last step minus after the first (both after a full GC). */
    readonly heap_growth_mb: number;
    readonly peak_rss_mb: number;
  };
}

export async function benchRealistic(
  step: StepProfile,
  heapProfile: StepProfile,
  heapSteps: number,
): Promise<RealisticBenchResult> {
  const split = await probe(step, 1, 'processes');
  const splitBase = await probe(step, 1, 'two-hop-json-processes');
  const one = await probe(step, 1, 'fake');
  const oneBase = await probe(step, 1, 'two-hop-json');
  const child = (role: string): ProcessUsage => {
    const usage = split.children?.[role];
    if (usage === undefined)
      throw new Error(`realistic probe (processes) gave no usage for its ${role} process`);
    return usage;
  };
  const session = child('session');
  const policy = child('policy');
  const many = await probe(heapProfile, heapSteps, 'fake');
  const heap = many.heap_mb_after_step;
  return {
    realistic_step: {
      rollouts: split.rollouts,
      turns: split.turns,
      context_tokens: split.context_tokens,
      max_sample_tokens: split.max_sample_tokens,
      layout: 'processes',
      ...compare(split, splitBase),
      peak_rss_mb: round(session.peak_rss_mb + policy.peak_rss_mb),
      session_server: session,
      policy,
      client: { cpu_ms: split.client_cpu_ms?.[0] ?? 0, peak_rss_mb: split.client_peak_rss_mb ?? 0 },
      connection_resets_retried: split.connection_resets_retried + one.connection_resets_retried,
      single_process: { ...compare(one, oneBase), peak_rss_mb: one.peak_rss_mb },
    },
    steps: {
      steps: heapSteps,
      rollouts: many.rollouts,
      turns: many.turns,
      context_tokens: many.context_tokens,
      step_ms: many.step_ms,
      heap_mb_after_step: heap,
      heap_growth_mb: Math.round(((heap.at(-1) ?? 0) - (heap[0] ?? 0)) * 10) / 10,
      peak_rss_mb: many.peak_rss_mb,
    },
  };
}
