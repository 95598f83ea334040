import { cp, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { beforeAll, describe, expect, test } from 'vitest';
import { checkArgv } from '../../recipe/drift/check-argv.ts';
import { buildFlagIndex } from '../../recipe/drift/flag-index.ts';
import { parseSurface } from '../../recipe/drift/load-surface.ts';
import type { FlagRecord, Surface } from '../../recipe/drift/surface-schema.ts';
import { fixturePath, rulesOf } from './helpers.ts';

const SCRIPT = fixturePath('scripts/fixtures/refresh-surface');
const FIXTURE = fixturePath('test/drift/fixtures/refresh');
const PREVIOUS = join(FIXTURE, 'previous-surface.json');
const MILES_SHA = 'a'.repeat(40);
const MEGATRON_SHA = 'b'.repeat(40);

async function refresh(args: string[]) {
  return execa(SCRIPT, args, { reject: false });
}

describe('scripts/fixtures/refresh-surface on the fixture checkouts', () => {
  let surface: Surface;
  let report: string[];
  const flag = (name: string): FlagRecord | undefined => surface.flags.find((f) => f.flag === name);

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'refresh-'));
    const out = join(dir, 'surface.json');
    const result = await refresh([
      '--miles',
      join(FIXTURE, 'miles'),
      '--megatron',
      join(FIXTURE, 'megatron'),
      '--previous',
      PREVIOUS,
      '--miles-commit',
      MILES_SHA,
      '--megatron-commit',
      MEGATRON_SHA,
      '--out',
      out,
    ]);
    expect(result.exitCode, result.stderr).toBe(0);
    surface = parseSurface(JSON.parse(await readFile(out, 'utf8')), out);
    report = result.stderr.split('\n');
  });

  test('writes a valid miles-cli-surface/1 file with the new provenance and the rest kept', async () => {
    const previous = JSON.parse(await readFile(PREVIOUS, 'utf8')) as Surface;
    expect(surface.sources.miles).toMatchObject({ repo: 'radixark/miles', commit: MILES_SHA });
    expect(surface.sources.megatron).toMatchObject({ commit: MEGATRON_SHA, branch: 'miles-main' });
    expect(surface.sources.sglang).toEqual(previous.sources.sglang);
    expect(surface.prefix_rules).toEqual(previous.prefix_rules);
    expect(surface.notes).toEqual(previous.notes);
    expect(surface.flags.map((f) => f.flag)).toEqual([...surface.flags.map((f) => f.flag)].sort());
  });

  test('reads explicit add_argument calls: kinds, nargs, choices (named lists and enum comprehensions), defaults', () => {
    expect(flag('--rollout-batch-size')).toMatchObject({
      kind: 'value',
      type: 'int',
      required: true,
      source: 'miles',
    });
    expect(flag('--rollout-shuffle')).toMatchObject({ kind: 'store_true', default: false });
    expect(flag('--offload-rollout')).toMatchObject({
      kind: 'boolean_optional',
      aliases: ['--no-offload-rollout'],
    });
    expect(flag('--session-server-port')).toMatchObject({ kind: 'nargs', nargs: '+', type: 'int' });
    expect(flag('--use-session-server')).toMatchObject({
      kind: 'nargs',
      nargs: '?',
      const: true,
      default: false,
    });
    expect(flag('--multi-lora-adapter')).toMatchObject({
      kind: 'append',
      nargs: 2,
      dest: 'multi_lora_adapters',
    });
    expect(flag('--tito-model')?.choices).toEqual(['default', 'glm47']);
    expect(flag('--ft-components')?.choices).toEqual(['rollout', 'train']);
    expect(flag('--prometheus-port')).toMatchObject({ default: 'int("9090")', default_is_literal: false });
    expect(flag('--rollout-shuffle')?.where).toMatch(
      /^miles\/utils\/arguments\.py:\d+ \(add_rollout_arguments\)$/,
    );
  });

  test('scopes: generate hooks and the kitchen extension', () => {
    expect(flag('--max-seq-len')).toMatchObject({
      source: 'miles-generate-hook',
      scope: 'generate-hook:agentic_tool_call',
    });
    expect(flag('--kitchen-recipe-number')).toMatchObject({
      source: 'megatron',
      scope: 'megatron-kitchen-only',
    });
  });

  test("Megatron's ArgumentGroupFactory flags follow its dataclass rules", () => {
    expect(flag('--micro-batch-size')?.where).toContain(
      'TrainingConfig.micro_batch_size via ArgumentGroupFactory',
    );
    expect(flag('--global-batch-size')).toMatchObject({ kind: 'value', type: 'int', default: null });
    expect(flag('--rampup-batch-size')).toMatchObject({ kind: 'nargs', nargs: '+', type: 'int' });
    expect(flag('--lr-decay-style')).toMatchObject({
      choices: ['constant', 'linear', 'cosine'],
      default: 'linear',
    });
    expect(flag('--no-check-for-nan-in-loss')).toMatchObject({
      kind: 'store_false',
      aliases: ['--disable-check-for-nan-in-loss'],
      dest: 'check_for_nan_in_loss',
    });
    expect(flag('--use-distributed-optimizer')).toMatchObject({ kind: 'store_true' });
    expect(flag('--attention-backend')).toMatchObject({
      type: 'AttnBackend[<member name>]',
      choices: ['flash', 'fused', 'auto'],
      default: 'AttnBackend.auto',
      default_is_literal: false,
    });
    expect(flag('--exit-signal')?.choices).toContain('SIGTERM');
    expect(flag('--log-interval')).toMatchObject({ dest: 'log_interval', default: 100 });
    // Excluded, init=False, and types argparse cannot be told are not flags.
    for (const absent of ['--internal-counter', '--derived-total', '--hooks', '--log-every'])
      expect(flag(absent)).toBeUndefined();
  });

  test("Miles' reset_arg changes a Megatron default, or adds the flag Megatron lacks", () => {
    expect(flag('--lr')).toMatchObject({ source: 'megatron', default: 1e-6, megatron_default: null });
    expect(flag('--lr')?.where).toContain('default reset by Miles reset_arg at miles/utils/arguments.py:');
    expect(flag('--save')?.where).toContain('no default given: nothing changed');
    expect(flag('--custom-config-path')).toMatchObject({ source: 'miles', kind: 'value', type: 'str' });
  });

  test('carries over what no checkout holds, drops removed flags and landed overlay flags', () => {
    expect(flag('--sglang-mem-fraction-static')).toMatchObject({
      source: 'sglang',
      origin: 'sglang-server-args',
    });
    expect(flag('--seed')?.fsdp_backend).toMatchObject({ default: 42 });
    expect(flag('--old-removed-flag')).toBeUndefined();
    expect(surface.overlays.map((o) => o.evidence)).toEqual([expect.stringContaining('inference.py')]);
    expect(report).toContain('refresh-surface: removed: --old-removed-flag');
    expect(report).toContain('refresh-surface: changed: --tito-model');
    expect(report).toContain(
      'refresh-surface: overlay flag now accepted by Miles itself, dropped from its overlay: --session-server-workers',
    );
  });

  test('the checker runs on the refreshed surface', () => {
    const index = buildFlagIndex(surface);
    expect(
      checkArgv(['--session-server-workers', '8', '--tito-model', 'glm47', '--lr', '1e-6'], index),
    ).toEqual([]);
    expect(rulesOf(checkArgv(['--old-removed-flag', '--tito-model', 'glm5'], index))).toEqual([
      { flag: '--old-removed-flag', rule: 'unknown-flag' },
      { flag: '--tito-model', rule: 'not-in-choices' },
    ]);
  });
});

