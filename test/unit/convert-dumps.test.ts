import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConvertedDumps } from '../../replay/run-check/load-converted.ts';
import { validateDumps } from '../../replay/run-check/validate-dumps.ts';

// miles-bridge/convert_dumps.py: its pure-Python parts run wherever python3 does; the torch round trip needs
// an interpreter with torch (the GPU runner has one; elsewhere the test says it is skipped and why).
const SCRIPT = new URL('../../miles-bridge/convert_dumps.py', import.meta.url).pathname;
const SCRIPTS_DIR = new URL('../../miles-bridge/', import.meta.url).pathname;
const FIXTURE = new URL('../../fixtures/smoke/dumps/good/', import.meta.url).pathname;

function works(python: string, code: string): boolean {
  return spawnSync(python, ['-c', code], { stdio: 'ignore' }).status === 0;
}
const PYTHON = ['python3', '/usr/bin/python3'].find((p) => works(p, 'import sys'));
// Where torch is installed, without importing it here: its import costs seconds, and the round trip
// below imports it anyway (a torch that is installed but broken fails the test instead of skipping it).
const TORCH_PYTHON = ['python3', '/usr/bin/python3'].find((p) =>
  works(p, "import importlib.util, sys; sys.exit(importlib.util.find_spec('torch') is None)"),
);
if (!PYTHON) console.warn('[skip] convert_dumps.py tests: no python3 on this machine');
if (!TORCH_PYTHON)
  console.warn('[skip] convert_dumps.py torch round trip: no python3 here has torch installed');

const dirs: string[] = [];
const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'convert-dumps-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function runPython(python: string, code: string, env: Record<string, string> = {}): string {
  return execFileSync(python, ['-c', code], {
    encoding: 'utf8',
    env: { ...process.env, PYTHONPATH: SCRIPTS_DIR, PYTHONDONTWRITEBYTECODE: '1', ...env },
  });
}

// Python start-up (and torch's import) is slow on a loaded two-core machine.
describe.skipIf(!PYTHON)('convert_dumps.py without torch', { timeout: 30_000 }, () => {
  it('turns tensors, numpy values, enums, dataclasses and non-finite floats into JSON values', () => {
    const out = runPython(
      PYTHON!,
      `
import dataclasses, enum, json, math
import convert_dumps as c
class FakeTensor:
    def __init__(self, v, floating=False): self.v, self.floating, self.calls = v, floating, []
    def detach(self): self.calls.append('detach'); return self
    def cpu(self): self.calls.append('cpu'); return self
    def is_floating_point(self): return self.floating
    def float(self): self.calls.append('float'); return self
    def tolist(self): return self.v
class Status(enum.Enum):
    COMPLETED = 'completed'
@dataclasses.dataclass(frozen=True)
class AdapterRef:
    name: str
    slot: int
t = FakeTensor([[1.5, float('nan')], [float('inf'), 2.0]], floating=True)
stats = c.Stats()
value = {'t': t, 's': Status.COMPLETED, 'a': AdapterRef('x', 1), 'tuple': (1, 2), 3: None, 'odd': object.__new__(object)}
result = c.to_jsonable(value, stats)
result['odd'] = 'repr' if '__repr__' in result['odd'] else result['odd']
print(json.dumps({'result': result, 'non_finite': stats.non_finite, 'calls': t.calls}))
`,
    );
    expect(JSON.parse(out)).toEqual({
      result: {
        t: [
          [1.5, null],
          [null, 2],
        ],
        s: 'completed',
        a: { name: 'x', slot: 1 },
        tuple: [1, 2],
        '3': null,
        odd: 'repr',
      },
      non_finite: 2,
      calls: ['detach', 'cpu', 'float'],
    });
  });

  it('converts a details folder with any loader, into JSON the smoke validator reads', async () => {
    const details = tempDir();
    const out = join(tempDir(), 'converted');
    // The good fixture's documents, pickled in place of torch files: the converter's walk, naming and
    // output are exercised; only torch.load is swapped for pickle.load.
    runPython(
      PYTHON!,
      `
import json, pickle, pathlib, sys
src, dst = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ${JSON.stringify(FIXTURE)}), pathlib.Path(${JSON.stringify(details)})
for kind in ('rollout_data', 'train_data'):
    (dst / kind).mkdir(parents=True)
    for f in (src / kind).glob('*.json'):
        doc = json.loads(f.read_text())
        payload = {k: v for k, v in doc.items() if k not in ('kind', 'source')}
        (dst / kind / (f.stem + '.pt')).write_bytes(pickle.dumps(payload))
(dst / 'rollout_data' / 'notes.txt').write_text('not a dump')
`,
    );
    const summary = JSON.parse(
      runPython(
        PYTHON!,
        `
import json, pickle
import convert_dumps as c
print(json.dumps(c.convert(${JSON.stringify(details)}, ${JSON.stringify(out)}, load=lambda p: pickle.loads(open(p, 'rb').read()))))
`,
      ),
    );
    expect(summary.rollout_data).toHaveLength(2);
    expect(summary.train_data).toHaveLength(8);
    expect(summary.non_finite_replaced).toBe(0);
    const dumps = await loadConvertedDumps(out);
    expect(dumps.rollout.map((d) => d.rollout_id)).toEqual([0, 1]);
    const original = JSON.parse(readFileSync(join(FIXTURE, 'rollout_data', '0.json'), 'utf8'));
    // The converter adds each numeric reward's Python type (JSON keeps 1 and 1.0 apart only as text).
    expect(dumps.rollout[0]!.samples.map(({ reward_python_type: _, ...s }) => s)).toEqual(original.samples);
    expect(dumps.rollout[0]!.samples.map((s) => s.reward_python_type)).toEqual(
      original.samples.map((s: { reward: number }) => (Number.isInteger(s.reward) ? 'int' : 'float')),
    );
    const checks = validateDumps(dumps, { n_samples_per_prompt: 4, rollout_batch_size: 2 }, new Map());
    expect(checks.filter((c) => c.verdict === 'fail')).toEqual([]);
  });

  it('exits 3 with a clear message when torch cannot be imported', () => {
    const details = tempDir();
    mkdirSync(join(details, 'rollout_data'));
    writeFileSync(join(details, 'rollout_data', '0.pt'), 'x');
    // A `torch` that fails to import stands in for a missing one, even where torch is installed.
    const shadow = tempDir();
    writeFileSync(join(shadow, 'torch.py'), 'raise ImportError("No module named \'torch\'")\n');
    const run = spawnSync(PYTHON!, [SCRIPT, '--details', details, '--out', join(details, 'out')], {
      encoding: 'utf8',
      env: { ...process.env, PYTHONPATH: shadow },
    });
    expect(run.status).toBe(3);
    expect(run.stderr).toMatch(/torch is not importable/);
  });

  it('exits 4 when there is nothing to convert and 2 on bad usage', () => {
    const empty = tempDir();
    expect(spawnSync(PYTHON!, [SCRIPT, '--details', empty, '--out', join(empty, 'o')]).status).toBe(4);
    expect(spawnSync(PYTHON!, [SCRIPT, '--details', join(empty, 'nope'), '--out', empty]).status).toBe(4);
    expect(spawnSync(PYTHON!, [SCRIPT, '--bogus'], { stdio: 'ignore' }).status).toBe(2);
  });
});

