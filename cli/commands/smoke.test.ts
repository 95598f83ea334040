import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EXIT } from '../../common/exit-codes.ts';
import { SmokePlanSchema } from '../../gpu/plan/smoke-plan.ts';
import { SmokeReportSchema } from '../../gpu/report/smoke-report.ts';
import { captureIo } from '../io.ts';
import { main } from '../main.ts';

const ENV = {
  WANDB_API_KEY: 'wandb-secret-123456',
  HARBOR_ADMIN_SECRET: 'harbor-secret-654321',
  MILES_ROOT: '/src/miles',
};

async function smoke(argv: string[], env: Record<string, string> = ENV) {
  const io = captureIo(env, { cwd: '/work/ci' });
  const code = await main(['smoke', ...argv], io);
  return { code, out: io.out(), err: io.err() };
}

describe('harness smoke --dry-run', { timeout: 20_000 }, () => {
  it('prints the plan as JSON: launcher, train argv, harbor, ports, paths and thresholds', async () => {
    const { code, out } = await smoke(['--dry-run', '--json', '--run-id', 'nightly-1', '--gpus', '4']);
    expect(code).toBe(0);
    const plan = SmokePlanSchema.parse(JSON.parse(out));
    expect(plan.run_id).toBe('nightly-1');
    expect(plan.paths.run_dir).toBe('/work/ci/.smoke/nightly-1');
    expect(plan.paths.details_dir).toBe('/work/ci/.smoke/nightly-1/details');
    expect(plan.launcher.command).toBe('python3');
    expect(plan.launcher.args[0]).toBe('/src/miles/examples/experimental/terminus-compaction/run.py');
    const value = (flag: string) => plan.launcher.args[plan.launcher.args.indexOf(flag) + 1];
    expect(value('--num-rollout')).toBe('2');
    expect(value('--rollout-batch-size')).toBe('2');
    expect(value('--n-samples-per-prompt')).toBe('4');
    expect(value('--global-batch-size')).toBe('8');
    expect(value('--num-gpus-per-node')).toBe('4');
    expect(value('--agent-server-url')).toBe('http://127.0.0.1:11000');
    expect(plan.launcher.args).toContain('--no-skip-prepare');
    const train = plan.train.groups.flatMap((g) => g.argv);
    expect(train[train.indexOf('--dump-details') + 1]).toBe('/work/ci/.smoke/nightly-1/details');
    expect(plan.harbor).toMatchObject({ url: 'http://127.0.0.1:11000', max_concurrent: 8 });
    expect(plan.harbor.instance_ids).toHaveLength(4);
    expect(plan.harbor.summarize_threshold).toBeLessThan(plan.harbor.context_limit);
    expect(plan.ports.map((p) => p.port)).toEqual(
      expect.arrayContaining([11000, 30000, 30031, 31000, 6379, 8265]),
    );
    expect(plan.cleanup.map((c) => [c.command, ...c.args])).toEqual([['ray', 'stop', '--force']]);
    expect(plan.converter.args.slice(1)).toEqual(['--serve', '--miles-root', '/src/miles']);
    expect(plan.thresholds.expressions.length).toBeGreaterThan(0);
    expect(plan.variables).toMatchObject({ rollout_count: 8, num_rollout: 2 });
  });

  it('never prints a secret: the W&B key in the train argv and the Harbor admin secret', async () => {
    for (const format of [['--json'], []]) {
      const { code, out } = await smoke(['--dry-run', ...format]);
      expect(code).toBe(0);
      expect(out).not.toContain(ENV.WANDB_API_KEY);
      expect(out).not.toContain(ENV.HARBOR_ADMIN_SECRET);
      // JSON shows `***`; the shell rendering quotes it as `\*\*\*`.
      expect(out).toMatch(/--wandb-key"?,?\s*"?(\*\*\*|\\\*\\\*\\\*)/);
    }
  });

  it('prints the plan for people with every section', async () => {
    const { code, out } = await smoke(['--dry-run', '--run-id', 'r1']);
    expect(code).toBe(0);
    for (const section of [
      'Paths',
      'Harbor mock',
      'Launcher:',
      'What the launcher submits',
      'Afterwards',
      'Ports that must be free',
    ])
      expect(out).toContain(section);
    expect(out).toContain('30000-30031 (session server)');
    expect(out).toContain('$ ray stop --force');
  });

  it('takes recipe options, smoke options and MILES_SCRIPT_* env vars', async () => {
    const { out } = await smoke(
      ['--dry-run', '--json', '--model-dir', '/models', '--skip-prepare', '--timeout', '120'],
      {
        ...ENV,
        MILES_SCRIPT_MODEL_NAME: 'Tiny',
        MILES_SCRIPT_EXTERNAL_RAY: '1',
      },
    );
    const plan = SmokePlanSchema.parse(JSON.parse(out));
    expect(plan.paths.hf_checkpoint).toBe('/models/Tiny');
    expect(plan.skip_prepare).toBe(true);
    expect(plan.timeout_s).toBe(120);
    expect(plan.launcher.args).toContain('--skip-prepare');
    // An external Ray is not ours to stop, nor are its ports ours to check.
    expect(plan.cleanup).toEqual([]);
    expect(plan.ports.map((p) => p.port)).not.toContain(6379);
  });

  it('multi-node runs go through Miles own Ray setup and listen on MASTER_ADDR', async () => {
    const { out } = await smoke(['--dry-run', '--json', '--nodes', '2'], { ...ENV, MASTER_ADDR: '10.0.0.5' });
    const plan = SmokePlanSchema.parse(JSON.parse(out));
    expect(plan.launcher.args[plan.launcher.args.indexOf('--num-nodes') + 1]).toBe('2');
    expect(plan.harbor.url).toBe('http://10.0.0.5:11000');
    const { code, err } = await smoke(['--dry-run', '--nodes', '2']);
    expect(code).toBe(2);
    expect(err).toContain('MASTER_ADDR');
  });

  it('exits 2 on usage and config errors, naming the option or field', async () => {
    const cases: [string[], RegExp][] = [
      [['--dry-run', '--bogus'], /bogus/],
      [['--dry-run', '--gpus', 'eight'], /--gpus/],
      [['--dry-run', '--num-gpus-per-node', '4'], /use --gpus/],
      [['--dry-run', '--rollout-batch-size', '3'], /global_batch_size/],
      [['--dry-run', '--timeout', '0'], /--timeout/],
      [['--dry-run', '--thresholds', '/nonexistent/thresholds.txt'], /thresholds/],
      [
        ['--dry-run', '--output', '/dev/null'],
        /^\[harness\] --output \/dev\/null: is not a folder; expected a folder/,
      ],
    ];
    for (const [argv, message] of cases) {
      const { code, err } = await smoke(argv);
      expect(code, argv.join(' ')).toBe(2);
      expect(err).toMatch(message);
    }
  });

  it('--json without --dry-run: stdout is the run report alone, the text report goes to stderr', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'smoke-json-'));
    try {
      const io = captureIo({ MILES_ROOT: '/nonexistent/miles', PATH: process.env.PATH }, { cwd: dir });
      const code = await main(
        ['smoke', '--json', '--output', join(dir, 'out'), '--min-free-disk-gib', '0'],
        io,
      );
      expect(code).toBe(EXIT.precondition);
      const report = SmokeReportSchema.parse(JSON.parse(io.out()));
      expect(report.exit_code).toBe(EXIT.precondition);
      expect(report.preconditions.some((p) => p.code === 'miles.root_missing' && !p.met)).toBe(true);
      expect(io.err()).toContain('miles.root_missing');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('warns when the train argv has a flag the pinned Miles surface lacks', async () => {
    const { code, err } = await smoke(['--dry-run', '--json']);
    expect(code).toBe(0);
    const warnings = err.split('\n').filter((l) => l.startsWith('[smoke] warning: '));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(
      /--session-server-workers is not a flag of the pinned Miles 31f1ca96 .*overlay e4178aa9/,
    );
  });

  it('documents itself', async () => {
    const { code, out } = await smoke(['--help']);
    expect(code).toBe(0);
    expect(out).toContain('usage: harness smoke');
    expect(out).toContain('3 preconditions unmet');
  });
});