describe('scripts/fixtures/refresh-surface provenance and errors', () => {
  test('takes the commit and date from a git checkout', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'refresh-git-'));
    const miles = join(dir, 'miles');
    await cp(join(FIXTURE, 'miles'), miles, { recursive: true });
    const git = (...args: string[]) =>
      execa('git', ['-C', miles, '-c', 'user.name=t', '-c', 'user.email=t@example.invalid', ...args]);
    await git('init', '-q');
    await git('add', '.');
    await git('commit', '-q', '-m', 'fixture');
    const sha = (await git('rev-parse', 'HEAD')).stdout.trim();
    const result = await refresh(['--miles', miles, '--previous', PREVIOUS]);
    expect(result.exitCode, result.stderr).toBe(0);
    const surface = parseSurface(JSON.parse(result.stdout), 'stdout');
    expect(surface.sources.miles.commit).toBe(sha);
    expect(surface.sources.miles.date).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    // Without --megatron the Megatron records and provenance are kept as they were.
    expect(surface.sources.megatron?.commit).toBe('2'.repeat(40));
    expect(surface.flags.find((f) => f.flag === '--seed')?.source).toBe('megatron');
  });

  test('a folder that is not a checkout root needs --miles-commit (exit 2)', async () => {
    const result = await refresh(['--miles', join(FIXTURE, 'miles'), '--previous', PREVIOUS]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('--miles-commit');
  });

  test.each([
    [
      'a missing Miles folder',
      ['--miles', '/nonexistent/miles', '--miles-commit', MILES_SHA],
      /--miles \/nonexistent\/miles: no such folder/,
    ],
    [
      'a folder that is not a Miles checkout',
      ['--miles', FIXTURE, '--miles-commit', MILES_SHA],
      /--miles .*: has no miles\/utils\/arguments\.py/,
    ],
    [
      'a malformed Miles commit',
      ['--miles', join(FIXTURE, 'miles'), '--miles-commit', 'abc'],
      /--miles-commit 'abc': expected a commit of 7 to 40/,
    ],
    [
      'a malformed Megatron commit',
      [
        '--miles',
        join(FIXTURE, 'miles'),
        '--miles-commit',
        MILES_SHA,
        '--megatron',
        join(FIXTURE, 'megatron'),
        '--megatron-commit',
        'HEAD',
      ],
      /--megatron-commit 'HEAD'/,
    ],
  ])('%s is a usage error before any work (exit 2, nothing written)', async (_name, args, message) => {
    const dir = await mkdtemp(join(tmpdir(), 'refresh-usage-'));
    const out = join(dir, 'surface.json');
    const result = await refresh([...args, '--previous', PREVIOUS, '--out', out]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toMatch(message);
    await expect(readFile(out, 'utf8')).rejects.toThrow(/ENOENT/);
  });

  test('a previous file in another format is refused (exit 2)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'refresh-bad-'));
    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ format: 'something-else/1' }));
    const result = await refresh([
      '--miles',
      join(FIXTURE, 'miles'),
      '--previous',
      bad,
      '--miles-commit',
      MILES_SHA,
    ]);
    expect(result.exitCode).toBe(2);
    expect(result.stderr).toContain('miles-cli-surface/1');
  });
});
