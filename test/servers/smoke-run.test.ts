import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { captureIo } from '../../cli/io.ts';
import { main } from '../../cli/main.ts';
import { isPortFree } from '../../gpu/preconditions/probe-ports.ts';
import { isProcessAlive } from '../../gpu/process/process-group.ts';
import { SmokeReportSchema } from '../../gpu/report/smoke-report.ts';
import { runSmoke } from '../../gpu/run-smoke.ts';
import {
  createFakeMachine,
  type FakeMachine,
  type FakeMachineOptions,
} from '../../gpu/testing/fake-machine.ts';
import { fakeMachineArgv, fakeMachinePlan, freePort } from '../../gpu/testing/fake-plan.ts';
import { parseThresholds } from '../../gpu/thresholds/thresholds-file.ts';

// `harness smoke` end to end on a fake machine: fake nvidia-smi and ray, a fake Miles checkout whose
// launcher writes Miles-layout dumps (pickled, read through a pickle-backed torch) and prints Miles'
// metric lines. Everything real except the training: preconditions, the Harbor mock, the process
// group, log streaming, cleanup, conversion, the replay's checks, thresholds and the report.

const machines: FakeMachine[] = [];
afterEach(() => {
  for (const m of machines.splice(0)) m.cleanup();
});

async function smoke(
  mode: string,
  extra: string[] = [],
  machineOptions: FakeMachineOptions = {},
  signal?: AbortSignal,
  onStdout?: (chunk: string) => void,
) {
  const machine = createFakeMachine(machineOptions);
  machines.push(machine);
  const port = await freePort();
  const runId = `e2e-${mode}`;
  const captured = captureIo(
    { ...machine.env, FAKE_LAUNCHER_MODE: mode },
    { cwd: machine.root, ...(signal ? { signal } : {}) },
  );
  const io = onStdout
    ? {
        ...captured,
        stdout: {
          write: (chunk: string) => {
            captured.stdout.write(chunk);
            onStdout(chunk);
          },
        },
      }
    : captured;
  const code = await main(['smoke', ...fakeMachineArgv(machine, port, ['--run-id', runId, ...extra])], io);
  const runDir = join(machine.outputDir, runId);
  const reportFile = join(runDir, 'smoke', 'report.json');
  const report = existsSync(reportFile)
    ? SmokeReportSchema.parse(JSON.parse(readFileSync(reportFile, 'utf8')))
    : null;
  const log = existsSync(join(runDir, 'smoke', 'launcher.log'))
    ? readFileSync(join(runDir, 'smoke', 'launcher.log'), 'utf8')
    : '';
  return { code, io, machine, port, runDir, report, log };
}