describe.skipIf(!TORCH_PYTHON)(
  'convert_dumps.py with torch: a .pt written in Miles layout',
  // A safety net, not a speed bound: torch's import takes a few CPU-seconds, and far longer in wall time
  // while the other worker and other work share the two cores.
  { timeout: 180_000 },
  () => {
    it('round-trips rollout_data and train_data (tensors, float32 rewards) into the validator', async () => {
      const details = tempDir();
      const out = join(tempDir(), 'converted');
      // Miles' writers: torch.save(dict(rollout_id, metadata, samples=[Sample.to_dict()...])) and
      // torch.save(dict(rollout_id, rank, rollout_data, cp_rank, cp_size, qkv_format)) with tensor columns.
      execFileSync(
        TORCH_PYTHON!,
        [
          '-c',
          `
import json, pathlib, torch
src, dst = pathlib.Path(${JSON.stringify(FIXTURE)}), pathlib.Path(${JSON.stringify(details)})
(dst / 'rollout_data').mkdir(parents=True); (dst / 'train_data').mkdir(parents=True)
for f in (src / 'rollout_data').glob('*.json'):
    doc = json.loads(f.read_text())
    torch.save(dict(rollout_id=doc['rollout_id'], metadata=doc['metadata'], samples=doc['samples']), dst / 'rollout_data' / (f.stem + '.pt'))
for f in (src / 'train_data').glob('*.json'):
    doc = json.loads(f.read_text()); d = doc['rollout_data']
    data = dict(d)
    data['tokens'] = [torch.tensor(t, dtype=torch.long) for t in d['tokens']]
    data['loss_masks'] = [torch.tensor(m, dtype=torch.int) for m in d['loss_masks']]
    data['rewards'] = torch.tensor(d['rewards'], dtype=torch.float32)
    data['rollout_mask_sums'] = torch.tensor(d['rollout_mask_sums'], dtype=torch.float32)
    torch.save(dict(rollout_id=doc['rollout_id'], rank=doc['rank'], rollout_data=data, cp_rank=0, cp_size=1, qkv_format='thd'), dst / 'train_data' / (f.stem + '.pt'))
`,
        ],
        { encoding: 'utf8' },
      );
      const run = spawnSync(TORCH_PYTHON!, [SCRIPT, '--details', details, '--out', out], {
        encoding: 'utf8',
      });
      expect(run.stderr).toBe('');
      expect(run.status).toBe(0);
      const dumps = await loadConvertedDumps(out);
      expect(dumps.rollout).toHaveLength(2);
      expect(dumps.train).toHaveLength(8);
      const original = JSON.parse(readFileSync(join(FIXTURE, 'train_data', '0_0.json'), 'utf8'));
      const shard = dumps.train.find((t) => t.rollout_id === 0 && t.rank === 0)!;
      expect(shard.rollout_data.tokens).toEqual(original.rollout_data.tokens);
      shard.rollout_data.rewards.forEach((r, i) => {
        expect(r).toBeCloseTo(original.rollout_data.rewards[i], 6);
      });
      const checks = validateDumps(dumps, { n_samples_per_prompt: 4, rollout_batch_size: 2 }, new Map());
      expect(Object.fromEntries(checks.map((c) => [c.name, c.verdict]))).toMatchObject({
        segmentation_invariance: 'pass',
        train_mask_sums: 'pass',
        siblings_share_rollout_id_and_reward: 'pass',
      });
    });
  },
);
