import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { captureIo } from '../../cli/io.ts';
import { main } from '../../cli/main.ts';
import { type ReplayReport, ReplayReportSchema } from '../../replay/report/schema.ts';
import { runReplay } from '../../replay/run-replay.ts';
import { launchChromium } from '../helpers/chromium.ts';

/**
 * `harness replay` end to end over real loopback HTTP: one default step (4 prompts × 8 rollouts of
 * the bundled episodes), its summary, JSON and HTML report, and the exit statuses.
 */

/**
 * Runs in the page (the project's TypeScript has no DOM types): draws the PNG on a canvas and counts the
 * colours of every 7th pixel, and how much of the image the most common one covers.
 */
const PIXEL_VARIETY = `(async () => {
  const img = new Image();
  img.src = 'data:image/png;base64,%PNG%';
  await img.decode();
  const canvas = document.createElement('canvas');
  canvas.width = img.width;
  canvas.height = img.height;
  const ctx = canvas.getContext('2d');
  ctx.drawImage(img, 0, 0);
  const data = ctx.getImageData(0, 0, img.width, img.height).data;
  const counts = new Map();
  for (let i = 0; i < data.length; i += 4 * 7) {
    const key = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2];
    counts.set(key, (counts.get(key) || 0) + 1);
  }
  let total = 0;
  let top = 0;
  for (const v of counts.values()) { total += v; top = Math.max(top, v); }
  return { colours: counts.size, dominant: top / total };
})()`;

let dir: string;
let run: { code: number; out: string; err: string };
let report: ReplayReport;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'replay-'));
  const io = captureIo({}, { cwd: dir });
  const code = await main(
    ['replay', '--pool', 'fixtures', '--json-file', 'out/report.json', '--report', 'out/report.html'],
    io,
  );
  run = { code, out: io.out(), err: io.err() };
  report = ReplayReportSchema.parse(JSON.parse(await readFile(join(dir, 'out/report.json'), 'utf8')));
}, 120_000);

// One Chromium for the file (its start costs more than the pages); each test opens its own page, in a
// context of its own, left open until the browser closes (with @sparticuz/chromium's --single-process,
// closing the last page ends the browser).
let browser: Browser | undefined;
const chromium = async (): Promise<Browser> => {
  browser ??= await launchChromium();
  return browser;
};

afterAll(async () => {
  await browser?.close();
  await rm(dir, { recursive: true, force: true });
});

