import { z } from 'zod';
import { MachineSchema } from './result-schema.ts';

/** One process's share of a check-run: CPU seconds (whole run and per step) and peak RSS. */
const ProcessFigures = z.object({
  cpu_s: z.number(),
  cpu_s_per_step: z.number(),
  peak_rss_mb: z.number(),
});

/** What `node scripts/bench/check-run-bench.ts` writes (benchmarks/results/check-run.json). */
export const CheckRunBenchResultSchema = z.object({
  format: z.literal('harness-bench-check-run/1'),
  started_at: z.string(),
  machine: MachineSchema,
  /** 1, 5 and 15-minute load averages before and after the check-run: other jobs inflate every figure. */
  load_average: z.object({ before: z.array(z.number()), after: z.array(z.number()) }),
  dumps: z.object({
    dir: z.string(),
    steps: z.number().int(),
    samples: z.number().int(),
    /** Σ len(tokens) over the rollout samples, per step (mean). */
    tokens_per_step: z.number().int().nullable(),
    distinct_replay_steps: z.number().int().nullable(),
    generated: z.boolean(),
  }),
  exit_code: z.number().int(),
  verdict: z.string(),
  wall_s: z.number(),
  step_wall_s: z.object({ median: z.number().nullable(), max: z.number().nullable() }),
  cpu_s: z.number(),
  cpu_s_per_step: z.number(),
  node: ProcessFigures,
  converter: ProcessFigures,
  /** Node's and the converter's peaks added: both are alive for the whole run. */
  peak_rss_mb_sum: z.number(),
  totals: z.record(z.string(), z.number()),
});
export type CheckRunBenchResult = z.infer<typeof CheckRunBenchResultSchema>;
