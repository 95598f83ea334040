import { readFileSync } from 'node:fs';
import { pythonJsonLoads } from '../../common/python-json/loads.ts';
import { PythonFloat } from '../../common/python-json/values.ts';
import type { MilesSwitches } from '../../contracts/miles-profile.ts';
import { type LoggedSample, toLoggedSample } from '../metrics/logged-sample.ts';
import { type RolloutLogMetrics, rolloutLogMetrics } from '../metrics/rollout-log.ts';
import { groupIndex, rolloutId, sampleIndex } from '../model/ids.ts';
import type { Group, Rollout } from '../model/rollout.ts';
import type { ReplaySample } from '../model/sample.ts';

// Expectations from Miles' own code: scripts/oracles/metrics_oracle.py ran call_dynamic_filter,
// MetricGatherer, log_rollout_data and generate.py's RolloutFn on these cases (test/miles/ reruns it live);
// scripts/oracles/metrics_next_oracle.py ran the newer metrics.py's log_rollout_data on the same and more.
const PATH = new URL('../../fixtures/miles-oracle/rollout-metrics.json', import.meta.url);
const NEXT_PATH = new URL('../../fixtures/miles-oracle/rollout-metrics-next.json', import.meta.url);

export interface SampleRecord {
  group_index: number;
  index: number;
  rollout_id: number | null;
  tokens: number[];
  response: string;
  response_length: number;
  loss_mask: number[];
  reward: number | null;
  status: ReplaySample['status'];
  weight_versions: unknown[];
  non_generation_time: number;
  prefix_cache_info: { cached_tokens: number; total_prompt_tokens: number };
  metadata: Record<string, unknown>;
}

/** A case of either oracle file. */
export interface OracleCaseBase {
  name: string;
  filter: 'check_no_aborted' | 'check_reward_nonzero_std';
  args: {
    n_samples_per_prompt: number;
    advantage_estimator?: string;
    rollout_num_gpus?: number;
    log_passrate?: boolean;
  };
  /** The LoRA adapter of each group (by position), newer-Miles cases only. */
  adapters?: Record<string, string>;
  groups: SampleRecord[][][];
  rollout_time: number;
  rollout_id?: number;
  filter_verdicts: { keep: boolean; reason: string | null }[];
  logged: Record<string, number>;
  step_key: string;
}

/** A 31f1ca96 case: its oracle also ran the recipe's `RolloutFn` (the newer one runs none). */
export interface OracleCase extends OracleCaseBase {
  agent_logged: Record<string, number>;
  agent_would_log: Record<string, number>;
}

/** A case with the Python type of each sample's reward, read from the same text with floats kept. */
export type Typed<C extends OracleCaseBase> = C & { readonly reward_types: ('int' | 'float')[][][] };
export type TypedOracleCase = Typed<OracleCase>;

/** The cases of a `rollout-metrics*.json` text (a committed one, or one an oracle just wrote). */
export function parseOracleCases<C extends OracleCaseBase = OracleCase>(text: string): Typed<C>[] {
  const cases = (pythonJsonLoads(text) as { cases: C[] }).cases;
  // Read once more keeping Python floats, for the reward types only (`1` is an int, `1.0` a float).
  const typed = (
    pythonJsonLoads(text, { keepFloats: true }) as { cases: { groups: { reward: unknown }[][][] }[] }
  ).cases;
  return cases.map((c, at) => ({
    ...c,
    reward_types: typed[at]!.groups.map((g) =>
      g.map((r) => r.map((s) => (s.reward instanceof PythonFloat ? 'float' : 'int'))),
    ),
  }));
}

export const oracleCases = parseOracleCases(readFileSync(PATH, 'utf8'));

/** The newer metrics.py's cases (fixtures/miles-oracle/rollout-metrics-next.json). */
export const nextOracleCases = parseOracleCases<OracleCaseBase>(readFileSync(NEXT_PATH, 'utf8'));

function replaySample(record: SampleRecord, rewardIsFloat: boolean, adapter: string | null): ReplaySample {
  return {
    group_index: groupIndex(record.group_index),
    index: sampleIndex(record.index),
    rollout_id: record.rollout_id === null ? null : rolloutId(record.rollout_id),
    adapter,
    tokens: record.tokens,
    response_length: record.response_length,
    loss_mask: record.loss_mask,
    rollout_log_probs: null,
    status: record.status,
    reward: record.reward,
    remove_sample: false,
    metadata: record.metadata,
    response: record.response,
    prefix_cache_info: record.prefix_cache_info,
    weight_versions: record.weight_versions,
    non_generation_time: record.non_generation_time,
    reward_type: rewardIsFloat ? 'float' : 'int',
  };
}

/** The case's groups as the replay's model holds them (rollout = the samples of one v2 generate). */
export function oracleGroups(c: Typed<OracleCaseBase>): Group[] {
  return c.groups.map((g, gi) => ({
    group_index: groupIndex(g[0]![0]!.group_index),
    dropped: null,
    rollouts: g.map(
      (samples, ri): Rollout => ({
        group_index: groupIndex(samples[0]!.group_index),
        index: sampleIndex(samples[0]!.index),
        rollout_id: null,
        samples: samples.map((s, si) =>
          replaySample(s, c.reward_types[gi]![ri]![si] === 'float', c.adapters?.[String(gi)] ?? null),
        ),
        aborted: false,
        abort_reason: null,
        episode: null,
        tree: null,
        requests: null,
      }),
    ),
  }));
}

/**
 * The harness's rollout log on a case: Miles' filter verdicts applied, kept groups sorted and flattened,
 * logged as the chosen Miles' metrics.py does (31f1ca96's unless told).
 */
export function harnessOnCase(
  c: Typed<OracleCaseBase>,
  rolloutMetrics: MilesSwitches['rolloutMetrics'] = '31f1ca96',
): { logged: RolloutLogMetrics; samples: LoggedSample[] } {
  const kept = oracleGroups(c).filter((_, k) => c.filter_verdicts[k]!.keep);
  kept.sort((a, b) => a.rollouts[0]!.index - b.rollouts[0]!.index);
  const samples = kept.flatMap((g) => g.rollouts.flatMap((r) => r.samples.map(toLoggedSample)));
  const logged = rolloutLogMetrics({
    rolloutId: c.rollout_id ?? 0,
    args: {
      advantage_estimator: c.args.advantage_estimator ?? 'grpo',
      rollout_num_gpus: c.args.rollout_num_gpus ?? 8,
      use_session_server: 'v2',
      log_passrate: c.args.log_passrate ?? false,
      n_samples_per_prompt: c.args.n_samples_per_prompt,
    },
    samples,
    dropReasons: c.filter_verdicts.filter((v) => !v.keep).map((v) => v.reason),
    rolloutTime: c.rollout_time,
    rolloutMetrics,
  });
  return { logged, samples };
}

/**
 * Where two metric dicts differ: a key on one side only, or values that are not the same double (same
 * operations in the same order give equal doubles; numpy's summation order is reproduced).
 */
export function metricDifferences(
  actual: Readonly<Record<string, number | undefined>>,
  expected: Readonly<Record<string, number>>,
): string[] {
  const out: string[] = [];
  for (const key of Object.keys(actual)) if (!(key in expected)) out.push(`${key}: only the harness logs it`);
  for (const [key, value] of Object.entries(expected)) {
    const got = actual[key];
    if (got === undefined) out.push(`${key}: only Miles logs it (${value})`);
    else if (got !== value) out.push(`${key}: harness ${got}, Miles ${value}`);
  }
  return out;
}