describe('a default step', () => {
  it('runs 4 × 8 rollouts and exits 0 (findings only, not strict)', () => {
    expect(run.code, run.err).toBe(0);
    expect(report.config).toMatchObject({
      rollout_batch_size: 4,
      n_samples_per_prompt: 8,
      steps: 1,
      seed: 42,
      strict: false,
    });
    expect(report.verdict).not.toBe('fail');
    expect(report.verdict).toBe(report.checks_verdict);
    const step = report.steps[0]!;
    expect(step.groups).toHaveLength(4);
    expect(step.groups.every((g) => g.rollouts.length === 8 && g.dropped === null)).toBe(true);
    expect(step.num_rollouts).toBe(32);
    // The recipe: --global-batch-size 32 on 8 GPUs with tensor parallel 4 (DP 2): one optimizer step.
    expect(step.train_schedule).toMatchObject({
      mode: 'rollout_side',
      global_batch_size: 32,
      dp_size: 2,
      dropped_rollouts: [],
      error: null,
    });
    expect(step.train_schedule.steps.map((s) => s.loss_divisor)).toEqual([32]);
  });

  it('reports Miles metrics consistent with its own rows', () => {
    const step = report.steps[0]!;
    const rollouts = step.groups.flatMap((g) => g.rollouts);
    const samples = rollouts.flatMap((r) => r.samples);
    expect(step.metrics['rollout/num_training_samples']).toBe(samples.length);
    expect(samples.length).toBeGreaterThan(32);
    const trained = rollouts.map((r) =>
      r.samples.reduce((a, s) => a + s.loss_mask.reduce((x, m) => x + m, 0), 0),
    );
    // bounded-spread: one step's samples
    expect(step.metrics['rollout/episode_response_length/max']).toBe(Math.max(...trained));
    expect(step.metrics['rollout/episode_raw_reward']).toBeCloseTo(
      rollouts.reduce((a, r) => a + (r.reward ?? 0), 0) / rollouts.length,
      10,
    );
  });

  it('gives every sample the required fields, and siblings one id, reward and advantage', () => {
    for (const group of report.steps[0]!.groups)
      for (const rollout of group.rollouts) {
        expect(rollout.index).toBe(rollout.rollout_key);
        if (rollout.samples.length > 1) expect(rollout.rollout_id).toBe(rollout.index);
        else expect(rollout.rollout_id).toBeNull();
        for (const sample of rollout.samples) {
          expect(sample.reward).toBe(rollout.reward);
          expect(sample.advantage).toBe(rollout.advantage);
          expect(sample.loss_mask).toHaveLength(sample.response_length);
          expect(sample.trainable_tokens).toBe(sample.loss_mask.filter((m) => m === 1).length);
          expect(sample.path_node_ids.at(-1)).toBe(sample.leaf_node_id);
        }
      }
  });

  it('runs all eleven checks; compaction leaves are exactly-once, with lost summaries as findings', () => {
    expect(report.checks.map((c) => c.name)).toEqual([
      'exactly_once',
      'only_generated_tokens_trained',
      'siblings_share_rollout_id_and_reward',
      'every_sample_trainable',
      'segmentation_invariance',
      'group_accounting',
      'token_accounting',
      'agent_metrics_logged',
      'tito_session_consistent',
      'pass_at_k_counts_every_group',
      'session_affinity',
    ]);
    // Miles' own behaviour under v2: the mock reports agent metrics, RolloutFn logs none of them.
    const agent = report.checks.find((c) => c.name === 'agent_metrics_logged')!;
    expect(agent.verdict).toBe('finding');
    expect(agent.evidence.map((e) => [e.kind, e.step, (e.data as { keys: string[] }).keys.length])).toEqual([
      ['agent_metrics_not_logged_v2', 0, 17],
    ]);
    expect(report.skipped_checks).toEqual([]);
    expect(report.checks.filter((c) => c.verdict === 'fail')).toEqual([]);
    const exactlyOnce = report.checks[0]!;
    expect(exactlyOnce.evidence.filter((e) => e.severity === 'fail')).toEqual([]);
    for (const e of exactlyOnce.evidence.filter((x) => x.kind === 'lost_completion'))
      expect(e).toMatchObject({
        step: 0,
        severity: 'finding',
        rollout: expect.any(Number),
        node: expect.any(Number),
      });
  });

  it('prints a progress line per quarter, the per-rollout table and every verdict', () => {
    expect(run.err).toContain('step 0 of 1: 32/32 rollouts');
    const rows = run.out.split('\n').filter((l) => /^\s+\d+\s+\d+\s+\S+\s+\d+\s+\d+\s+\d+\s/.test(l));
    expect(rows).toHaveLength(32);
    for (const check of report.checks) expect(run.out).toContain(check.name);
    expect(run.out).toMatch(/verdict: (PASS|FINDING)/);
  });

  it('exercises shared-token masking, superseded retries and lost completions in the default pool', async () => {
    // The bundled episodes' stated trees are 31f1ca96's drop_retries picker's, so these counts run there
    // (4d412b5a's drop_same_prompt_retries keeps more leaves: fewer lost completions).
    const io = captureIo({}, { cwd: dir });
    const code = await main(
      ['replay', '--pool', 'fixtures', '--miles-profile', '31f1ca96', '--json-file', 'out/older.json'],
      io,
    );
    expect(code, io.err()).toBe(0);
    const older = ReplayReportSchema.parse(JSON.parse(await readFile(join(dir, 'out/older.json'), 'utf8')));
    const rollouts = older.steps.flatMap((step) => step.groups.flatMap((g) => g.rollouts));
    // Pool variant 6 unwinds two pairs: its tail leaf owns the prefix it shares with the summary branch.
    expect(rollouts.filter((r) => r.masked_shared_tokens > 0)).toHaveLength(4);
    const kinds = new Set(older.checks[0]!.evidence.map((e) => e.kind));
    expect(kinds).toEqual(new Set(['lost_completion', 'superseded_retry']));
  }, 120_000);
});

