import fc from 'fast-check';
import { expect, it } from 'vitest';
import { measureClosedLoop, percentile, pooledSummary, summarize } from './stats.ts';

it('nearest-rank percentiles', () => {
  const xs = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
  expect(percentile(xs, 50)).toBe(5);
  expect(percentile(xs, 99)).toBe(10);
  expect(percentile(xs, 0)).toBe(1);
  expect(Number.isNaN(percentile([], 50))).toBe(true);
});

it('percentiles are monotone and bounded by the data', () => {
  fc.assert(
    fc.property(fc.array(fc.double({ min: 0, max: 1e6, noNaN: true }), { minLength: 1 }), (xs) => {
      const s = summarize(xs, 1000);
      const round = (v: number) => Math.round(v * 1000) / 1000;
      // bounded-spread: fast-check arrays of at most a few hundred
      expect(s.p50_ms).toBeGreaterThanOrEqual(round(Math.min(...xs)));
      expect(s.p50_ms).toBeLessThanOrEqual(s.p90_ms);
      expect(s.p90_ms).toBeLessThanOrEqual(s.p99_ms);
      expect(s.p99_ms).toBeLessThanOrEqual(s.max_ms);
      // bounded-spread: fast-check arrays of at most a few hundred
      expect(s.max_ms).toBe(round(Math.max(...xs)));
      expect(s.count).toBe(xs.length);
    }),
    { numRuns: 200 },
  );
});

it('closed loop runs every session turn once', async () => {
  const seen = new Set<string>();
  const summary = pooledSummary([
    await measureClosedLoop(3, 4, async (s, t) => {
      seen.add(`${s}:${t}`);
    }),
  ]);
  expect(summary.count).toBe(12);
  expect(seen.size).toBe(12);
});

it('pools runs: every call counted once, wall and CPU time summed', async () => {
  const a = await measureClosedLoop(2, 3, async () => {});
  const b = await measureClosedLoop(1, 4, async () => {});
  const pooled = pooledSummary([a, b]);
  expect(pooled.count).toBe(10);
  // Figures are rounded to 0.001 ms (half up), so a pooled figure is within half of that of its sum.
  const withinRounding = (got: number, exact: number) =>
    expect(Math.abs(got - exact)).toBeLessThanOrEqual(0.0005 + 1e-9);
  withinRounding(pooled.wall_ms, a.wallMs + b.wallMs);
  withinRounding(pooled.cpu_ms_per_request, (a.cpuMs + b.cpuMs) / 10);
  // bounded-spread: 10 samples
  withinRounding(pooled.max_ms, Math.max(...a.samplesMs, ...b.samplesMs));
});
