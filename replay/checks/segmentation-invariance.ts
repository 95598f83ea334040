import { isHarnessError } from '../../common/errors.ts';
import { normalizeRewards } from '../grpo/normalize.ts';
import { retainedRollouts } from '../model/retained.ts';
import { rolloutKey } from '../model/rollout-key.ts';
import { checkResult, evidence } from './evidence.ts';
import type { Evidence } from './evidence-schema.ts';
import type { CheckData, InvariantCheck } from './types.ts';

const NAME = 'segmentation_invariance';
const TITLE = 'advantages equal per-rollout normalisation, however many samples a rollout produced';

/** float32 rounding plus the 1e-6 in the denominator stay far below this. */
const TOLERANCE = 1e-5;

/**
 * Check 5: every retained row's advantage equals the per-rollout value Miles computes from raw rewards
 * (one member per rollout, broadcast to siblings). The evidence also shows, for every compacted
 * rollout, what naive per-sample normalisation would have given; advantages that match the naive values
 * instead are reported as `per_sample_normalization`.
 */
export const segmentationInvarianceCheck: InvariantCheck = {
  name: NAME,
  title: TITLE,
  requires: ['advantages'],
  uses: [],
  run(data: CheckData) {
    const out: Evidence[] = [];
    const config = data.normalization!;
    for (const step of data.steps) {
      const rollouts = retainedRollouts(step.groups);
      const rows = rollouts.flatMap((r) => r.samples);
      const owners = rollouts.flatMap((r) => r.samples.map((_, position) => ({ rollout: r, position })));
      let expected: readonly number[];
      let naive: readonly number[];
      try {
        expected = normalizeRewards(rows, config).normalized;
        naive = normalizeRewards(rows, config, 'row').normalized;
      } catch (error) {
        out.push(
          evidence(
            'not_normalizable',
            'fail',
            `Miles' normalisation would raise: ${(error as Error).message}`,
            {
              step: step.step,
              data: { code: isHarnessError(error) ? error.code : null },
            },
          ),
        );
        continue;
      }
      const actual = step.advantages!;
      const trainedRollouts = new Set(
        owners.filter((_, i) => (actual[i] ?? null) !== null).map((o) => o.rollout),
      );
      rows.forEach((_, i) => {
        const { rollout, position } = owners[i]!;
        const got = actual[i] ?? null;
        const want = expected[i]!;
        const naiveValue = naive[i]!;
        const at = { step: step.step, rollout, sample: position };
        if (got === null) {
          // Miles schedules whole rollouts (dp_schedule.py): a rollout is trained in full or not at all.
          if (trainedRollouts.has(rollout))
            out.push(
              evidence(
                'partly_trained',
                'fail',
                `sample ${position} of rollout ${rolloutKey(rollout)} has no train row while a sibling has one`,
                at,
              ),
            );
          else if (position === 0)
            out.push(
              evidence(
                'not_trained',
                'info',
                `rollout ${rolloutKey(rollout)} has no train row: the train schedule dropped it`,
                at,
              ),
            );
          return;
        }
        const values = { advantage: got, per_rollout: want, per_sample: naiveValue };
        if (Math.abs(got - want) > TOLERANCE) {
          const isNaive = Math.abs(got - naiveValue) <= TOLERANCE;
          out.push(
            evidence(
              isNaive ? 'per_sample_normalization' : 'advantage_mismatch',
              'fail',
              isNaive
                ? `sample advantage ${got} is the per-sample value; per-rollout normalisation gives ${want}`
                : `sample advantage ${got} differs from the per-rollout value ${want}`,
              { ...at, data: values },
            ),
          );
        } else if (position === 0 && rollout.samples.length > 1 && Math.abs(naiveValue - want) > TOLERANCE)
          out.push(
            evidence(
              'per_sample_would_differ',
              'info',
              `rollout ${rolloutKey(rollout)} has ${rollout.samples.length} samples: per-sample normalisation would give ${naiveValue} instead of ${want}`,
              { ...at, data: { ...values, samples: rollout.samples.length } },
            ),
          );
      });
    }
    return checkResult(NAME, TITLE, 'recomputed', out);
  },
};