describe('the HTML report in headless Chromium', () => {
  it('renders every rollout, its tree and strips, and is not blank', async () => {
    const page = await (await chromium()).newPage({ viewport: { width: 1280, height: 900 } });
    const failed: string[] = [];
    page.on('requestfailed', (r) => failed.push(r.url()));
    await page.goto(`file://${join(dir, 'out/report.html')}`);
    const keys = await page
      .locator('section.rollout')
      .evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-rollout-key'))));
    const expected = report.steps[0]!.groups.flatMap((g) => g.rollouts.map((r) => r.rollout_key));
    expect(keys).toEqual(expected);
    expect(await page.locator('section.rollout svg.tree').count()).toBe(32);
    const samples = report.steps[0]!.groups.flatMap((g) => g.rollouts.flatMap((r) => r.samples)).length;
    expect(await page.locator('.strip:not(.accounting)').count()).toBe(samples);
    // One row per check of the JSON report: the six invariants, the token accounting identity, the agent
    // metrics' logging, the session's TITO consistency, pass@k's group coverage and session affinity.
    expect(report.checks.map((c) => c.name)).toHaveLength(11);
    expect(await page.locator('#checks tr[data-check]').count()).toBe(report.checks.length);
    expect(await page.locator('section.rollout').first().isVisible()).toBe(true);
    expect(failed).toEqual([]);
    // Each check with failures or findings shows its first one beside the verdict, without opening
    // anything, and links it to the rollout card it names.
    for (const check of report.checks.filter((c) => c.verdict !== 'pass')) {
      const first =
        check.evidence.find((e) => e.severity === 'fail') ??
        check.evidence.find((e) => e.severity === 'finding');
      const why = page.locator(`#checks tr[data-check="${check.name}"] .why`);
      expect(await why.isVisible()).toBe(true);
      expect(await why.textContent()).toContain(first!.detail);
      // A step-level finding (agent metrics) names no rollout card to link to.
      if (first!.rollout === null) continue;
      const href = await why.locator('a').getAttribute('href');
      expect(href).toBe(`#s${first!.step}-g${first!.group_index}-r${first!.rollout}`);
      expect(await page.locator(href!).count()).toBe(1);
    }
    expect(report.checks.some((c) => c.verdict !== 'pass')).toBe(true);
    // The GRPO table names every rollout's instance and state next to its row, and the episode script
    // it played: the bundled pool's, for the TB2 names no fixture script has.
    const states = await page.locator('table.grpo td.state').allTextContents();
    expect(states).toHaveLength(32);
    const rollouts = report.steps[0]!.groups.flatMap((g) => g.rollouts);
    expect(rollouts.every((r) => r.episode?.pool_fallback === true)).toBe(true);
    const episodes = await page.locator('table.grpo td.episode').allTextContents();
    expect(episodes).toEqual(rollouts.map((r) => `${r.episode!.script} v${r.episode!.variant} (pool)`));
    expect(await page.locator('section.rollout .episode.pool-fallback').count()).toBe(32);
    const shot = await page.screenshot({ fullPage: false });
    const variety = (await page.evaluate(PIXEL_VARIETY.replace('%PNG%', shot.toString('base64')))) as {
      colours: number;
      dominant: number;
    };
    expect(variety.colours).toBeGreaterThan(20);
    expect(variety.dominant).toBeLessThan(0.95);
  }, 60_000);
});

