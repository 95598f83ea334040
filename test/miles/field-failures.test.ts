import { describe, expect, it } from 'vitest';
import { MILES_PROFILES, type MilesProfile, milesProfileNamed } from '../../contracts/miles-profile.ts';
import { catalogueFiles, readCatalogue } from '../../replay/faults/catalogue.ts';
import { runCatalogue } from '../../replay/faults/run-catalogue.ts';
import { type MilesGate, milesGate, newerMilesGate } from './gate.ts';

// The field-failure catalogue through Miles' own code (docs/field-failures.md): every row's rollouts
// against Miles' session server v2 on CPU (Qwen3 tokenizer) and its reward post-processing and pass@k
// (miles-bridge/reward_rows.py), under the profile the checkout's capabilities identify. Each row's recorded
// Miles verdict under that profile must be what Miles does now, and the fake (answering as that profile)
// must answer every exchange as Miles does. 31f1ca96's tree is MILES_ROOT; the newer tree (4d412b5a) is
// MILES_NEXT_ROOT with MILES_NEXT_PYTHON (a Python with pydantic 2), as test/miles/conformance-next.test.ts.
const needs = { sessionServer: true, qwen3: true, torch: true } as const;
const trees: Array<{ profile: MilesProfile; gate: MilesGate; unmet: readonly string[] }> = [];
const current = await milesGate(needs);
trees.push({ profile: milesProfileNamed('31f1ca96')!, gate: current, unmet: current.unmet });
const next = await newerMilesGate(needs);
trees.push({ profile: milesProfileNamed('4d412b5a')!, gate: next, unmet: next.unmet });

const rows = await readCatalogue(await catalogueFiles());

/** Every row's Miles verdict under the checkout's profile, as recorded, and the fake agreeing exchange by exchange. */
async function expectRecorded(profile: MilesProfile, gate: MilesGate): Promise<void> {
  const results = await runCatalogue(
    rows.map((r) => r.scenario),
    { miles: { milesRoot: gate.milesRoot, python: gate.python }, milesProfile: profile },
  );
  for (const [k, result] of results.entries()) {
    expect(result.profile, result.id).toBe(profile.name);
    expect(result.miles, result.id).not.toBeNull();
    expect(result.miles!.differences, `${result.id}: fake against Miles`).toEqual([]);
    expect(result.miles, result.id).toEqual(rows[k]!.scenario.recorded?.miles[profile.name]);
  }
}

for (const { profile, gate, unmet } of trees) {
  if (unmet.length > 0)
    console.warn(
      `[skip] miles field-failure catalogue under ${profile.name}, unmet preconditions:\n  ${unmet.join('\n  ')}`,
    );
  // Rows hold a profile's Miles verdicts only once its tree could play them (docs/field-failures.md "Not done").
  const unrecorded = rows.filter((r) => r.scenario.recorded?.miles[profile.name] === undefined);
  const why =
    unmet.length > 0
      ? unmet.map((u) => u.split(':')[0]).join(', ')
      : unrecorded.length > 0
        ? `${unrecorded.length} rows record no Miles ${profile.name} verdict`
        : '';

  describe.runIf(profile.name === '31f1ca96' && gate.required && unmet.length > 0)(
    'miles catalogue suite (HARNESS_MILES_REQUIRED=1)',
    () => {
      it('has its preconditions', () => {
        expect(unmet).toEqual([]);
      });
    },
  );

  describe.skipIf(unmet.length > 0)(`field-failure catalogue against the ${profile.name} tree`, () => {
    it('reads the checkout as its profile and refuses a contradicting --miles-profile (exit 2)', async () => {
      const other = MILES_PROFILES.find((p) => p.name !== profile.name)!;
      await expect(
        runCatalogue([], { miles: { milesRoot: gate.milesRoot, python: gate.python }, milesProfile: other }),
      ).rejects.toMatchObject({
        code: 'usage.miles_profile_contradicts_checkout',
        details: { flag: other.name, checkout: profile.name },
      });
    });

    it.skipIf(why !== '')(
      why === ''
        ? `gives every row the Miles verdict it recorded under ${profile.name}`
        : `gives every row the Miles verdict it recorded under ${profile.name} (skipped: ${why})`,
      { timeout: 1_200_000 },
      () => expectRecorded(profile, gate),
    );
  });
}
