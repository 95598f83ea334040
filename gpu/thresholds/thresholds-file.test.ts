import { describe, expect, it } from 'vitest';
import { isHarnessError } from '../../common/errors.ts';
import type { MetricPoint } from '../../replay/run-check/log/metric-table.ts';
import { applyThresholds } from './apply-thresholds.ts';
import { loadThresholds, parseThresholds } from './thresholds-file.ts';

describe('thresholds file', () => {
  it('reads one expression per line, skipping comments and blank lines', () => {
    const parsed = parseThresholds('# header\n\nmax(train/step) >= 1  # at least two steps\n`a#b` > 0\n');
    expect(parsed).toEqual([
      { expression: 'max(train/step) >= 1', line: 3 },
      { expression: '`a#b` > 0', line: 4 },
    ]);
  });

  it('rejects a syntax error up front with the file and line (a config error, exit 2)', () => {
    try {
      parseThresholds('ok > 1\nmin(x >= 1\n', 'thresholds.txt');
      throw new Error('expected failure');
    } catch (error) {
      expect(isHarnessError(error) && error.code).toBe('config.threshold_syntax');
      expect((error as Error).message).toContain('thresholds.txt:2');
    }
    expect(() => parseThresholds('# nothing\n')).toThrow(/no threshold/);
  });

  it('loads the bundled smoke thresholds', async () => {
    const thresholds = await loadThresholds(
      new URL('../../fixtures/smoke/thresholds.txt', import.meta.url).pathname,
    );
    expect(thresholds.length).toBeGreaterThan(2);
  });

  it('applies thresholds: pass, fail, and a named error for what cannot be evaluated', () => {
    const metrics = new Map<string, MetricPoint[]>([['train/step', [{ step: 0, value: 0 }]]]);
    const results = applyThresholds(
      parseThresholds('count(train/step) >= 1\nmax(train/step) >= 1\nnope > 1\n'),
      {
        variables: {},
        metrics,
      },
    );
    expect(results.map((r) => r.verdict)).toEqual(['pass', 'fail', 'error']);
    expect(results[2]?.error?.code).toBe('threshold.unknown_name');
    expect(results[1]?.observed).toEqual({ 'max(train/step)': 0 });
  });
});
