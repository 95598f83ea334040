import { describe, expect, it } from 'vitest';
import { isTraceReply } from '../../contracts/trace.ts';
import { CATALOGUE_MILES_PROFILE, catalogueFiles, readCatalogue } from '../../replay/faults/catalogue.ts';
import { runCatalogue } from '../../replay/faults/run-catalogue.ts';

/**
 * The field-failure catalogue (docs/field-failures.md) played through the fakes. The oracle is Miles' own
 * code: each row records what Miles' session server answered (turn statuses, sample statuses, mismatch
 * types) and whether its reward post-processing raised, obtained by `harness catalogue --miles-root
 * --record` on the profile's checkout (re-checked by test/miles/field-failures.test.ts). The fakes must
 * give the same observables, and the harness's check verdicts must be the ones recorded.
 */

const rows = await readCatalogue(await catalogueFiles());
const profile = CATALOGUE_MILES_PROFILE.name;

describe('the field-failure catalogue', () => {
  it('has at least 20 rows, each citing upstream, stating every reply id and recorded under the profile', () => {
    expect(rows.length).toBeGreaterThanOrEqual(20);
    for (const { scenario } of rows) {
      expect(scenario.upstream.length, scenario.id).toBeGreaterThan(0);
      for (const rollout of scenario.rollouts)
        for (const turn of rollout.turns)
          if (isTraceReply(turn.response)) expect(turn.response.completion_ids, scenario.id).toBeDefined();
      expect(scenario.recorded?.miles[profile], `${scenario.id}: Miles ${profile} verdict`).toBeDefined();
      // A row no check catches says why; a caught row does not need to.
      const notCaught = scenario.recorded?.harness.outcome === 'not_caught';
      expect(scenario.not_caught_why !== undefined, `${scenario.id}: not_caught_why`).toBe(notCaught);
    }
  });

  it("plays every row through the fakes with Miles' observables and the recorded check verdicts", async () => {
    const results = await runCatalogue(rows.map((r) => r.scenario));
    for (const [k, result] of results.entries()) {
      const recorded = rows[k]!.scenario.recorded!;
      const miles = recorded.miles[profile]!;
      const { id } = result;
      // Miles' own answers (the independent oracle).
      expect(result.harness.turn_statuses, `${id}: turn statuses`).toEqual(miles.turn_statuses);
      expect(result.harness.sample_statuses, `${id}: sample statuses`).toEqual(miles.sample_statuses);
      expect(result.harness.mismatch_types, `${id}: mismatch types`).toEqual(miles.mismatch_types);
      expect(result.harness.conversion_error !== null, `${id}: conversion raises`).toBe(
        'raised' in miles.rewards,
      );
      // The harness's own verdicts, as recorded.
      expect(result.harness.checks, `${id}: checks`).toEqual(recorded.harness.checks);
      expect(result.harness.outcome, `${id}: outcome`).toBe(recorded.harness.outcome);
      expect(result.profile).toBe(profile);
    }
  });
});
