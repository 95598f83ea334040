import { describe, expect, it } from 'vitest';
import { CATALOGUE_MILES_PROFILE, catalogueFiles, readCatalogue } from '../../replay/faults/catalogue.ts';
import { runCatalogue } from '../../replay/faults/run-catalogue.ts';
import { milesGate } from './gate.ts';

// The field-failure catalogue through Miles' own code (docs/field-failures.md): every row's rollouts
// against Miles' session server v2 on CPU (Qwen3 tokenizer) and its reward post-processing and pass@k
// (miles-bridge/reward_rows.py). Each row's recorded Miles verdict under the profile the fakes stand in for
// must be what Miles does now, and the fake must answer every exchange as Miles does.
const gate = await milesGate({ sessionServer: true, qwen3: true, torch: true });
if (gate.unmet.length > 0)
  console.warn(`[skip] miles field-failure catalogue, unmet preconditions:\n  ${gate.unmet.join('\n  ')}`);

describe.runIf(gate.required && gate.unmet.length > 0)(
  'miles catalogue suite (HARNESS_MILES_REQUIRED=1)',
  () => {
    it('has its preconditions', () => {
      expect(gate.unmet).toEqual([]);
    });
  },
);

describe.skipIf(gate.unmet.length > 0)(
  gate.unmet.length > 0
    ? `field-failure catalogue through Miles (skipped: ${gate.unmet.map((u) => u.split(':')[0]).join(', ')})`
    : 'field-failure catalogue through Miles',
  () => {
    it(`gives every row the Miles verdict it recorded under ${CATALOGUE_MILES_PROFILE.name}`, {
      timeout: 1_200_000,
    }, async () => {
      const rows = await readCatalogue(await catalogueFiles());
      const results = await runCatalogue(
        rows.map((r) => r.scenario),
        { miles: { milesRoot: gate.milesRoot, python: gate.python } },
      );
      for (const [k, result] of results.entries()) {
        expect(result.miles, result.id).not.toBeNull();
        expect(result.miles!.differences, `${result.id}: fake against Miles`).toEqual([]);
        expect(result.miles, result.id).toEqual(rows[k]!.scenario.recorded?.miles[result.profile]);
      }
    });
  },
);
