/** Latency summary of one benchmark run, in milliseconds. */
export interface LatencySummary {
  readonly count: number;
  readonly p50_ms: number;
  readonly p90_ms: number;
  readonly p99_ms: number;
  readonly max_ms: number;
  readonly mean_ms: number;
  readonly wall_ms: number;
  readonly throughput_rps: number;
  /**
   * Process CPU time (user + system, `process.cpuUsage`) over the run, per call: client and servers share
   * the process, so this is what one call costs the whole loop. Steadier than wall time on a shared machine.
   */
  readonly cpu_ms_per_request: number;
}

/** The middle value (the mean of the two middle ones for an even count). */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Nearest-rank percentile of an ascending-sorted array (p in [0, 100]). */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))] as number;
}

export function summarize(samplesMs: readonly number[], wallMs: number, cpuMs = Number.NaN): LatencySummary {
  const sorted = [...samplesMs].sort((a, b) => a - b);
  const total = sorted.reduce((s, v) => s + v, 0);
  const round = (v: number) => Math.round(v * 1000) / 1000;
  return {
    count: sorted.length,
    p50_ms: round(percentile(sorted, 50)),
    p90_ms: round(percentile(sorted, 90)),
    p99_ms: round(percentile(sorted, 99)),
    max_ms: round(sorted.at(-1) ?? Number.NaN),
    mean_ms: round(sorted.length === 0 ? Number.NaN : total / sorted.length),
    wall_ms: round(wallMs),
    throughput_rps: round(wallMs > 0 ? (sorted.length / wallMs) * 1000 : Number.NaN),
    cpu_ms_per_request: round(sorted.length === 0 ? Number.NaN : cpuMs / sorted.length),
  };
}

/** The raw figures of one closed-loop run: per-call latencies, wall time and process CPU time (ms). */
export interface LoopMeasure {
  readonly samplesMs: readonly number[];
  readonly wallMs: number;
  readonly cpuMs: number;
}

/**
 * Runs `sessions` concurrent loops of `turns` sequential calls each and times every call. A session's
 * calls are sequential because an agent waits for each reply before its next request.
 */
export async function measureClosedLoop(
  sessions: number,
  turns: number,
  call: (session: number, turn: number) => Promise<void>,
): Promise<LoopMeasure> {
  const samples: number[] = [];
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  await Promise.all(
    Array.from({ length: sessions }, async (_, s) => {
      for (let t = 0; t < turns; t += 1) {
        const t0 = performance.now();
        await call(s, t);
        samples.push(performance.now() - t0);
      }
    }),
  );
  const wallMs = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  return { samplesMs: samples, wallMs, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/** One summary of several runs of the same server: their calls pooled, wall and CPU time summed. */
export function pooledSummary(runs: readonly LoopMeasure[]): LatencySummary {
  return summarize(
    runs.flatMap((r) => r.samplesMs),
    runs.reduce((sum, r) => sum + r.wallMs, 0),
    runs.reduce((sum, r) => sum + r.cpuMs, 0),
  );
}
