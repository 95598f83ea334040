import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJson } from '../../common/python-json/loads.ts';
import { retainedRows } from '../../replay/model/retained.ts';
import { ReplayReportSchema } from '../../replay/report/schema.ts';
import { type ReplayRun, runReplay } from '../../replay/run-replay.ts';

/**
 * The rollout metrics end to end: what the fakes send (Harbor's float reward and tool time, the
 * policy's cached tokens) reaches the samples and the metrics Miles would log from them.
 */

const EXEC_MS = 30;
let dir = '';
let run: ReplayRun;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rollout-metrics-replay-'));
  const script = parseJson(
    await readFile(new URL('../../fixtures/episodes/no-compaction.json', import.meta.url), 'utf8'),
  ) as { instance_id: string; turns: Record<string, unknown>[] };
  // Tool time on every turn: Harbor's mock reports it as agent_metrics.total_tool_time.
  script.turns = script.turns.map((t) => ({ ...t, exec_ms: EXEC_MS }));
  await writeFile(join(dir, 'episode.json'), JSON.stringify(script));
  await writeFile(
    join(dir, 'prompts.jsonl'),
    `${JSON.stringify({ prompt: 'p', metadata: { instance_id: script.instance_id, agent_name: 'terminus-2' } })}\n`,
  );
  run = await runReplay(
    {
      episodes: [join(dir, 'episode.json')],
      prompts: join(dir, 'prompts.jsonl'),
      rolloutBatchSize: 1,
      nSamplesPerPrompt: 2,
      steps: 1,
      concurrency: 2,
      seed: 3,
      maxSeqLen: 32768,
      maxResponseLen: 8192,
      modelName: 'model',
      trialTimeoutS: 60,
      agentTimeoutS: 60,
      titoModel: 'glm47',
      rolloutNumGpus: 8,
    },
    { signal: new AbortController().signal, progress: { write: () => true } },
  );
}, 60_000);

afterAll(async () => {
  if (dir !== '') await rm(dir, { recursive: true, force: true });
});

describe('rollout metrics from the fakes, end to end', () => {
  it('samples carry the float reward, the agent tool time and the prefix-cache counts', () => {
    const rows = retainedRows(run.outcomes[0]!.groups);
    expect(rows).toHaveLength(2);
    for (const row of rows) {
      expect(row.reward).toBe(1);
      expect(row.reward_type).toBe('float');
      const agent = row.metadata.agent_metrics as { total_tool_time: number };
      expect(row.non_generation_time).toBe(agent.total_tool_time);
      expect(row.non_generation_time).toBeGreaterThanOrEqual((4 * EXEC_MS) / 1000);
      // Four linear turns: every turn after the first finds the previous one in the cache.
      expect(row.prefix_cache_info!.cached_tokens).toBeGreaterThan(0);
      expect(row.prefix_cache_info!.cached_tokens).toBeLessThan(row.prefix_cache_info!.total_prompt_tokens);
      expect(row.response!.length).toBeGreaterThan(0);
    }
  });

  it('logs what Miles logs of them, valid under the report schema', () => {
    const report = ReplayReportSchema.parse(parseJson(JSON.stringify(run.report)));
    const m = report.steps[0]!.metrics;
    expect(m['rollout/zero_std/count_1.0']).toBe(1);
    expect(m['rollout/zero_std/all_one_percentage']).toBe(1);
    expect(m['rollout/zero_std/all_zero_percentage']).toBe(0);
    expect(m['rollout/prefix_cache_hit_rate']).toBeGreaterThan(0.5);
    expect(m['rollout/prefix_cache_hit_rate']).toBeLessThan(1);
    expect(m['rollout/step']).toBe(0);
    expect(m['perf/non_generation_time/min']).toBeGreaterThanOrEqual((4 * EXEC_MS) / 1000);
    expect(m['perf/longest_sample_tokens_per_sec_without_non_generation']).toBeGreaterThan(
      m['perf/longest_sample_tokens_per_sec']!,
    );
    expect(m['perf/tokens_per_gpu_per_sec']).toBeGreaterThan(0);
    const agent = report.checks.find((c) => c.name === 'agent_metrics_logged')!;
    expect(agent.verdict).toBe('finding');
    expect((agent.evidence[0]!.data as { keys: string[] }).keys).toContain('agent/turns_mean');
  });
});
