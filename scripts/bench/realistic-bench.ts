import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { z } from 'zod';

/**
 * A realistic step (scripts/bench/realistic-probe.ts, the built-in profile: rollouts at once, each a
 * session whose context grows to the recipe's length over ~50 turns, then its samples collected), in a
 * fresh child process for wall time and peak RSS, and the same rollouts against baseline (c) in another
 * for the step's ratio; then many steps of it in another child for the live
 * heap after each step (after a forced GC).
 */

const PROBE = fileURLToPath(new URL('./realistic-probe.ts', import.meta.url));

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
});
type Probe = z.infer<typeof ProbeSchema>;

export interface StepProfile {
  readonly rollouts: number;
  readonly turns: number;
  readonly contextTokens: number;
}

async function probe(profile: StepProfile, steps: number, mode = 'fake'): Promise<Probe> {
  const args = [profile.rollouts, profile.turns, profile.contextTokens, steps, mode].map(String);
  const run = await execa(process.execPath, ['--expose-gc', PROBE, ...args], { reject: false });
  const last = run.stdout.trim().split('\n').at(-1) ?? '';
  try {
    return ProbeSchema.parse(JSON.parse(last));
  } catch {
    throw new Error(`realistic probe printed no result (exit ${run.exitCode}): ${run.stderr.slice(-1000)}`);
  }
}

export interface RealisticBenchResult {
  readonly realistic_step: {
    readonly rollouts: number;
    readonly turns: number;
    readonly context_tokens: number;
    readonly max_sample_tokens: number;
    readonly step_ms: number;
    /** CPU time (user + system) of the process over the step. */
    readonly step_cpu_ms: number;
    readonly peak_rss_mb: number;
    readonly connection_resets_retried: number;
    /**
     * The same rollouts against baseline (c) (scripts/bench/baselines.ts) in a fresh process: what the
     * traffic costs a bare two-hop proxy that parses and writes JSON at each hop. The fake's step also
     * collects each session's samples, which (c) has none of.
     */
    readonly two_hop_json_step_ms: number;
    readonly two_hop_json_step_cpu_ms: number;
    readonly step_ratio_two_hop_json: number;
    readonly cpu_ratio_two_hop_json: number;
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
  const one = await probe(step, 1);
  const base = await probe(step, 1, 'two-hop-json');
  const ratio = (a: number, b: number) => (b > 0 ? Math.round((a / b) * 100) / 100 : 0);
  const stepMs = one.step_ms[0] ?? 0;
  const stepCpuMs = one.step_cpu_ms[0] ?? 0;
  const baseMs = base.step_ms[0] ?? 0;
  const baseCpuMs = base.step_cpu_ms[0] ?? 0;
  const many = await probe(heapProfile, heapSteps);
  const heap = many.heap_mb_after_step;
  return {
    realistic_step: {
      rollouts: one.rollouts,
      turns: one.turns,
      context_tokens: one.context_tokens,
      max_sample_tokens: one.max_sample_tokens,
      step_ms: stepMs,
      step_cpu_ms: stepCpuMs,
      peak_rss_mb: one.peak_rss_mb,
      connection_resets_retried: one.connection_resets_retried,
      two_hop_json_step_ms: baseMs,
      two_hop_json_step_cpu_ms: baseCpuMs,
      step_ratio_two_hop_json: ratio(stepMs, baseMs),
      cpu_ratio_two_hop_json: ratio(stepCpuMs, baseCpuMs),
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
