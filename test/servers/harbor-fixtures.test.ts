import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { milesProfileNamed } from '../../contracts/miles-profile.ts';
import {
  DEFAULT_EPISODES_DIR,
  loadEpisodeScripts,
  readTb2Tasks,
} from '../../fakes/harbor/episode-catalog.ts';
import type { EpisodeScript } from '../../fakes/harbor/episode-schema.ts';
import { type RunResult, RunResultSchema } from '../../fakes/harbor/run-protocol.ts';
import { type HarborServer, startHarborServer } from '../../fakes/harbor/server.ts';
import { type PolicyServerHandle, startPolicyServer } from '../../fakes/policy/index.ts';
import {
  createSessionClient,
  type SamplesReply,
  type SessionClient,
  type SessionServerHandle,
  startSessionServer,
  type TreeMetadata,
} from '../../fakes/session/index.ts';

/**
 * Every bundled episode fixture, played by the mock Harbor server through the fake session server and
 * fake policy over real sockets, must produce the tree and samples its `expect` block states; the pool
 * must give the default replay compacting, reward-varying groups.
 */

let policy: PolicyServerHandle;
let session: SessionServerHandle;
let harbor: HarborServer;
let client: SessionClient;
let scripts: EpisodeScript[];

beforeAll(async () => {
  scripts = await loadEpisodeScripts(DEFAULT_EPISODES_DIR);
  policy = await startPolicyServer({ mode: 'synthetic', replyFormat: 'xml' });
  // The fixtures' stated trees and samples follow 31f1ca96's drop_retries picker: the fake answers as it.
  session = await startSessionServer({
    backendUrl: policy.url,
    milesProfile: milesProfileNamed('31f1ca96')!,
  });
  harbor = await startHarborServer({ episodes: scripts, agentTimeoutS: 60 });
  client = createSessionClient(session.url);
});

afterAll(async () => {
  await harbor?.close();
  await session?.close();
  await policy?.close();
});

interface Played {
  readonly result: RunResult;
  readonly tree: TreeMetadata;
  readonly samples: SamplesReply;
}

/** One Miles rollout: open a session, POST /run with its URL, then collect samples with the agent metadata. */
async function playThroughSession(instanceId: string): Promise<Played> {
  const sessionId = await client.create();
  const response = await fetch(`${harbor.url}/run`, {
    method: 'POST',
    body: JSON.stringify({
      base_url: `${session.url}/sessions/${sessionId}/v1`,
      model: 'openai/model',
      sampling_params: { temperature: 1, max_tokens: 8192 },
      instance_id: instanceId,
      agent_name: 'terminus-2',
      session_server_instance_id: session.instanceId,
    }),
  });
  expect(response.status).toBe(200);
  const result = RunResultSchema.parse(await response.json());
  const view = await client.get(sessionId);
  const samples = await client.collectSamples(sessionId, { maxSeqLen: null, metadata: result });
  await client.delete(sessionId);
  return { result, tree: view.metadata.tree, samples };
}

/** For each node on a kept path: in how many samples its completion span is fully trained. */
function trainingCounts(played: Played): Map<number, number> {
  const spans = new Map(played.tree.nodes.map((n) => [n.id, n.completion_span]));
  const counts = new Map<number, number>();
  for (const sample of played.samples.samples) {
    const leaf = sample.metadata.leaf as { path_node_ids: number[] };
    const mask = sample.loss_mask ?? [];
    const responseStart = sample.tokens.length - sample.response_length;
    let inSpans = 0;
    for (const node of leaf.path_node_ids) {
      const [cs, ce] = spans.get(node) ?? [0, 0];
      const slice = mask.slice(Math.max(cs - responseStart, 0), Math.max(ce - responseStart, 0));
      const trained = slice.filter((m) => m === 1).length;
      inSpans += trained;
      if (trained === slice.length && slice.length > 0) counts.set(node, (counts.get(node) ?? 0) + 1);
      else expect(trained, `node ${node} partly trained`).toBe(0);
    }
    expect(mask.filter((m) => m === 1).length, 'trained positions outside completion spans').toBe(inSpans);
  }
  return counts;
}

