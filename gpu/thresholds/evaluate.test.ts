import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isHarnessError } from '../../common/errors.ts';
import type { MetricPoint } from '../../replay/run-check/log/metric-table.ts';
import { evaluateExpression } from './evaluate.ts';
import { parseExpression } from './expression.ts';

const metrics = new Map<string, MetricPoint[]>([
  [
    'train/step',
    [
      { step: 0, value: 0 },
      { step: 1, value: 1 },
    ],
  ],
  [
    'rollout/num_training_samples',
    [
      { step: 0, value: 11 },
      { step: 1, value: 9 },
    ],
  ],
  [
    'train/loss',
    [
      { step: 0, value: 0.5 },
      { step: 1, value: -0.25 },
    ],
  ],
  ['passrate/pass@1', [{ step: 0, value: 0.5 }]],
]);
const context = { variables: { rollout_count: 8, num_rollout: 2 }, metrics };
const passes = (expr: string): boolean => evaluateExpression(expr, context).passed;

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (error) {
    if (isHarnessError(error)) return error.code;
    throw error;
  }
  throw new Error('expected a HarnessError');
}

describe('threshold expressions', () => {
  it('decides the examples from the brief', () => {
    expect(passes('rollout/num_training_samples > rollout_count')).toBe(true); // last value 9 > 8
    expect(passes('min(rollout/num_training_samples) > rollout_count')).toBe(true);
    expect(passes('min(train/step) >= 1')).toBe(false);
    expect(passes('max(train/step) >= 1')).toBe(true);
    expect(passes('count(train/step) == num_rollout')).toBe(true);
  });

  it('reads values at a step, reduces series, and does arithmetic with precedence', () => {
    expect(passes('rollout/num_training_samples[0] == 11')).toBe(true);
    expect(passes('mean(train/loss) == 0.125')).toBe(true);
    expect(passes('sum(rollout/num_training_samples) == 20')).toBe(true);
    expect(passes('first(train/loss) - last(train/loss) == 0.75')).toBe(true);
    expect(passes('1 + 2 * 3 == 7 and (1 + 2) * 3 == 9')).toBe(true);
    expect(passes('rollout_count / 2 == 4')).toBe(true);
    expect(passes('-2 < abs(train/loss) and not false')).toBe(true);
    expect(passes('`passrate/pass@1` >= 0.5')).toBe(true);
    expect(passes('min(3, rollout_count, 5) == 3 && max(1, 2) == 2 || false')).toBe(true);
    expect(passes('has(rollout/missing) and rollout/missing > 0')).toBe(false);
    expect(passes('not has(rollout/missing) or rollout/missing > 0')).toBe(true);
  });

  it('records the observed value of every name and call as evidence', () => {
    const { observed } = evaluateExpression('min(train/step) >= 1 or rollout_count > 1', context);
    expect(observed).toEqual({ 'min(train/step)': 0, rollout_count: 8 });
    // A bare metric is its last value.
    expect(evaluateExpression('train/step == 1', context).observed).toEqual({ 'train/step': 1 });
  });

  it('reports a metric missing from the logs as such, naming the Miles that logs it', () => {
    // rollout/num_training_samples comes with PR #2710, after radixark/miles@31f1ca96.
    let error: unknown;
    try {
      // An older Miles: the log has train metrics but not this one.
      const older = new Map([...metrics].filter(([name]) => name !== 'rollout/num_training_samples'));
      evaluateExpression('min(rollout/num_training_samples) > rollout_count', { ...context, metrics: older });
    } catch (e) {
      error = e;
    }
    expect(error).toMatchObject({ code: 'threshold.metric_missing' });
    expect((error as Error).message).toContain("metric 'rollout/num_training_samples' was never logged");
    expect((error as Error).message).toContain('PR #2710');
  });

  it('fails with a stable code and names the expression', () => {
    const cases: [string, string][] = [
      ['rollout/nope > 1', 'threshold.metric_missing'],
      ['rollout_cuont > 1', 'threshold.unknown_name'],
      ['median(train/loss) > 0', 'threshold.unknown_function'],
      ['train/loss[7] > 0', 'threshold.missing_step'],
      ['train/loss + 1', 'threshold.not_boolean'],
      ['(1 > 0) + 1 > 0', 'threshold.type'],
      ['rollout_count and true', 'threshold.type'],
      ['rollout_count[0] > 1', 'threshold.type'],
      ['1 < 2 < 3', 'config.threshold_syntax'],
      ['min(train/step >= 1', 'config.threshold_syntax'],
      ['train/step >= ', 'config.threshold_syntax'],
      ['train/step $ 1', 'config.threshold_syntax'],
      ['`unclosed > 1', 'config.threshold_syntax'],
      ['', 'config.threshold_syntax'],
    ];
    for (const [expr, code] of cases)
      expect(
        codeOf(() => evaluateExpression(expr, context)),
        expr,
      ).toBe(code);
    // The failing expression travels with the error, so a report can name the threshold line.
    expect(() => evaluateExpression('rollout/nope > 1', context)).toThrow(
      expect.objectContaining({ details: { expression: 'rollout/nope > 1' } }),
    );
  });

  it('never executes code: JavaScript in an expression is a syntax error, not a call', () => {
    for (const evil of ['process.exit(1)', 'constructor.constructor("return 1")()', 'this', '`a`.b > 1'])
      expect(['config.threshold_syntax', 'threshold.unknown_function', 'threshold.unknown_name']).toContain(
        codeOf(() => evaluateExpression(evil, context)),
      );
  });

  it('agrees with JavaScript arithmetic on integer expressions (property)', () => {
    const leaf = fc
      .integer({ min: -50, max: 50 })
      .map((n) => ({ text: n < 0 ? `(${n})` : String(n), value: n }));
    const expr = fc.letrec<{ e: { text: string; value: number } }>((tie) => ({
      e: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        leaf,
        fc.tuple(tie('e'), fc.constantFrom('+', '-', '*'), tie('e')).map(([a, op, b]) => ({
          text: `(${a.text} ${op} ${b.text})`,
          value: op === '+' ? a.value + b.value : op === '-' ? a.value - b.value : a.value * b.value,
        })),
      ),
    })).e;
    fc.assert(
      fc.property(expr, ({ text, value }) => {
        expect(evaluateExpression(`${text} == ${value < 0 ? `(${value})` : value}`, context).passed).toBe(
          true,
        );
      }),
      { numRuns: 200 },
    );
  });

  it('parses `/` inside a name and ` / ` as division', () => {
    expect(parseExpression('a/b > 1')).toMatchObject({ left: { kind: 'name', name: 'a/b' } });
    expect(parseExpression('a / b > 1')).toMatchObject({ left: { kind: 'binary', op: '/' } });
  });
});
