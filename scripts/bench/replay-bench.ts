import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { z } from 'zod';
import { HARNESS_NODE_FLAGS } from '../../common/node-flags.ts';

/**
 * Benchmark 3: `harness replay` end to end. One default step (the recipe's 4 prompts x 8 samples = 32
 * compacting rollouts): wall time and peak RSS. Then several steps in one run, with the live heap after
 * a forced GC at the end of every step, to show memory does not grow from step to step. Each run is a
 * fresh child process (scripts/bench/replay-probe.ts), so peak RSS is the replay's alone.
 */

const PROBE = fileURLToPath(new URL('./replay-probe.ts', import.meta.url));

const ProbeSchema = z.object({
  exit_code: z.number(),
  wall_ms: z.number(),
  peak_rss_mb: z.number(),
  gc: z.boolean(),
  heap_mb_before_run: z.number().nullable(),
  heap_mb_after_run: z.number().nullable(),
  marks: z.array(z.object({ step: z.number(), heap_mb: z.number(), rss_mb: z.number() })),
  steps: z.array(z.object({ step: z.number(), num_rollouts: z.number(), duration_ms: z.number() })),
  error: z.string().nullable(),
});
type Probe = z.infer<typeof ProbeSchema>;

export interface ReplayBenchOptions {
  /** Steps of the memory run (0 skips it). */
  readonly consecutiveSteps: number;
  /** Overrides of the recipe's batch (tests shrink it). */
  readonly rolloutBatchSize?: number;
  readonly nSamplesPerPrompt?: number;
}

export type ReplayBenchResult =
  | {
      readonly available: true;
      readonly default_step: {
        readonly rollouts: number;
        readonly wall_ms: number;
        readonly step_ms: number;
        readonly peak_rss_mb: number;
        readonly exit_code: number;
      };
      readonly consecutive: {
        readonly steps: number;
        readonly step_ms: readonly number[];
        readonly heap_mb_after_step: readonly number[];
        readonly rss_mb_after_step: readonly number[];
        /**
         * Mean growth of the live heap from one step's end to the next (after GC). The replay writes each
         * step into its reports and keeps only the checks' evidence, so this should be near 0;
         * `retained_after_run_mb` is the leak check.
         */
        readonly heap_growth_per_step_mb: number;
        /** Live heap after the last step minus after the first (after GC): `harness replay`'s own growth. */
        readonly heap_growth_mb: number;
        /**
         * Live heap once the command has returned (servers closed, report written) minus before it started,
         * both after a warm-up run and a full GC: what a run leaks.
         */
        readonly retained_after_run_mb: number | null;
        readonly peak_rss_mb: number;
      } | null;
    }
  | { readonly available: false; readonly reason: string };

async function probe(args: readonly string[]): Promise<Probe> {
  const run = await execa(process.execPath, [...HARNESS_NODE_FLAGS, '--expose-gc', PROBE, ...args], {
    reject: false,
  });
  const last = run.stdout.trim().split('\n').at(-1) ?? '';
  let parsed: unknown;
  try {
    parsed = JSON.parse(last);
  } catch {
    throw new Error(`replay probe printed no result (exit ${run.exitCode}): ${run.stderr.slice(-1000)}`);
  }
  const result = ProbeSchema.parse(parsed);
  if (result.error !== null) throw new Error(`harness replay exited ${result.exit_code}: ${result.error}`);
  return result;
}

export async function benchReplay(options: ReplayBenchOptions): Promise<ReplayBenchResult> {
  const size = [
    ...(options.rolloutBatchSize === undefined
      ? []
      : ['--rollout-batch-size', String(options.rolloutBatchSize)]),
    ...(options.nSamplesPerPrompt === undefined
      ? []
      : ['--n-samples-per-prompt', String(options.nSamplesPerPrompt)]),
    // One optimizer step takes the whole rollout step, as in the recipe (32 = 4 x 8), so every rollout
    // played is trained and counted in num_rollouts.
    ...(options.rolloutBatchSize === undefined || options.nSamplesPerPrompt === undefined
      ? []
      : ['--global-batch-size', String(options.rolloutBatchSize * options.nSamplesPerPrompt)]),
  ];
  try {
    const single = await probe([...size, '--steps', '1']);
    const multi =
      options.consecutiveSteps > 0
        ? await probe(['--probe-warm-up', ...size, '--steps', String(options.consecutiveSteps)])
        : null;
    const heap = multi?.marks.map((m) => m.heap_mb) ?? [];
    return {
      available: true,
      default_step: {
        rollouts: single.steps[0]?.num_rollouts ?? 0,
        wall_ms: single.wall_ms,
        step_ms: single.steps[0]?.duration_ms ?? 0,
        peak_rss_mb: single.peak_rss_mb,
        exit_code: single.exit_code,
      },
      consecutive:
        multi === null
          ? null
          : {
              steps: multi.steps.length,
              step_ms: multi.steps.map((s) => s.duration_ms),
              heap_mb_after_step: heap,
              rss_mb_after_step: multi.marks.map((m) => m.rss_mb),
              heap_growth_per_step_mb:
                heap.length > 1
                  ? Math.round((((heap.at(-1) ?? 0) - (heap[0] ?? 0)) / (heap.length - 1)) * 10) / 10
                  : 0,
              heap_growth_mb: Math.round(((heap.at(-1) ?? 0) - (heap[0] ?? 0)) * 10) / 10,
              retained_after_run_mb:
                multi.heap_mb_after_run === null || multi.heap_mb_before_run === null
                  ? null
                  : Math.round((multi.heap_mb_after_run - multi.heap_mb_before_run) * 10) / 10,
              peak_rss_mb: multi.peak_rss_mb,
            },
    };
  } catch (error) {
    return { available: false, reason: error instanceof Error ? error.message : String(error) };
  }
}
