import { describe, expect, it } from 'vitest';
import { captureIo } from '../../cli/io.ts';
import { main } from '../../cli/main.ts';
import { parseJson } from '../../common/python-json/loads.ts';
import { MILES_PROFILE_NAMES } from '../../contracts/miles-profile.ts';

// `--miles-profile NAME` on every command that starts a fake (contracts/miles-profile-flag.ts, declared once):
// an unknown name is a usage error (exit 2), one `[harness]` line listing every known profile, before
// anything starts.

const COMMANDS: readonly (readonly string[])[] = [
  ['serve', 'session-server'],
  ['replay'],
  ['fuzz'],
  ['trace', 'replay', 'fixtures/conformance/session-v2/trace-003.json'],
  ['conformance', '--miles-root', '/nonexistent'],
  ['differential', '--miles-root', '/nonexistent'],
  ['smoke', '--dry-run'],
];

describe('--miles-profile', () => {
  it.each(COMMANDS.map((c) => [c.join(' '), c] as const))(
    '%s refuses an unknown profile',
    async (_n, args) => {
      const io = captureIo();
      expect(await main([...args, '--miles-profile', 'no-such-miles'], io)).toBe(2);
      const err = io.err();
      expect(err).toMatch(/^\[harness\] [^\n]+\n$/);
      expect(err).toContain("'no-such-miles'");
      for (const name of MILES_PROFILE_NAMES) expect(err).toContain(name);
    },
  );

  it('smoke --dry-run names the profile in its plan', async () => {
    const io = captureIo();
    expect(await main(['smoke', '--dry-run', '--json', '--miles-profile', '4d412b5a'], io)).toBe(0);
    const plan = parseJson(io.out()) as { miles_profile: { name: string; commits: string[] } };
    expect(plan.miles_profile.name).toBe('4d412b5a');
    expect(plan.miles_profile.commits.at(-1)).toMatch(/^sii-avalanche\/miles@4d412b5a/);
  });
});
