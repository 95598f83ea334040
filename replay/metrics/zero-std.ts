import { HarnessError } from '../../common/errors.ts';
import type { MilesSwitches } from '../../contracts/miles-profile.ts';
import type { LoggedSample } from './logged-sample.ts';
import { pythonNormalisedRoundOneText, pythonRoundOneText } from './python-number.ts';

type ZeroStdRow = Pick<LoggedSample, 'group_index' | 'reward' | 'reward_type'>;

/**
 * `_compute_zero_std_metrics`: the post-filter rows grouped by `group_index`; a group whose rewards all
 * equal its first is "zero std" and counted under `zero_std/count_<bucket>`. Nothing under
 * `advantage_estimator == "ppo"`.
 *
 * - `31f1ca96` (radixark/miles@31f1ca96 miles/ray/rollout/metrics.py): the bucket is
 *   `str(round(reward, 1))`, so an int reward gives `count_1` and a float `count_1.0`; the two
 *   percentages look up the buckets `"0.0"` and `"1.0"`, so int rewards never reach them and 0.04 counts
 *   as zero.
 * - `normalised` (the newer metrics.py, scripts/oracles/metrics_next_oracle.py): the bucket is
 *   `str(round(float(reward), 1) + 0.0)`; `zero_std/percentage` is the zero-std share of all groups and
 *   `all_{zero,one,negative_one}_percentage` count groups whose reward equals 0, 1, -1 exactly.
 */
export function zeroStdMetrics(
  samples: readonly ZeroStdRow[],
  advantageEstimator: string,
  rolloutMetrics: MilesSwitches['rolloutMetrics'],
): Record<string, number> {
  if (advantageEstimator === 'ppo') return {};
  const groups = new Map<number | null, ZeroStdRow[]>();
  for (const s of samples) {
    const members = groups.get(s.group_index);
    if (members) members.push(s);
    else groups.set(s.group_index, [s]);
  }
  const uniform: number[] = [];
  const counts = new Map<string, number>();
  for (const members of groups.values()) {
    const first = members[0]!;
    // Python's `==`: NaN equals nothing, None only None.
    if (!members.every((s) => s.reward === first.reward)) continue;
    if (first.reward === null)
      // round(None, 1) and float(None) raise TypeError in Miles: the step would not be logged at all.
      throw new HarnessError(
        'replay.metric_reward_none',
        `group ${first.group_index} has no reward; Miles' zero-std metric would raise on it`,
      );
    uniform.push(first.reward);
    const key =
      rolloutMetrics === 'normalised'
        ? pythonNormalisedRoundOneText(first.reward)
        : pythonRoundOneText(first.reward, first.reward_type);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const out: Record<string, number> = {};
  for (const [reward, count] of counts) out[`zero_std/count_${reward}`] = count;
  if (groups.size === 0) return out;
  if (rolloutMetrics === '31f1ca96') {
    out['zero_std/all_zero_percentage'] = (counts.get('0.0') ?? 0) / groups.size;
    out['zero_std/all_one_percentage'] = (counts.get('1.0') ?? 0) / groups.size;
    return out;
  }
  const share = (value: number) => uniform.filter((r) => r === value).length / groups.size;
  out['zero_std/percentage'] = uniform.length / groups.size;
  out['zero_std/all_zero_percentage'] = share(0);
  out['zero_std/all_one_percentage'] = share(1);
  out['zero_std/all_negative_one_percentage'] = share(-1);
  return out;
}
