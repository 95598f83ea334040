import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { median } from './stats.ts';
import { compare, table } from './tree-comparison.ts';

const metrics = [
  { label: 'cpu', path: ['a', 'cpu'] },
  { label: 'first step', path: ['steps', 0] },
];
const trees = [
  { name: 'before', dir: '/b' },
  { name: 'after', dir: '/a' },
];
const run = (cpu: number, step: number) => ({ a: { cpu }, steps: [step, 999] });

describe('bench:compare arithmetic', () => {
  it('takes the median of each tree’s rounds and its ratio to the first tree’s median', () => {
    const runs = new Map([
      ['before', [run(10, 4), run(30, 2), run(20, 3)]],
      ['after', [run(15, 1), run(5, 9), run(12, 3)]],
    ]);
    const result = compare('quick', metrics, trees, runs, 3);
    expect(result.metrics).toEqual([
      {
        label: 'cpu',
        trees: [
          { name: 'before', values: [10, 30, 20], median: 20, ratio: 1 },
          { name: 'after', values: [15, 5, 12], median: 12, ratio: 0.6 },
        ],
      },
      {
        label: 'first step',
        trees: [
          { name: 'before', values: [4, 2, 3], median: 3, ratio: 1 },
          { name: 'after', values: [1, 9, 3], median: 3, ratio: 1 },
        ],
      },
    ]);
  });

  it('leaves out what a run lacks, and gives no ratio without a baseline figure', () => {
    const runs = new Map<string, unknown[]>([
      ['before', [{ a: {} }, { a: { cpu: 'x' } }]],
      ['after', [run(4, 1), { a: { cpu: 8 } }]],
    ]);
    const [cpu] = compare('quick', metrics, trees, runs, 2).metrics;
    expect(cpu!.trees).toEqual([
      { name: 'before', values: [], median: null, ratio: null },
      { name: 'after', values: [4, 8], median: 6, ratio: null },
    ]);
  });

  it('prints one row per metric under a header of tree names, the ratio beside each later tree', () => {
    const runs = new Map<string, unknown[]>([
      ['before', [run(10, 4)]],
      ['after', [{ a: { cpu: 5 } }]],
    ]);
    const rows = table(compare('quick', metrics, trees, runs, 1))
      .split('\n')
      .map((line) => line.split(/\s{2,}/));
    expect(rows).toEqual([
      ['metric (median of rounds)', 'before', 'after'],
      ['cpu', '10', '5 (x0.50)'],
      ['first step', '4', 'n/a'],
    ]);
  });

  it('finds the median of odd and even counts', () => {
    expect([median([3, 1, 2]), median([4, 1, 3, 2]), median([7])]).toEqual([2, 2.5, 7]);
  });
});

describe('npm run bench:compare, wrong input', () => {
  const script = fileURLToPath(new URL('./compare-trees.ts', import.meta.url));
  const cli = (...args: string[]) => spawnSync(process.execPath, [script, ...args], { encoding: 'utf8' });

  it('names the flag and exits 2: one tree, a tree that is no checkout, an unknown probe', () => {
    const here = fileURLToPath(new URL('../..', import.meta.url));
    for (const [args, flag] of [
      [['--tree', `a=${here}`], '--tree'],
      [['--tree', `a=${here}`, '--tree', 'b=/nonexistent'], '--tree'],
      [['--tree', `a=${here}`, '--tree', `b=${here}`, '--probe', 'slow'], '--probe'],
      [['--tree', 'no-equals-sign', '--tree', `b=${here}`], '--tree'],
    ] as const) {
      const result = cli(...args);
      expect({ args, status: result.status, names: result.stderr.includes(`${flag}:`) }).toEqual({
        args,
        status: 2,
        names: true,
      });
    }
    expect(cli('--rounds').status).toBe(2);
  });
});
