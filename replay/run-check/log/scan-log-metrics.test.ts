import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parsePythonLiteral } from './python-literal.ts';
import { scanMetricLines, scanMetricLog } from './scan-log-metrics.ts';

// Lines as Miles prints them (log_train_step, gather_log_data, log_rollout_data), with the prefixes a
// Ray job log and this harness's own log sink add.
const LOG = [
  "[miles] (MegatronTrainRayActor pid=4242) [2026-11-29 10:00:01] log_utils.py:541 - step 0: {'train/loss': 0.25, 'train/pg_loss': -0.01, 'train/grad_norm': np.float64(1.5), 'train/step': 0}",
  "[miles] [2026-11-29 10:00:00] metrics.py:89 - perf 0: {'rollout/num_training_samples': 24, 'rollout/episode_raw_reward': 0.5, 'perf/rollout_time': 12.3, 'rollout/weight_version/mixed': True, 'note': 'text', 'nested': {'a': 1}}",
  "[miles] rollout 0: {'rollout/raw_reward': 0.4166666666666667, 'rollout/log_probs': -0.75, 'rollout/entropy': nan}",
  "[miles] step 1: {'train/loss': -inf, 'train/step': 1}",
  "[miles] critic-step 1: {'train/critic-loss': 2.0, 'train/step': 1}",
  "[miles] step 2: {'train/loss': oops}",
  'INFO nothing to see here',
  '[miles] the step 3 line in prose: not {metrics}',
];

describe('metric lines in the launcher log', () => {
  it('collects every numeric metric at its step, from train, rollout and perf lines', () => {
    const { metrics, unreadableLines } = scanMetricLines(LOG);
    // critic-step 1 and step 1 both log train/step 1: one point per step.
    expect(metrics.get('train/step')).toEqual([
      { step: 0, value: 0 },
      { step: 1, value: 1 },
    ]);
    expect(metrics.get('train/grad_norm')).toEqual([{ step: 0, value: 1.5 }]);
    expect(metrics.get('rollout/num_training_samples')).toEqual([{ step: 0, value: 24 }]);
    expect(metrics.get('rollout/raw_reward')?.[0]?.value).toBeCloseTo(5 / 12);
    expect(metrics.get('rollout/weight_version/mixed')).toEqual([{ step: 0, value: 1 }]);
    expect(metrics.get('train/loss')?.[1]?.value).toBe(Number.NEGATIVE_INFINITY);
    expect(Number.isNaN(metrics.get('rollout/entropy')?.[0]?.value)).toBe(true);
    expect(metrics.has('note')).toBe(false);
    expect(metrics.has('nested')).toBe(false);
    expect(unreadableLines).toBe(1);
  });

  it('counts a train step Miles prints twice once, so a missing step is seen', () => {
    // log_utils.py L542 and megatron_utils/model.py L854 print the same dict for one step.
    const line = (n: number) =>
      `[miles] (MegatronTrainRayActor pid=1) step ${n}: {'train/loss': 0.5, 'train/step': ${n}}`;
    const twice = scanMetricLines([line(0), line(0)]).metrics;
    expect(twice.get('train/step')).toEqual([{ step: 0, value: 0 }]);
    // Two rollout steps planned, only step 0 trained (printed twice): count(train/step) is 1, not 2.
    expect(scanMetricLines([line(0), line(0)]).metrics.get('train/step')).toHaveLength(1);
    expect(scanMetricLines([line(0), line(0), line(1), line(1)]).metrics.get('train/step')).toHaveLength(2);
  });

  it('streams a log file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'scan-'));
    try {
      writeFileSync(join(dir, 'launcher.log'), `${LOG.join('\n')}\n`);
      const { metrics } = await scanMetricLog(join(dir, 'launcher.log'));
      expect(metrics.get('train/step')?.length).toBe(2);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reads Python literals and refuses half-readable ones', () => {
    expect(parsePythonLiteral("{'a': [1, (2, 3)], \"b\": None, 'c': 'x\\'y', 'd': -1e-05}")).toEqual({
      a: [1, [2, 3]],
      b: null,
      c: "x'y",
      d: -1e-5,
    });
    for (const bad of ["{'a': 1", "{'a' 1}", "{'a': object()}", "{'a': 1} trailing", "{'a': np.f(1, 2)}"])
      expect(parsePythonLiteral(bad), bad).toBeUndefined();
  });
});