describe('episode fixtures through the fake session server', () => {
  const fixtureIds = [
    'no-compaction',
    'proactive-once',
    'proactive-twice',
    'proactive-summary-fails',
    'reactive-unwind-0',
    'reactive-unwind-1',
    'reactive-unwind-2',
    'reactive-short-summary',
    'reactive-no-model-fallback',
    'reactive-technical-difficulties',
    'context-error-summarize-off',
    'reasoning-model',
    'truncation',
    'agent-error',
    'first-turn-failure',
    'retried-turn',
    'first-turn-retry',
  ];

  it('covers every bundled fixture that states an expectation', () => {
    const withExpect = scripts.filter((s) => s.expect !== undefined).map((s) => s.instance_id);
    expect(withExpect.sort()).toEqual(fixtureIds.map((id) => `fixture-${id}`).sort());
  });

  it.each(fixtureIds)('%s produces its stated tree and samples', async (name) => {
    const script = scripts.find((s) => s.instance_id === `fixture-${name}`);
    const expected = script?.expect;
    if (!expected) throw new Error(`fixture-${name} has no expect block`);
    const played = await playThroughSession(`fixture-${name}`);
    const { result, tree, samples } = played;

    expect(result.exit_status).toBe(expected.exit_status);
    expect(result.reward).toBe(expected.reward);
    expect(result.agent_metrics.summarization_count).toBe(expected.summarization_count);
    expect(result.agent_metrics.turns).toBe(expected.turns);

    expect(tree.nodes.map((n) => n.parent)).toEqual(expected.tree.parents);
    expect(tree.nodes.filter((n) => n.truncated).map((n) => n.id)).toEqual(expected.tree.truncated);
    expect(tree.leaves.map((l) => l.path_node_ids)).toEqual(expected.leaves);

    const sampleLeaves = samples.samples.map((s) => (s.metadata.leaf as { node_id: number }).node_id);
    expect(sampleLeaves).toEqual(expected.samples.leaves);
    expect(samples.samples.map((s) => s.status)).toEqual(expected.samples.statuses);
    const trimmed = tree.leaves.map((l) => l.node_id).filter((id) => !sampleLeaves.includes(id));
    expect(trimmed).toEqual(expected.samples.trimmed);
    expect(samples.emptyReason).toBe(expected.empty_reason);
    for (const sample of samples.samples) expect(sample.reward).toBe(result.reward);

    // Miles' invariant: every completion on a kept path is trained in exactly one sample.
    const counts = trainingCounts(played);
    const keptPathNodes = new Set(
      samples.samples.flatMap((s) => (s.metadata.leaf as { path_node_ids: number[] }).path_node_ids),
    );
    for (const node of keptPathNodes) expect(counts.get(node), `node ${node}`).toBe(1);
  });
});

describe('the bundled pool for the default replay (4 prompts x 8 samples)', () => {
  it('compacts in every rollout and varies rewards within each group', async () => {
    const tasks = await readTb2Tasks();
    // Four TB2 prompts that hash onto the four pool scripts, one each.
    const prompts: string[] = [];
    const seen = new Set<string>();
    for (const task of tasks) {
      const episode = harbor.catalog.pick(task).instance_id;
      if (!seen.has(episode)) {
        seen.add(episode);
        prompts.push(task);
      }
    }
    expect(prompts).toHaveLength(4);
    const groups = await Promise.all(
      prompts.map((prompt) => Promise.all(Array.from({ length: 8 }, () => playThroughSession(prompt)))),
    );
    for (const group of groups) {
      const rewards = group.map((p) => p.result.reward);
      expect(new Set(rewards).size, `rewards ${rewards}`).toBeGreaterThan(1);
      for (const played of group) {
        expect(played.result.exit_status).toBe('Submitted');
        expect(played.result.agent_metrics.summarization_count).toBeGreaterThanOrEqual(1);
        expect(played.samples.samples.length).toBeGreaterThanOrEqual(3);
        expect(played.samples.samples.every((s) => s.status === 'completed')).toBe(true);
      }
      expect(new Set(group.map((p) => p.result.agent_metrics.harness.variant))).toEqual(
        new Set([0, 1, 2, 3, 4, 5, 6, 7]),
      );
    }
  });
});
