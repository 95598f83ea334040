import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_MILES_PROFILE } from '../../contracts/miles-profile.ts';
import { createSessionClient } from '../../fakes/session/index.ts';
import { sessionAffinityCheck } from '../../replay/checks/session-affinity.ts';
import { flushSessionInstances } from '../../replay/driver/flush.ts';
import { runRollout } from '../../replay/driver/rollout.ts';
import { recipeSamplingParams } from '../../replay/driver/run-body.ts';
import { SessionAffinityMonitor } from '../../replay/driver/session-affinity.ts';
import { sessionRouter } from '../../replay/driver/session-router.ts';
import { type ReplayStack, startReplayStack } from '../../replay/driver/stack.ts';
import { groupIndex, sampleIndex } from '../../replay/model/ids.ts';
import { loadEpisodes, type ReplayOptions, type ReplayRun, runReplay } from '../../replay/run-replay.ts';

/** The newer Miles' switches for the workers (the profile's other switches as the default's). */
const WORKERS_ON = { ...DEFAULT_MILES_PROFILE.switches, sessionServerWorkers: true };

function options(overrides: Partial<ReplayOptions> = {}): ReplayOptions {
  return {
    episodes: [],
    prompts: new URL('../../fixtures/prompts/tb2-89.jsonl', import.meta.url).pathname,
    rolloutBatchSize: 2,
    nSamplesPerPrompt: 4,
    steps: 1,
    concurrency: 8,
    seed: 11,
    maxSeqLen: 32768,
    maxResponseLen: 8192,
    modelName: 'model',
    trialTimeoutS: 60,
    agentTimeoutS: 60,
    titoModel: 'glm47',
    miles: WORKERS_ON,
    ...overrides,
  };
}

const hooks = () => ({ signal: new AbortController().signal, progress: { write: () => true } });

describe('the replay over several session-server workers', () => {
  let run: ReplayRun;
  let workerIds: string[] = [];
  beforeAll(async () => {
    run = await runReplay(options({ sessionServerWorkers: 4 }), {
      ...hooks(),
      onStack: (stack) => {
        workerIds = stack.sessionServers.map((s) => `${new URL(s.url).host}`);
      },
    });
  }, 60_000);

  it('starts N workers, each its own instance on its own port, and spreads the sessions over them', () => {
    expect(workerIds).toHaveLength(4);
    expect(new Set(workerIds).size).toBe(4);
    const used = run.outcomes[0]!.groups.flatMap((g) => g.rollouts.map((r) => r.session_server_id));
    expect(used).toHaveLength(8);
    for (const id of used) expect(workerIds).toContain(id);
    expect(new Set(used).size).toBeGreaterThan(1);
  });

  it('every session stayed on its worker: check 11 passes on the routing the workers reported', () => {
    const check = run.report.checks.find((c) => c.name === 'session_affinity')!;
    expect(check).toMatchObject({ verdict: 'pass', mode: 'workers' });
  });

  it('refuses more than one worker under a profile without them, and fewer than one', async () => {
    const single = { ...WORKERS_ON, sessionServerWorkers: false };
    await expect(
      runReplay(options({ miles: single, sessionServerWorkers: 2 }), hooks()),
    ).rejects.toMatchObject({
      code: 'config.invalid',
      details: { field: 'session_server_workers' },
    });
    await expect(runReplay(options({ sessionServerWorkers: 0 }), hooks())).rejects.toMatchObject({
      reason: '--session-server-workers must be at least 1.',
    });
  });
});

