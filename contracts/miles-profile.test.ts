import { describe, expect, it } from 'vitest';
import {
  DEFAULT_MILES_PROFILE,
  MILES_PROFILE_NAMES,
  MILES_PROFILES,
  MilesProfileSchema,
  milesProfileNamed,
} from './miles-profile.ts';

describe('Miles profiles', () => {
  it('each profile is valid, names are unique, and a name finds its profile', () => {
    for (const profile of MILES_PROFILES) expect(MilesProfileSchema.parse(profile)).toEqual(profile);
    expect(new Set(MILES_PROFILE_NAMES).size).toBe(MILES_PROFILES.length);
    for (const name of MILES_PROFILE_NAMES) expect(milesProfileNamed(name)?.name).toBe(name);
    expect(milesProfileNamed('no-such-miles')).toBeUndefined();
  });

  it('the default is the newest profile checked against real Miles code', () => {
    expect(DEFAULT_MILES_PROFILE.checkedAgainstMiles).not.toBeNull();
    const newerChecked = MILES_PROFILES.slice(MILES_PROFILES.indexOf(DEFAULT_MILES_PROFILE) + 1).filter(
      (p) => p.checkedAgainstMiles !== null,
    );
    expect(newerChecked).toEqual([]);
  });

  it('refuses a switch set with an unknown or missing switch', () => {
    const [first] = MILES_PROFILES;
    expect(() =>
      MilesProfileSchema.parse({ ...first, switches: { ...first?.switches, extra: true } }),
    ).toThrow();
    const { defaultPicker: _dropped, ...missing } = first?.switches ?? {};
    expect(() => MilesProfileSchema.parse({ ...first, switches: missing })).toThrow();
  });
});