describe('episode scripts and abort reasons in the reports', () => {
  it('shows the script each rollout played, a pool fallback and no_records in the table and in Chromium', async () => {
    // One prompt has a script, one has a script whose first turn fails (an empty session: no_records),
    // and one names no script, so the mock's pool stands in.
    const rows = ['fixture-no-compaction', 'fixture-first-turn-failure', 'not-a-script'].map((id) =>
      JSON.stringify({ prompt: `task ${id}`, metadata: { instance_id: id, agent_name: 'terminus-2' } }),
    );
    await writeFile(join(dir, 'mixed.jsonl'), `${rows.join('\n')}\n`);
    const io = captureIo({}, { cwd: process.cwd() });
    const argv = ['replay', '--episodes', 'fixtures/episodes/first-turn-failure.json'];
    argv.push('fixtures/episodes/no-compaction.json', '--prompts', join(dir, 'mixed.jsonl'));
    argv.push('--rollout-batch-size', '2', '--n-samples-per-prompt', '2', '--global-batch-size', '4');
    argv.push('--json-file', join(dir, 'mixed.json'), '--report', join(dir, 'mixed.html'));
    expect(await main(argv, io), io.err()).toBe(0);
    const mixed = ReplayReportSchema.parse(JSON.parse(await readFile(join(dir, 'mixed.json'), 'utf8')));
    const rollouts = mixed.steps[0]!.groups.flatMap((g) => g.rollouts);
    // What /run said it played, against what the prompt asked for.
    for (const r of rollouts) {
      expect(r.episode!.pool_fallback).toBe(r.instance_id === 'not-a-script');
      if (!r.episode!.pool_fallback) expect(r.episode!.script).toBe(r.instance_id);
    }
    expect(new Set(rollouts.map((r) => r.episode!.pool_fallback))).toEqual(new Set([true, false]));
    const noRecords = rollouts.filter((r) => r.abort_reason === 'no_records');
    expect(noRecords.length).toBeGreaterThan(0);
    // The terminal table: one row per rollout ending in its state and episode.
    const lines = io.out().split('\n');
    for (const r of rollouts) {
      const line = lines.find((l) =>
        new RegExp(`^\\s+\\d+\\s+${r.rollout_key}\\s+${r.instance_id}\\s`).test(l),
      );
      expect(line).toContain(`${r.episode!.script} v${r.episode!.variant}`);
      expect(line!.endsWith(' (pool)')).toBe(r.episode!.pool_fallback);
      if (r.abort_reason === 'no_records') expect(line).toContain('(aborted: no_records)');
    }
    const page = await (await chromium()).newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`file://${join(dir, 'mixed.html')}`);
    const episodeCells = page.locator('table.grpo td.episode');
    const stateCells = page.locator('table.grpo td.state');
    expect(await episodeCells.count()).toBe(rollouts.length);
    for (const [i, r] of rollouts.entries()) {
      expect(await episodeCells.nth(i).isVisible()).toBe(true);
      const episode = await episodeCells.nth(i).textContent();
      expect(episode).toContain(r.episode!.script);
      expect(episode!.includes('(pool)')).toBe(r.episode!.pool_fallback);
      if (r.abort_reason !== null) expect(await stateCells.nth(i).textContent()).toContain(r.abort_reason);
    }
    const fallback = page.locator('section.rollout .episode.pool-fallback').first();
    await fallback.scrollIntoViewIfNeeded();
    expect(await fallback.isVisible()).toBe(true);
    expect(await fallback.textContent()).toContain('pool fallback');
    const aborted = page.locator(`section.rollout[data-rollout-key="${noRecords[0]!.rollout_key}"] .state`);
    expect(await aborted.textContent()).toContain('aborted: no_records');
  }, 60_000);
});

