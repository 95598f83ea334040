import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { HarnessError } from '../../common/errors.ts';
import { parseJson } from '../../common/python-json/loads.ts';
import type { FaultScenario, MilesRowVerdict } from '../../contracts/fault-scenario.ts';
import { REWARD_ROWS } from '../../miles-bridge/entry-points.ts';
import { compareRecords } from '../conformance/compare.ts';
import { retainedRows } from '../model/retained.ts';
import { type PlayedRollout, scenarioGroups, scenarioNormalization } from './harness-side.ts';
import { mismatchTypes, sampleStatuses, turnStatuses } from './samples-answer.ts';

/**
 * Miles' side of a catalogue row: what its own session server answered (the statuses, the samples and
 * their `tito_session_mismatch`), whether the fake answered the same bytes, and what its own reward
 * post-processing and pass@k make of the rows (miles-bridge/reward_rows.py). The rows are Miles' samples
 * as `agentic_tool_call.generate` leaves them (the driver's mirror of it, which `harness differential`
 * checks against Miles' own rollout path).
 */

interface RewardRowsAnswer {
  readonly rewards: MilesRowVerdict['rewards'];
  readonly passrate: Record<string, number>;
  readonly passrate_excluded_groups: number;
}

async function milesRewardRows(
  milesRoot: string,
  python: string,
  request: Record<string, unknown>,
): Promise<RewardRowsAnswer> {
  const dir = await mkdtemp(join(tmpdir(), 'reward-rows-'));
  try {
    const file = join(dir, 'request.json');
    await writeFile(file, JSON.stringify(request));
    const run = await execa(python, [REWARD_ROWS, '--miles-root', milesRoot, '--request', file], {
      reject: false,
      stdin: 'ignore',
      env: { PYTHONDONTWRITEBYTECODE: '1' },
    });
    if (run.exitCode !== 0)
      throw new HarnessError(
        run.exitCode === 3 ? 'precondition.miles_python' : 'conformance.miles_failed',
        `miles-bridge/reward_rows.py exited ${run.exitCode}: ${String(run.stderr).split('\n').slice(-5).join('\n')}`,
        { details: { reason: String(run.stderr) } },
      );
    return parseJson(String(run.stdout)) as RewardRowsAnswer;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function milesVerdict(
  scenario: FaultScenario,
  miles: readonly PlayedRollout[],
  fake: readonly PlayedRollout[],
  checkout: { readonly milesRoot: string; readonly python: string },
): Promise<MilesRowVerdict> {
  const differences = miles.flatMap((m, k) =>
    compareRecords(fake[k]!.record, m.record).map((d) => `rollout ${k}: ${d.step} ${d.what}`),
  );
  const rows = retainedRows(scenarioGroups(scenario, miles));
  const answer = await milesRewardRows(checkout.milesRoot, checkout.python, {
    args: scenarioNormalization(scenario),
    rows: rows.map((s) => ({
      group_index: s.group_index,
      index: s.index,
      rollout_id: s.rollout_id,
      reward: s.reward,
    })),
  });
  return {
    turn_statuses: miles.map((m) => turnStatuses(m.record)),
    sample_statuses: miles.map((m) => sampleStatuses(m.record)),
    mismatch_types: [...new Set(miles.flatMap((m) => mismatchTypes(m.record)))].sort(),
    rewards: answer.rewards,
    passrate: answer.passrate,
    passrate_excluded_groups: answer.passrate_excluded_groups,
    fake_agrees: differences.length === 0,
    differences: [...new Set(differences)],
  };
}
