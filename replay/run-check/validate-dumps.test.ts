import { readdirSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildDumpCases } from '../../scripts/fixtures/smoke-dumps/build.ts';
import { computeCompactionMetrics } from '../metrics/compaction-metrics.ts';
import { loadConvertedDumps } from './load-converted.ts';
import type { MetricPoint } from './log/metric-table.ts';
import { dumpSampleToReplay } from './to-check-data.ts';
import { overallVerdict, validateDumps } from './validate-dumps.ts';

const FIXTURES = new URL('../../fixtures/smoke/dumps/', import.meta.url).pathname;
const SHAPE = { n_samples_per_prompt: 4, rollout_batch_size: 2 };

async function verdicts(name: string, metrics = new Map<string, MetricPoint[]>()) {
  const checks = validateDumps(await loadConvertedDumps(join(FIXTURES, name)), SHAPE, metrics);
  return { checks, byName: Object.fromEntries(checks.map((c) => [c.name, c.verdict])) };
}

describe('dump validator on converted-dump fixtures', { timeout: 20_000 }, () => {
  it('the fixtures on disk are exactly what the builder makes (regenerate deliberately)', () => {
    const cases = buildDumpCases();
    expect(readdirSync(FIXTURES).sort()).toEqual(Object.keys(cases).sort());
    for (const [name, dumps] of Object.entries(cases)) {
      for (const doc of dumps.rollout) {
        const onDisk = JSON.parse(
          readFileSync(join(FIXTURES, name, 'rollout_data', `${doc.rollout_id}.json`), 'utf8'),
        );
        expect(onDisk, `${name}/rollout_data/${doc.rollout_id}`).toEqual(JSON.parse(JSON.stringify(doc)));
      }
      expect(readdirSync(join(FIXTURES, name, 'train_data')).length).toBe(dumps.train.length);
    }
  });

  it('passes a good compaction run, reusing the replay checks and the dump checks', async () => {
    const { checks, byName } = await verdicts('good');
    expect(byName).toMatchObject({
      exactly_once: 'pass',
      siblings_share_rollout_id_and_reward: 'pass',
      every_sample_trainable: 'pass',
      segmentation_invariance: 'pass',
      group_accounting: 'pass',
      // The dumps carry no trees, so this replay check cannot decide.
      only_generated_tokens_trained: 'undecided',
      loss_mask_shape: 'pass',
      compaction_happened: 'pass',
      train_mask_sums: 'pass',
      // Miles' own behaviour on any compacted run: a group with a compacted rollout has more rows than
      // n_samples_per_prompt, so --log-passrate's pass@k leaves it out (a finding, not a failure).
      pass_at_k_counts_every_group: 'finding',
    });
    expect(checks.filter((c) => c.source === 'replay').map((c) => c.name)).toContain('exactly_once');
    expect(overallVerdict(checks)).toBe('finding');
    expect(checks.filter((c) => c.verdict === 'fail')).toEqual([]);
  });

  const planted: [string, string, string][] = [
    ['defect-sibling-reward', 'siblings_share_rollout_id_and_reward', 'reward_mismatch'],
    ['defect-sibling-rollout-id', 'siblings_share_rollout_id_and_reward', 'rollout_id_unset'],
    ['defect-no-trainable-token', 'every_sample_trainable', 'no_trainable_token'],
    ['defect-double-trained', 'exactly_once', 'double_trained'],
    ['defect-mask-length', 'loss_mask_shape', ''],
    ['defect-mask-sums', 'train_mask_sums', ''],
    ['defect-no-compaction', 'compaction_happened', ''],
  ];
  for (const [fixture, check, kind] of planted)
    it(`catches ${fixture} in ${check}`, async () => {
      const { checks, byName } = await verdicts(fixture);
      expect(byName[check]).toBe('fail');
      expect(overallVerdict(checks)).toBe('fail');
      const found = checks.find((c) => c.name === check)!;
      expect(found.evidence.length).toBeGreaterThan(0);
      if (kind) expect(found.evidence.map((e) => e.kind)).toContain(kind);
      expect(found.evidence[0]!.step).toBeTypeOf('number');
    });

  it('reports rollouts that did not compact as a finding, not a failure', async () => {
    const { byName, checks } = await verdicts('partial-compaction');
    expect(byName.compaction_happened).toBe('finding');
    expect(overallVerdict(checks)).toBe('finding');
  });

  it('compares the logged compaction metrics with the dumps', async () => {
    const dumps = await loadConvertedDumps(join(FIXTURES, 'good'));
    const metrics = new Map<string, MetricPoint[]>();
    for (const dump of dumps.rollout) {
      const expected = computeCompactionMetrics(dump.samples.map((s) => dumpSampleToReplay(s)));
      for (const [name, value] of Object.entries(expected)) {
        if (value === undefined) continue;
        const points = metrics.get(name) ?? [];
        metrics.set(name, [...points, { step: Number(dump.rollout_id), value }]);
      }
    }
    expect((await verdicts('good', metrics)).byName.logged_metrics_match_dump).toBe('pass');
    const skewed = new Map(metrics);
    skewed.set('rollout/num_training_samples', [
      { step: 0, value: 999 },
      { step: 1, value: metrics.get('rollout/num_training_samples')![1]!.value },
    ]);
    const { checks } = await verdicts('good', skewed);
    const check = checks.find((c) => c.name === 'logged_metrics_match_dump')!;
    expect(check.verdict).toBe('fail');
    expect(check.evidence).toEqual([expect.objectContaining({ step: 0 })]);
  });

  it('checks the trained rollouts when the schedule dropped whole ones, and fails a rollout trained in part', async () => {
    const dumps = await loadConvertedDumps(join(FIXTURES, 'good'));
    /** The train dumps without the rows of `rollout` (and, with `onlyFirstRow`, only its first row). */
    const without = (rollout: number, onlyFirstRow: boolean) =>
      dumps.train.map((t) => {
        const d = t.rollout_data;
        const ids = d.rollout_ids!;
        const first = ids.indexOf(rollout);
        const keep = ids.map((id, i) => id !== rollout || (onlyFirstRow && i !== first));
        const pick = <T>(column: readonly T[] | undefined) => column?.filter((_, i) => keep[i]);
        return {
          ...t,
          rollout_data: {
            ...d,
            tokens: pick(d.tokens)!,
            loss_masks: pick(d.loss_masks)!,
            response_lengths: pick(d.response_lengths)!,
            rewards: pick(d.rewards)!,
            rollout_ids: pick(d.rollout_ids),
            sample_indices: pick(d.sample_indices),
            rollout_mask_sums: pick(d.rollout_mask_sums),
          },
        };
      });
    const compacted = dumps.train[0]!.rollout_data.rollout_ids!.find(
      (id, _, all) => all.filter((x) => x === id).length > 1,
    )!;
    const check = (train: typeof dumps.train) =>
      validateDumps({ rollout: dumps.rollout, train }, SHAPE, new Map()).find(
        (c) => c.name === 'segmentation_invariance',
      )!;
    // A whole rollout missing: as Miles' schedule drops leftovers (dp_schedule.py); the rest is checked.
    const dropped = check(without(compacted, false));
    expect(dropped.verdict).toBe('pass');
    expect(dropped.evidence).toContainEqual(expect.objectContaining({ kind: 'not_trained' }));
    // One sibling missing: Miles never splits a rollout, so this fails.
    const split = check(without(compacted, true));
    expect(split.verdict).toBe('fail');
    expect(split.evidence[0]).toMatchObject({ kind: 'partly_trained' });
  });

  it('says what is missing instead of passing when there are no train shards', async () => {
    const dumps = await loadConvertedDumps(join(FIXTURES, 'good'));
    const checks = validateDumps({ rollout: dumps.rollout, train: [] }, SHAPE, new Map());
    const byName = Object.fromEntries(checks.map((c) => [c.name, c]));
    expect(byName.train_mask_sums?.verdict).toBe('undecided');
    expect(byName.segmentation_invariance?.verdict).toBe('undecided');
    expect(byName.segmentation_invariance?.summary).toContain('advantages');
  });

  it('rejects a dump that does not have Miles layout, naming the file and field', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dumps-'));
    try {
      await cp(join(FIXTURES, 'good'), dir, { recursive: true });
      const file = join(dir, 'rollout_data', '1.json');
      const doc = JSON.parse(await readFile(file, 'utf8'));
      doc.samples[2].loss_mask = 'all';
      await writeFile(file, JSON.stringify(doc));
      await expect(loadConvertedDumps(dir)).rejects.toMatchObject({
        code: 'dumps.invalid',
        details: { file, path: 'samples.2.loss_mask' },
      });
      await writeFile(file, '{ not json');
      await expect(loadConvertedDumps(dir)).rejects.toMatchObject({
        code: 'dumps.unreadable',
        details: { file },
      });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('tells eval dumps from training steps by file name (Miles writes an integer rollout_id in both)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'dumps-'));
    try {
      await cp(join(FIXTURES, 'good'), dir, { recursive: true });
      // save_debug_rollout_data writes rollout_data/eval_0.pt with rollout_id=0 (debug_data.py).
      const eval0 = JSON.parse(await readFile(join(dir, 'rollout_data', '0.json'), 'utf8'));
      eval0.samples = eval0.samples.slice(0, 1);
      await writeFile(join(dir, 'rollout_data', 'eval_0.json'), JSON.stringify(eval0));
      const dumps = await loadConvertedDumps(dir);
      expect(dumps.rollout.map((d) => d.rollout_id)).toEqual([0, 1]);
      expect(dumps.rollout[0]!.samples.length).toBeGreaterThan(1);
      expect(dumps.rollout.every((d) => !d.source.includes('eval_'))).toBe(true);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('says a folder without rollout dumps is missing them', async () => {
    await expect(loadConvertedDumps(join(FIXTURES, 'no-such-case'))).rejects.toMatchObject({
      code: 'dumps.missing',
    });
  });
});
