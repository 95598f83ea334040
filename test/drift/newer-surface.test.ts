import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { captureIo } from '../../cli/io.ts';
import { main } from '../../cli/main.ts';
import { ARGPARSE_FROM_SURFACE } from '../../miles-bridge/entry-points.ts';
import { checkArgv } from '../../recipe/drift/check-argv.ts';
import { buildFlagIndex } from '../../recipe/drift/flag-index.ts';
import { DEFAULT_SURFACE_PATH, loadSurface } from '../../recipe/drift/load-surface.ts';
import { loadNewerMiles, newerSurface } from '../../recipe/drift/newer-surface.ts';
import { SurfaceVerdict } from '../../recipe/drift/problem.ts';
import { V2_DEFAULT_ARGV } from './helpers.ts';

async function check(args: string[]) {
  const io = captureIo({});
  const code = await main(['surface', 'check', '--json', ...args], io);
  return { code, verdict: SurfaceVerdict.parse(JSON.parse(io.out())) };
}

describe('harness surface check --miles newer', () => {
  test("names the surface it checked: 31f1ca96's own, or the newer Miles' session arguments over it", async () => {
    const old = await check(['--', '--session-server-port', '30000']);
    expect(old.verdict.surface).toMatchObject({ miles: '31f1ca96' });
    expect(old.verdict.surface.newer_source).toBeUndefined();
    const newer = await check(['--miles', 'newer', '--', '--session-server-port', '30000']);
    expect(newer.verdict.surface).toMatchObject({
      miles: 'newer',
      newer_source: 'sii-avalanche/miles@379af027c0ef5dafdbbe30a1459df8b848bc99a4',
    });
    expect(newer.verdict.overlays).toEqual(['379af027']);
  });

  test('reports the renamed --router-external-host and refuses the two-value --session-server-port', async () => {
    const argv = ['--router-external-host', 'h.example', '--session-server-port', '30000', '30004'];
    const old = await check(['--', ...argv]);
    expect(old.verdict.problems.map((p) => [p.flag, p.rule])).toEqual([
      ['--router-external-host', 'unknown-flag'],
    ]);
    const { code, verdict } = await check(['--miles', 'newer', '--', ...argv]);
    expect(code).toBe(1);
    expect(verdict.problems.map((p) => [p.flag, p.rule])).toEqual([
      ['--router-external-host', 'renamed'],
      ['--session-server-port', 'nargs'],
    ]);
    expect(verdict.problems[0]!.message).toContain('--session-server-external-host');
  });

  test('lists the newer default of each changed flag the argv leaves unset, and not of one it sets', async () => {
    const unset = await check(['--miles', 'newer', '--', '--use-session-server', 'v2']);
    expect(unset.verdict.defaults_changed?.map((d) => [d.flag, d.was, d.now])).toEqual([
      [
        '--session-sample-picker-path',
        'miles.rollout.session.v2.picker_hub.drop_retries',
        'miles.rollout.session.v2.picker_hub.drop_same_prompt_retries',
      ],
      ['--session-server-workers', '(no such flag)', 32],
      ['--session-server-external-host', '(no such flag)', null],
    ]);
    const set = await check([
      '--miles',
      'newer',
      '--',
      '--session-sample-picker-path',
      'miles.rollout.session.v2.picker_hub.drop_retries',
    ]);
    expect(set.verdict.defaults_changed?.map((d) => d.flag)).not.toContain('--session-sample-picker-path');
  });

  test("the recipe's V2 argv passes on the newer surface (its --session-server-workers is known there)", async () => {
    const { code, verdict } = await check(['--miles', 'newer', '--', ...V2_DEFAULT_ARGV]);
    expect(verdict.problems).toEqual([]);
    expect(code).toBe(0);
  });

  test('an unknown --miles is a usage error naming the choices', async () => {
    const io = captureIo({});
    expect(await main(['surface', 'check', '--miles', 'tomorrow', '--', '--lr', '1'], io)).toBe(2);
    expect(io.err()).toContain('--miles must be 31f1ca96 or newer');
  });
});

const pythonMissing = spawnSync('python3', ['--version']).error !== undefined;

// Python's own argparse, built from the same surface with the newer overlay applied
// (miles-bridge/argparse_oracle.py), says which argvs parse: the checker must agree.
describe.skipIf(pythonMissing)('the newer surface against Python argparse', () => {
  let dir = '';
  let path = '';
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'newer-surface-'));
    const base = JSON.parse(await readFile(DEFAULT_SURFACE_PATH, 'utf8')) as { overlays: unknown[] };
    base.overlays.push(loadNewerMiles().overlay);
    path = join(dir, 'surface.json');
    await writeFile(path, JSON.stringify(base));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  test('accepts and refuses what argparse does', async () => {
    const argvs = [
      ['--session-server-port', '30000'],
      ['--session-server-port', '30000', '30004'],
      ['--session-server-workers', '32'],
      ['--session-server-workers', 'many'],
      ['--session-server-external-host', 'trainer.example'],
      ['--session-sample-picker-path', 'miles.rollout.session.v2.picker_hub.drop_rolled_back_leaves'],
      ['--use-session-server', 'v2', '--session-server-port', '30000', '--session-server-workers', '4'],
    ];
    const answers = JSON.parse(
      execFileSync('python3', [ARGPARSE_FROM_SURFACE], {
        input: JSON.stringify({ surface: path, overlays: ['379af027'], argvs }),
      }).toString('utf8'),
    ) as { ok: boolean; extras?: string[] }[];
    const newer = newerSurface(await loadSurface(), loadNewerMiles());
    const index = buildFlagIndex(newer.surface, [newer.overlay]);
    const verdicts = argvs.map((argv, k) => {
      const problems = checkArgv(argv, index, { env: {} });
      const answer = answers[k]!;
      return [problems.length === 0, answer.ok && (answer.extras ?? []).length === 0];
    });
    for (const [checker, argparse] of verdicts) expect(checker).toBe(argparse);
    expect(verdicts.map(([c]) => c)).toEqual([true, false, true, false, true, true, true]);
  });
});
