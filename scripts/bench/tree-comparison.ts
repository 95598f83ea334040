import { median } from './stats.ts';

/**
 * What `npm run bench:compare` (compare-trees.ts) makes of its runs: per metric, each tree's values in
 * round order, their median, and that median's ratio to the first tree's.
 */

export type Tree = { readonly name: string; readonly dir: string };

/** A figure read from a probe's JSON: its label and where it is. */
export interface Metric {
  readonly label: string;
  readonly path: readonly (string | number)[];
}

export const QUICK_METRICS: readonly Metric[] = [
  { label: 'chat CPU per call, ms', path: ['session_server', 'cpu_ms_per_request'] },
  { label: 'chat CPU per call / baseline (c)', path: ['session_server', 'cpu_ratio_two_hop_json'] },
  { label: 'samples op CPU, ms', path: ['samples_op', 'op_cpu_ms'] },
  { label: 'step CPU (8 x 20 x 8k), ms', path: ['realistic_step', 'step_cpu_ms'] },
  { label: 'step CPU / baseline (c)', path: ['realistic_step', 'cpu_ratio_two_hop_json'] },
  { label: 'step peak RSS, MB', path: ['realistic_step', 'peak_rss_mb'] },
  { label: 'replay step, ms', path: ['replay', 'default_step', 'step_ms'] },
  { label: 'replay peak RSS, MB', path: ['replay', 'default_step', 'peak_rss_mb'] },
];

export const STEP_METRICS: readonly Metric[] = [
  { label: 'step wall, ms', path: ['step_ms', 0] },
  { label: 'step CPU (all processes), ms', path: ['step_cpu_ms', 0] },
  { label: 'session server CPU, ms', path: ['children', 'session', 'cpu_ms'] },
  { label: 'policy CPU, ms', path: ['children', 'policy', 'cpu_ms'] },
  { label: 'peak RSS (sum), MB', path: ['peak_rss_mb'] },
];

function read(value: unknown, path: readonly (string | number)[]): number | null {
  let at: unknown = value;
  for (const key of path) {
    if (at === null || typeof at !== 'object') return null;
    at = (at as Record<string | number, unknown>)[key];
  }
  return typeof at === 'number' && Number.isFinite(at) ? at : null;
}

export interface Comparison {
  readonly probe: 'quick' | 'step';
  readonly rounds: number;
  readonly trees: readonly Tree[];
  /** Per metric: each tree's values in round order, its median, and the median's ratio to the first tree's. */
  readonly metrics: ReadonlyArray<{
    readonly label: string;
    readonly trees: ReadonlyArray<{
      name: string;
      values: number[];
      median: number | null;
      ratio: number | null;
    }>;
  }>;
}

export function compare(
  probe: 'quick' | 'step',
  metricList: readonly Metric[],
  trees: readonly Tree[],
  runs: ReadonlyMap<string, unknown[]>,
  rounds: number,
): Comparison {
  const metrics = metricList.map((metric) => {
    const rows = trees.map((tree) => {
      const values = (runs.get(tree.name) ?? [])
        .map((run) => read(run, metric.path))
        .filter((v): v is number => v !== null);
      return { name: tree.name, values, median: values.length > 0 ? median(values) : null };
    });
    const base = rows[0]?.median ?? null;
    return {
      label: metric.label,
      trees: rows.map((row) => ({
        ...row,
        ratio: base === null || row.median === null || base === 0 ? null : row.median / base,
      })),
    };
  });
  return { probe, rounds, trees, metrics };
}

export function table(result: Comparison): string {
  const names = result.trees.map((t) => t.name);
  const cells = (m: Comparison['metrics'][number]) =>
    m.trees.map((t) =>
      t.median === null
        ? 'n/a'
        : `${Number(t.median.toPrecision(4))}${t.ratio === null || t === m.trees[0] ? '' : ` (x${t.ratio.toFixed(2)})`}`,
    );
  const rows = [
    ['metric (median of rounds)', ...names],
    ...result.metrics.map((m) => [m.label, ...cells(m)]),
  ];
  const widths = rows[0]!.map((_, col) => rows.reduce((most, r) => Math.max(most, r[col]!.length), 0));
  return rows
    .map((r) =>
      r
        .map((c, col) => c.padEnd(widths[col]!))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