describe('a session whose calls reach two workers', () => {
  let stack: ReplayStack;
  beforeAll(async () => {
    stack = await startReplayStack({
      episodes: await loadEpisodes([]),
      maxConcurrent: 2,
      titoModel: 'glm47',
      agentTimeoutS: 60,
      sessionServerWorkers: 2,
    });
  }, 30_000);
  afterAll(() => stack?.close());

  it('fails check 11 (a planted client that collects from the other worker)', async () => {
    const [a, b] = stack.fakeSessionWorkers;
    const monitor = new SessionAffinityMonitor(
      stack.fakeSessionWorkers.map((w) => ({ id: `${w.host}:${w.port}`, events: w.events })),
    );
    const onA = createSessionClient(a!.url);
    const onB = createSessionClient(b!.url);
    // Creates and chats on A, but collects and deletes on B: the misrouting check 11 must catch.
    const misrouting = { ...onA, collectSamples: onB.collectSamples, delete: onB.delete };
    const ctx = {
      sessions: sessionRouter([{ client: misrouting, instanceId: a!.instanceId }], 1),
      harborUrl: stack.harbor.url,
      modelName: 'model',
      samplingParams: recipeSamplingParams(8192),
      maxSeqLen: 32768,
      trialTimeoutMs: 60_000,
      signal: new AbortController().signal,
      requestsFor: (id: string) => stack.policy.log.byRoutingKey(id),
    };
    const row = { prompt: 'p', metadata: { instance_id: 'no-compaction', agent_name: 'terminus-2' } };
    // B has no such session: the collect answers 404, which raises in Miles' group task.
    await expect(runRollout(ctx, row, groupIndex(0), sampleIndex(0))).rejects.toThrow(/collect raised/);
    const routing = monitor.take();
    monitor.dispose();
    const result = sessionAffinityCheck.run({
      steps: [{ step: 0, groups: [], advantages: null, session_routing: routing }],
      n_samples_per_prompt: 1,
      rollout_batch_size: 1,
      normalization: null,
    });
    expect(result.verdict).toBe('fail');
    expect(result.evidence.map((e) => [e.kind, e.data])).toEqual([
      [
        'session_split_across_workers',
        { session_id: routing[0]!.session_id, workers: [`${a!.host}:${a!.port}`, `${b!.host}:${b!.port}`] },
      ],
    ]);
  });
});

describe('a worker that dies mid-step', () => {
  it("fails exactly its sessions' rollouts, named session_server_worker_gone; the other worker's are whole", async () => {
    let dead = '';
    const run = await runReplay(options({ sessionServerWorkers: 2, concurrency: 8 }), {
      ...hooks(),
      onStack: (stack) => {
        const victim = stack.fakeSessionWorkers[1]!;
        dead = `${victim.host}:${victim.port}`;
        // Killed when its first chat arrives: its sessions exist and their trials are under way.
        void victim.events
          .next('request:start', (e) => e.path.endsWith('/chat/completions'))
          .then(() => victim.shutdown(0));
      },
    });
    const groups = run.outcomes[0]!.groups;
    const rollouts = groups.flatMap((g) => g.rollouts);
    const onDead = rollouts.filter((r) => r.session_server_id === dead);
    const onLive = rollouts.filter((r) => r.session_server_id !== dead);
    expect(onDead.length).toBeGreaterThan(0);
    expect(onLive.length).toBeGreaterThan(0);
    for (const r of onDead) expect([r.aborted, r.abort_reason]).toEqual([true, 'session_server_worker_gone']);
    for (const r of onLive) expect([r.aborted, r.abort_reason]).toEqual([false, null]);
    // Only groups holding a dead worker's rollout leave the batch (Miles' check_no_aborted, or a session
    // created on the dead worker raising in its group task); every other group is kept whole.
    for (const g of groups) {
      const touched = g.rollouts.some((r) => r.session_server_id === dead);
      if (touched || g.dropped === 'task_raised') expect(g.dropped).not.toBeNull();
      else expect(g.dropped).toBeNull();
    }
  }, 60_000);
});

describe('the closing abort', () => {
  it('flushes every instance id once at the agent server', async () => {
    const bodies: string[] = [];
    const server = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        bodies.push(`${req.method} ${req.url} ${body}`);
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const result = await flushSessionInstances(`http://127.0.0.1:${port}`, ['a1', 'b2', 'a1']);
    server.close();
    expect(result).toEqual({ flushed: 2, failed: 0 });
    expect(bodies).toEqual([
      'POST /flush {"session_server_instance_id":"a1"}',
      'POST /flush {"session_server_instance_id":"b2"}',
    ]);
  });
});
