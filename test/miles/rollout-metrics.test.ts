import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { aggregateAgentMetrics } from '../../replay/metrics/agent-metrics.ts';
import {
  harnessOnCase,
  metricDifferences,
  oracleCases,
  parseOracleCases,
  type TypedOracleCase,
} from '../../replay/testing/oracle-cases.ts';
import { milesGate } from './gate.ts';

// Miles' own rollout logging on CPU (scripts/oracles/metrics_oracle.py imports log_rollout_data, the
// dynamic filters, MetricGatherer and generate.py's RolloutFn from MILES_ROOT), run live: its output must
// be the committed vectors (fixtures/miles-oracle/rollout-metrics.json) and the harness's metrics.

const ROOT = new URL('../../', import.meta.url).pathname;
const ORACLE = join(ROOT, 'scripts/oracles/metrics_oracle.py');

const gate = await milesGate({ torch: true });
const ready = gate.unmet.length === 0;
if (!ready && !gate.required)
  console.warn(
    `[skip] miles rollout metrics: ${gate.unmet.join('; ')} (HARNESS_MILES_REQUIRED=1 fails instead)`,
  );

describe.skipIf(!ready && !gate.required)("rollout metrics against Miles' own code, live", () => {
  let dir = '';
  let live: TypedOracleCase[] = [];
  let replaced = '';

  beforeAll(async () => {
    expect(gate.unmet).toEqual([]);
    dir = await mkdtemp(join(tmpdir(), 'metrics-oracle-'));
    const run = await execa(gate.python, [ORACLE, '--miles-root', gate.milesRoot, '--out', dir], {
      reject: false,
      stdin: 'ignore',
    });
    expect(run.exitCode, `${run.stderr}`).toBe(0);
    replaced = `${run.stderr}`;
    live = parseOracleCases(await readFile(join(dir, 'rollout-metrics.json'), 'utf8'));
  }, 120_000);

  afterAll(async () => {
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it('says what it replaced and why, and stands in for no metric code', () => {
    expect(replaced).toContain('replaced miles.utils.tracking_utils');
    expect(replaced).not.toMatch(/replaced miles\.ray\.rollout\.metrics|replaced miles\.utils\.metric_utils/);
  });

  it('regenerates the committed vectors exactly', () => {
    expect(live.map((c) => c.name)).toEqual(oracleCases.map((c) => c.name));
    live.forEach((c, k) => {
      const committed = oracleCases[k]!;
      expect(c.logged, c.name).toEqual(committed.logged);
      expect(c.filter_verdicts, c.name).toEqual(committed.filter_verdicts);
      expect(c.agent_logged, c.name).toEqual(committed.agent_logged);
      expect(c.agent_would_log, c.name).toEqual(committed.agent_would_log);
    });
  });

  it("the harness's metrics equal what Miles logs on every case", () => {
    for (const c of live) {
      const { logged, samples } = harnessOnCase(c);
      expect(metricDifferences(logged, c.logged), c.name).toEqual([]);
      expect(metricDifferences(aggregateAgentMetrics(samples), c.agent_would_log), c.name).toEqual([]);
    }
  });
});
