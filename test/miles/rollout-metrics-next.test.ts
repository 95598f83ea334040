import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nextOracleCases, type OracleCaseBase, parseOracleCases } from '../../replay/testing/oracle-cases.ts';

// The newer metrics.py on CPU (scripts/oracles/metrics_next_oracle.py), run live when this machine has
// it: MILES_NEXT_ROOT (a tree with sii-avalanche@4d412b5a's miles/utils/types.py, e.g. the miles-next
// overlay) and MILES_NEXT_METRICS_PY (the newer miles/ray/rollout/metrics.py; docs/replay.md says which).
// Its output must be the committed vectors (fixtures/miles-oracle/rollout-metrics-next.json).

const ROOT = new URL('../../', import.meta.url).pathname;
const ORACLE = join(ROOT, 'scripts/oracles/metrics_next_oracle.py');
const root = process.env.MILES_NEXT_ROOT ?? '';
const metricsPy = process.env.MILES_NEXT_METRICS_PY ?? '';
const python = process.env.HARNESS_MILES_PYTHON ?? '/usr/bin/python3';
const missing = [
  ...(root !== '' && existsSync(join(root, 'miles/utils/types.py'))
    ? []
    : ['MILES_NEXT_ROOT (a newer Miles tree)']),
  ...(metricsPy !== '' && existsSync(metricsPy) ? [] : ['MILES_NEXT_METRICS_PY (the newer metrics.py)']),
];
if (missing.length > 0) console.warn(`[skip] newer rollout metrics, live: no ${missing.join(', no ')}`);

describe.skipIf(missing.length > 0)("the newer metrics.py's own output, live", () => {
  let dir = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'metrics-next-oracle-'));
  });
  afterAll(async () => {
    if (dir !== '') await rm(dir, { recursive: true, force: true });
  });

  it('regenerates the committed vectors exactly', async () => {
    const run = await execa(python, [ORACLE, '--miles-root', root, '--metrics-py', metricsPy, '--out', dir], {
      reject: false,
      stdin: 'ignore',
    });
    expect(run.exitCode, run.stderr).toBe(0);
    const live = parseOracleCases<OracleCaseBase>(
      await readFile(join(dir, 'rollout-metrics-next.json'), 'utf8'),
    );
    expect(live.map((c) => c.name)).toEqual(nextOracleCases.map((c) => c.name));
    for (const [k, c] of live.entries()) expect(c.logged, c.name).toEqual(nextOracleCases[k]!.logged);
  }, 120_000);
});
