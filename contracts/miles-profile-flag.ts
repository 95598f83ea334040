import { z } from 'zod';
import { valueFlag } from '../common/cli-flags.ts';
import {
  DEFAULT_MILES_PROFILE,
  MILES_PROFILE_NAMES,
  type MilesProfile,
  milesProfileNamed,
} from './miles-profile.ts';

/** A profile name read as the profile; an unknown name is a usage error listing the known ones. */
const ProfileName = z.string().transform((name, ctx): MilesProfile => {
  const profile = milesProfileNamed(name);
  if (profile === undefined) {
    ctx.addIssue({
      code: 'custom',
      message: `--miles-profile: unknown profile '${name}'; known: ${MILES_PROFILE_NAMES.join(', ')}`,
    });
    return z.NEVER;
  }
  return profile;
});

/**
 * `--miles-profile NAME`: which Miles the fakes answer as (contracts/miles-profile.ts). Default: the
 * newest profile checked against real Miles code.
 */
export const milesProfileFlag = valueFlag(
  'NAME',
  z.string().default(DEFAULT_MILES_PROFILE.name).pipe(ProfileName),
  `which Miles the fakes answer as: ${MILES_PROFILE_NAMES.join(' or ')} (default ${DEFAULT_MILES_PROFILE.name},\nthe newest checked against real Miles code; docs/session-server.md "Miles profiles")`,
);

/**
 * `--miles-profile NAME` on a command that runs a Miles checkout's session server: the profile is read off
 * the checkout's capabilities, and a name given here must agree with it (replay/conformance/miles-capabilities.ts).
 */
export function checkoutMilesProfileFlag(help: string) {
  return optionalMilesProfileFlag(help);
}

/**
 * `--miles-profile NAME` whose default depends on the other flags (the command resolves it): unset when not
 * given. `help` says what the profile is for and what the default is.
 */
export function optionalMilesProfileFlag(help: string) {
  return valueFlag('NAME', ProfileName.optional(), `${MILES_PROFILE_NAMES.join(' or ')}: ${help}`);
}
