import type { NpmTestFileResult } from '../result-schema.ts';
import { machineLine } from './format.ts';

/** docs/performance.md "Test suite budget": benchmarks/results/npm-test.json, when it has been measured. */

const BUDGET_S = 120;

export function npmTestFigures(r: NpmTestFileResult | null): string {
  if (r === null)
    return 'No `npm test` timing in `benchmarks/results/` yet: `node scripts/bench/npm-test-bench.ts --out benchmarks/results/npm-test.json`, then `npm run docs:figures`.';
  const cpu =
    r.cpu_s === null ? 'CPU not read (no python3)' : `${r.cpu_s} CPU-s (${r.user_s} user + ${r.sys_s} sys)`;
  const verdict = r.wall_s <= BUDGET_S ? 'within' : 'over';
  return `\`node scripts/bench/npm-test-bench.ts --out benchmarks/results/npm-test.json\`: ${machineLine(r.machine, r.started_at)}. \`npm test\` **${r.wall_s} s wall, ${cpu}**, exit ${r.exit_code}${r.summary === null ? '' : ` (${r.summary})`}: ${verdict} the ${BUDGET_S} s budget.`;
}
