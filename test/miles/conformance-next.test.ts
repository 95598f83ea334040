import { describe, expect, it } from 'vitest';
import { captureIo } from '../../cli/io.ts';
import { main } from '../../cli/main.ts';
import { milesProfileNamed } from '../../contracts/miles-profile.ts';
import { bundledTraceFiles, runConformance } from '../../replay/conformance/run-conformance.ts';
import { newerMilesGate } from './gate.ts';

// `harness conformance` against a newer Miles session server (docs/conformance.md "A newer Miles"): the
// launcher adapts to the checkout's capabilities, the fake runs under the profile they identify, and every
// bundled trace must agree. Gated on MILES_NEXT_ROOT (the tree) and MILES_NEXT_PYTHON (a Python with pydantic 2).
const gate = await newerMilesGate({ sessionServer: true });
const unmet = gate.unmet;
if (unmet.length > 0)
  console.warn(`[skip] newer Miles conformance, unmet preconditions:\n  ${unmet.join('\n  ')}`);

interface Report {
  miles_profile: { name: string; commits: string[] };
  traces: Array<{ trace: string; differences: unknown[] }>;
  agree: number;
  total: number;
  adaptations: string[];
  raw_requests: { differences: unknown[] };
}

describe.skipIf(unmet.length > 0)(
  unmet.length > 0
    ? `newer Miles session server on CPU (skipped: ${unmet.map((u) => u.split(':')[0]).join(', ')})`
    : 'newer Miles session server on CPU',
  () => {
    it('is read as the newer profile and agrees with the fake on every bundled trace and raw request', async () => {
      const io = captureIo({});
      const code = await main(
        ['conformance', '--miles-root', gate.milesRoot, '--python', gate.python, '--json'],
        io,
      );
      const report = JSON.parse(io.out()) as Report;
      const expected = milesProfileNamed('4d412b5a');
      expect(report.miles_profile).toEqual({ name: expected?.name, commits: expected?.commits });
      expect(report.adaptations.some((a) => a.startsWith('adapted SessionServer(SessionServerConfig)'))).toBe(
        true,
      );
      expect(report.traces.filter((t) => t.differences.length > 0)).toEqual([]);
      expect(report.raw_requests.differences).toEqual([]);
      expect(report.total).toBe((await bundledTraceFiles()).length);
      expect(code).toBe(0);
    });

    it('refuses an explicit profile that contradicts the checkout, naming both (exit 2)', async () => {
      const io = captureIo({});
      const args = [
        'conformance',
        '--miles-root',
        gate.milesRoot,
        '--python',
        gate.python,
        '--miles-profile',
        '31f1ca96',
      ];
      expect(await main(args, io)).toBe(2);
      await expect(
        runConformance({
          milesRoot: gate.milesRoot,
          python: gate.python,
          traces: [],
          milesProfile: '31f1ca96',
        }),
      ).rejects.toMatchObject({
        code: 'usage.miles_profile_contradicts_checkout',
        details: { flag: '31f1ca96', checkout: '4d412b5a' },
      });
    });
  },
);
