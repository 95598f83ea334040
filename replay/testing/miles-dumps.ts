import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { execa } from 'execa';
import { parseJson } from '../../common/python-json/loads.ts';
import { DUMP_WRITER } from '../../miles-bridge/entry-points.ts';
import type { TrainScheduleConfig } from '../grpo/train-schedule.ts';
import type { Rollout } from '../model/rollout.ts';
import { leafOf, type ReplaySample } from '../model/sample.ts';
import type { StepOutcome } from '../step/process-step.ts';

/**
 * A replay's steps written as a `--dump-details` folder by Miles' own writers on CPU
 * (miles-bridge/dumps/write_dumps.py: `save_debug_rollout_data` with its trajectory sidecar, the DP
 * split, `save_debug_train_data_for_rank`, and `log_rollout_data`'s `perf N:` line): the oracle of
 * `harness check-run` (test/miles/check-run.test.ts) and of the dump validator.
 */

/** A replay sample as a `Sample.to_dict()`-shaped dict, with the conversation Miles' merge attaches. */
export function milesSample(sample: ReplaySample, messages: unknown[] | null): Record<string, unknown> {
  return {
    group_index: sample.group_index,
    index: sample.index,
    rollout_id: sample.rollout_id,
    tokens: sample.tokens,
    response_length: sample.response_length,
    loss_mask: sample.loss_mask,
    rollout_log_probs: sample.rollout_log_probs,
    reward: sample.reward,
    // JSON writes 1.0 as 1; the writer restores the Python type (Harbor's agent server gives floats).
    reward_type: sample.reward_type ?? 'float',
    status: sample.status,
    remove_sample: sample.remove_sample,
    metadata: { ...sample.metadata, ...(messages ? { messages } : {}) },
    ...(sample.response === undefined ? {} : { response: sample.response }),
    ...(sample.prefix_cache_info === undefined ? {} : { prefix_cache_info: sample.prefix_cache_info }),
    ...(sample.weight_versions === undefined ? {} : { weight_versions: sample.weight_versions }),
    ...(sample.non_generation_time === undefined ? {} : { non_generation_time: sample.non_generation_time }),
  };
}

/**
 * merge.py sets `metadata["messages"]` to the leaf's last request's messages plus the reply
 * (radixark/miles@31f1ca96 miles/rollout/session/samples/merge.py); the fake's wire samples do not carry
 * it, so it comes from the policy request log, joined by the leaf's response id.
 */
export function messagesOf(rollout: Rollout, sample: ReplaySample): unknown[] | null {
  const responseId = leafOf(sample)?.response_id ?? null;
  const request = rollout.requests?.find((r) => r.response_id === responseId);
  if (!request?.messages) return null;
  return request.reply === undefined || request.reply === null
    ? request.messages
    : [...request.messages, request.reply];
}

/** The writer's input for a replay's steps (kept groups, in the order Miles flattens them). */
export function milesDumpInput(
  outcomes: readonly StepOutcome[],
  args: TrainScheduleConfig & { n_samples_per_prompt: number; rollout_batch_size: number },
): unknown {
  return {
    args,
    steps: outcomes.map((outcome) => ({
      rollout_id: outcome.step,
      rollout_time: outcome.durationMs / 1000,
      groups: outcome.groups
        .filter((g) => g.dropped === null)
        .map((g) => g.rollouts.map((r) => r.samples.map((s) => milesSample(s, messagesOf(r, s))))),
    })),
  };
}

export interface MilesWriterRun {
  readonly steps: {
    readonly rollout_id: number;
    readonly mode: 'rollout_side' | 'legacy' | null;
    readonly num_rollouts: number[] | null;
    readonly partitions: number[][] | null;
    readonly error: string | null;
  }[];
  readonly replaced: [string, string][];
}

/** Runs Miles' writers; `log` also gets `log_rollout_data`'s lines. Throws with stderr when it fails. */
export async function writeMilesDumps(options: {
  readonly python: string;
  readonly milesRoot: string;
  readonly input: unknown;
  readonly workDir: string;
  readonly details: string;
  readonly log?: string;
  /** With `log`: `log_rollout_data` from this metrics.py instead of the tree's (write_dumps.py --metrics-py). */
  readonly metricsPy?: string;
}): Promise<MilesWriterRun> {
  const inputFile = join(options.workDir, 'writer-input.json');
  await writeFile(inputFile, JSON.stringify(options.input));
  const result = await execa(
    options.python,
    [
      DUMP_WRITER,
      '--miles-root',
      options.milesRoot,
      '--input',
      inputFile,
      '--details',
      options.details,
      ...(options.log === undefined ? [] : ['--log', options.log]),
      ...(options.metricsPy === undefined ? [] : ['--metrics-py', options.metricsPy]),
    ],
    { reject: false, stdin: 'ignore' },
  );
  if (result.exitCode !== 0) throw new Error(`write_dumps.py exited ${result.exitCode}: ${result.stderr}`);
  return parseJson(result.stdout) as MilesWriterRun;
}