describe('exit statuses', () => {
  it('exits 1 under --strict when there are findings, and both reports record the mode and a fail', async () => {
    const io = captureIo({}, { cwd: dir });
    const code = await main(
      [
        'replay',
        '--pool',
        'fixtures',
        '--rollout-batch-size',
        '1',
        '--n-samples-per-prompt',
        '8',
        '--strict',
        '--json-file',
        'strict.json',
        '--report',
        'strict.html',
      ],
      io,
    );
    expect(io.out()).toContain('verdict: FAIL (--strict: findings fail)');
    expect(code).toBe(1);
    const strict = ReplayReportSchema.parse(JSON.parse(await readFile(join(dir, 'strict.json'), 'utf8')));
    expect(strict.config.strict).toBe(true);
    expect(strict.checks_verdict).toBe('finding');
    expect(strict.verdict).toBe('fail');
    const html = await readFile(join(dir, 'strict.html'), 'utf8');
    expect(html).toContain('--strict (findings fail)');
    expect(html).toContain('class="verdict v-fail"');
  });

  it('takes several episode sources after one --episodes', async () => {
    const io = captureIo({}, { cwd: process.cwd() });
    const argv = [
      'replay',
      '--episodes',
      'fixtures/episodes/no-compaction.json',
      'fixtures/episodes/proactive-once.json',
    ];
    const code = await main(
      [
        ...argv,
        '--rollout-batch-size',
        '2',
        '--n-samples-per-prompt',
        '2',
        '--json-file',
        join(dir, 'two.json'),
      ],
      io,
    );
    expect(code, io.err()).toBe(0);
    const two = ReplayReportSchema.parse(JSON.parse(await readFile(join(dir, 'two.json'), 'utf8')));
    expect(two.config.episodes.map((e) => e.split('/').at(-1))).toEqual([
      'no-compaction.json',
      'proactive-once.json',
    ]);
  });

  it('exits 2 on usage and configuration errors, 0 for --help', async () => {
    const cases: [string[], number, RegExp][] = [
      [['replay', '--bogus'], 2, /bogus/],
      [['replay', '--steps', '0'], 2, /--steps 0: expected a whole number from 1 to 1000/],
      [
        ['replay', '--global-batch-size', '0'],
        2,
        /--global-batch-size 0: expected a whole number from 1 to 65536/,
      ],
      [['replay', '--seed=-1'], 2, /--seed -1: expected a whole number from 0 to 4294967295/],
      // A negative number after an option is taken as its value and checked by the option's rule.
      [['replay', '--seed', '-1'], 2, /--seed -1: expected a whole number from 0 to 4294967295/],
      [['replay', 'stray'], 2, /unexpected argument 'stray'/],
      [['replay', '--prompts', 'missing.jsonl'], 2, /prompts .*missing\.jsonl: no such file or directory/],
      [['replay', '--episodes', 'nowhere'], 2, /--episodes .*nowhere: no such file or directory/],
      [['replay', '--pool', 'mine'], 2, /--pool must be generated or fixtures/],
      [
        ['replay', '--pool', 'fixtures', '--episodes', 'x.json'],
        2,
        /--pool and --episodes exclude each other/,
      ],
    ];
    for (const [argv, want, message] of cases) {
      const io = captureIo({}, { cwd: dir });
      expect(await main(argv, io), argv.join(' ')).toBe(want);
      expect(io.err()).toMatch(message);
    }
    const help = captureIo();
    expect(await main(['replay', '--help'], help)).toBe(0);
    expect(help.out()).toContain('--n-samples-per-prompt M');
    expect(help.out()).toContain('--global-batch-size G');
  });

  it('checks its output paths before the run: a directory is a usage error and nothing is replayed', async () => {
    for (const option of ['--json-file', '--report']) {
      const io = captureIo({}, { cwd: dir });
      expect(await main(['replay', option, dir], io)).toBe(2);
      expect(io.err()).toMatch(
        new RegExp(`^\\[harness\\] ${option} .*: is a directory; expected a writable file path\\n$`),
      );
      expect(io.out()).toBe('');
    }
  });

  it('--json prints the report alone on stdout (the summary on stderr); --json takes no file', async () => {
    const io = captureIo({}, { cwd: dir });
    const code = await main(
      [
        'replay',
        '--pool',
        'fixtures',
        '--rollout-batch-size',
        '1',
        '--n-samples-per-prompt',
        '2',
        '--global-batch-size',
        '2',
        '--json',
      ],
      io,
    );
    expect(code, io.err()).toBe(0);
    const printed = ReplayReportSchema.parse(JSON.parse(io.out()));
    expect(printed.steps[0]!.num_rollouts).toBe(2);
    expect(io.err()).toMatch(/verdict: /);
    const dash = captureIo({}, { cwd: dir });
    expect(await main(['replay', '--json', '-'], dash)).toBe(2);
    expect(dash.err()).toMatch(/--json takes no value .*expected --json-file -/);
  });

  it('stops its servers and reports an interrupt when the signal aborts', async () => {
    const controller = new AbortController();
    let urls: { policy: string; session: string; harbor: string } | undefined;
    const run = runReplay(
      {
        episodes: [],
        prompts: 'fixtures/prompts/tb2-89.jsonl',
        rolloutBatchSize: 2,
        nSamplesPerPrompt: 8,
        steps: 1,
        concurrency: 32,
        seed: 1,
        maxSeqLen: 32768,
        maxResponseLen: 8192,
        modelName: 'model',
        trialTimeoutS: 60,
        agentTimeoutS: 60,
        titoModel: 'glm47',
      },
      {
        signal: controller.signal,
        progress: {
          write: (chunk: string) => {
            if (chunk.includes('4/16')) controller.abort(new Error('test interrupt'));
          },
        },
        onStarted: (u) => {
          urls = u;
        },
      },
    );
    await expect(run).rejects.toMatchObject({ code: 'replay.interrupted' });
    expect(Object.keys(urls ?? {}).sort()).toEqual(['harbor', 'policy', 'session']);
    for (const url of Object.values(urls!))
      await expect(fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) })).rejects.toThrow();
  });
});