describe('harness smoke on a fake machine', () => {
  it('passes a good run: logs streamed with a prefix, Ray stopped, dumps converted and checked, thresholds met', async () => {
    const { code, io, machine, port, runDir, report, log } = await smoke('ok');
    expect(io.err()).not.toMatch(/Problems/);
    expect(code).toBe(0);
    expect(report?.status).toBe('passed');
    expect(report?.launcher).toMatchObject({ outcome: 'exited', exit_code: 0 });
    // Streamed line by line, prefixed, to the terminal and the log file.
    expect(io.out()).toContain('[miles] fake launcher: mode ok');
    expect(log).toContain('[miles] harbor health: {"status":"ok"');
    expect(log).toContain("[miles] (MegatronTrainRayActor pid=2) step 1: {'train/loss'");
    expect(log).toContain('[check-run] step 0: ');
    expect(report?.train_steps).toEqual([0, 1]);
    const verdicts = Object.fromEntries(report!.checks.map((c) => [c.name, c.verdict]));
    expect(verdicts).toMatchObject({
      train_step_logged: 'pass',
      exactly_once: 'pass',
      siblings_share_rollout_id_and_reward: 'pass',
      every_sample_trainable: 'pass',
      segmentation_invariance: 'pass',
      group_accounting: 'pass',
      compaction_happened: 'pass',
      train_mask_sums: 'pass',
      logged_metrics_match_dump: 'pass',
    });
    expect(report?.thresholds.every((t) => t.verdict === 'pass')).toBe(true);
    expect(readFileSync(machine.rayCalls, 'utf8')).toBe('ray stop --force\n');
    expect(existsSync(join(runDir, 'checkpoints'))).toBe(false);
    expect(existsSync(join(runDir, 'smoke', 'plan.json'))).toBe(true);
    expect(
      readFileSync(join(runDir, 'smoke', 'prompts.jsonl'), 'utf8')
        .trim()
        .split('\n'),
    ).toHaveLength(4);
    expect(io.out()).toContain('PASSED (exit 0)');
    expect(await isPortFree(port)).toBe(true);
  });

  it('fails with exit 1 when the dumps break an invariant, naming the check', async () => {
    const { code, report, io } = await smoke('sibling-reward');
    expect(code).toBe(1);
    expect(report?.status).toBe('failed');
    expect(report?.checks.find((c) => c.name === 'siblings_share_rollout_id_and_reward')?.verdict).toBe(
      'fail',
    );
    expect(io.err()).toContain('check siblings_share_rollout_id_and_reward failed');
  });

  it('leaves logs and a partial report when the launcher fails (exit 5)', async () => {
    const { code, report, log, io, runDir } = await smoke('fail');
    expect(code).toBe(5);
    expect(report).toMatchObject({ status: 'launch_failed', exit_code: 5, checks: [] });
    expect(report?.launcher?.exit_code).toBe(7);
    expect(log).toContain('RuntimeError: fake launcher failure');
    expect(io.err()).toContain(join(runDir, 'smoke', 'report.json'));
    expect(io.err()).toContain('launcher exited with 7');
  });

  it('stops the whole tree at the overall timeout (exit 5), grandchild included', async () => {
    const { code, report, log, port } = await smoke('hang', ['--timeout', '3', '--grace', '2']);
    expect(code).toBe(5);
    expect(report?.status).toBe('timed_out');
    const grandchild = Number(/grandchild (\d+)/.exec(log)?.[1]);
    expect(grandchild).toBeGreaterThan(0);
    expect(isProcessAlive(grandchild)).toBe(false);
    expect(await isPortFree(port)).toBe(true);
  });

  it('stops the tree and the servers on Ctrl-C (exit 130), grandchild included', async () => {
    // Ctrl-C arrives once the launcher has started its grandchild (its pid is on stdout), not after a
    // fixed delay: the test then knows there was a grandchild to stop.
    const controller = new AbortController();
    let grandchild = Number.NaN;
    const { code, report, port } = await smoke('hang', ['--grace', '2'], {}, controller.signal, (chunk) => {
      const found = /grandchild (\d+)/.exec(chunk);
      if (found && Number.isNaN(grandchild)) {
        grandchild = Number(found[1]);
        controller.abort(new Error('received SIGINT'));
      }
    });
    expect(grandchild).toBeGreaterThan(0);
    expect(code).toBe(130);
    expect(report?.status).toBe('interrupted');
    expect(isProcessAlive(grandchild)).toBe(false);
    expect(await isPortFree(port)).toBe(true);
  });

  it('still reports, with exit 5, when something around the launcher breaks', async () => {
    const machine = createFakeMachine();
    machines.push(machine);
    const plan = fakeMachinePlan(machine, await freePort(), ['--run-id', 'e2e-broken']);
    const io = captureIo(machine.env, { cwd: machine.root });
    const report = await runSmoke(plan, parseThresholds('count(train/step) >= 1\n'), {
      io,
      startHarbor: async () => {
        throw new Error('listen EADDRINUSE: address already in use');
      },
    });
    expect(report).toMatchObject({ status: 'launch_failed', exit_code: 5 });
    expect(report.problems.join(' ')).toContain('EADDRINUSE');
    expect(existsSync(plan.paths.report_file)).toBe(true);
    // Nothing was launched, so there was no Ray to stop.
    expect(existsSync(machine.rayCalls)).toBe(false);
  });

  it('starts nothing and exits 3 when a precondition is unmet, listing each with its code', async () => {
    const { code, io, runDir } = await smoke('ok', [], { gpus: 2, torch: 'broken' });
    expect(code).toBe(3);
    expect(io.err()).toContain('gpu.too_few');
    expect(io.err()).toContain('python.torch_import_failed');
    expect(io.err()).toContain('Nothing was started.');
    expect(existsSync(runDir)).toBe(false);
  });
});
