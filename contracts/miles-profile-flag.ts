import { z } from 'zod';
import { valueFlag } from '../common/cli-flags.ts';
import { DEFAULT_MILES_PROFILE, MILES_PROFILE_NAMES, milesProfileNamed } from './miles-profile.ts';

/**
 * `--miles-profile NAME`: which Miles the fakes answer as (contracts/miles-profile.ts), read as the profile
 * itself; an unknown name is a usage error listing the known ones. Default: the newest profile checked
 * against real Miles code.
 */
export const milesProfileFlag = valueFlag(
  'NAME',
  z
    .string()
    .default(DEFAULT_MILES_PROFILE.name)
    .transform((name, ctx) => {
      const profile = milesProfileNamed(name);
      if (profile === undefined) {
        ctx.addIssue({
          code: 'custom',
          message: `--miles-profile: unknown profile '${name}'; known: ${MILES_PROFILE_NAMES.join(', ')}`,
        });
        return z.NEVER;
      }
      return profile;
    }),
  `which Miles the fakes answer as: ${MILES_PROFILE_NAMES.join(' or ')} (default ${DEFAULT_MILES_PROFILE.name},\nthe newest checked against real Miles code; docs/session-server.md "Miles profiles")`,
);
