import { execa } from 'execa';
import { z } from 'zod';
import { HarnessError } from '../../common/errors.ts';
import { parseJson } from '../../common/python-json/loads.ts';
import { MILES_PROFILES, type MilesProfile, milesProfileNamed } from '../../contracts/miles-profile.ts';
import { SESSION_SERVER_LAUNCHER } from '../../miles-bridge/entry-points.ts';

/**
 * What a Miles checkout can do, as the launcher reads it off the checkout's files
 * (miles-bridge/capabilities.py, printed by `--preflight` as `capabilities {json}`), and the Miles profile
 * those capabilities identify. Never read off a commit string: a fork with the same shape gets the same profile.
 */
export const MilesCapabilitiesSchema = z
  .object({
    session_server_config: z.boolean(),
    tito_package: z.boolean(),
    function_registry: z.boolean(),
    pickers: z.array(z.string()),
    needs_pydantic2: z.boolean(),
    sessions_import_sglang: z.boolean(),
    qwen3_tito_family: z.boolean(),
  })
  .strict();
export type MilesCapabilities = z.infer<typeof MilesCapabilitiesSchema>;

/** The checkout's default picker decides: `--session-sample-picker-path`'s default is the one visible difference
 * every newer profile carries (capabilities.py `default_picker_path`). The newest profile with that picker wins. */
export function profileForCapabilities(capabilities: MilesCapabilities): MilesProfile {
  const picker = capabilities.pickers.includes('drop_same_prompt_retries')
    ? 'drop_same_prompt_retries'
    : 'drop_retries';
  const matching = MILES_PROFILES.filter((p) => p.switches.defaultPicker === picker);
  const newest = matching.at(-1);
  if (newest === undefined) {
    throw new HarnessError(
      'conformance.miles_failed',
      `no Miles profile has the default picker ${picker} of this checkout`,
    );
  }
  return newest;
}

/** The profile a command runs under: the checkout's, refused when an explicit `--miles-profile` contradicts it. */
export function profileForCheckout(
  capabilities: MilesCapabilities,
  explicit: string | undefined,
): MilesProfile {
  const detected = profileForCapabilities(capabilities);
  if (explicit !== undefined && explicit !== detected.name) {
    const named = milesProfileNamed(explicit);
    throw new HarnessError(
      'usage.miles_profile_contradicts_checkout',
      `--miles-profile ${explicit} contradicts the checkout, whose capabilities make it profile ${detected.name}` +
        (named === undefined ? '' : ` (${explicit}'s default picker is ${named.switches.defaultPicker})`),
      { details: { flag: explicit, checkout: detected.name } },
    );
  }
  return detected;
}

/** Runs the launcher's `--preflight` under `python` and reads the capabilities line (exit 3 as a precondition). */
export async function readMilesCapabilities(milesRoot: string, python: string): Promise<MilesCapabilities> {
  const check = await execa(python, [SESSION_SERVER_LAUNCHER, '--miles-root', milesRoot, '--preflight'], {
    reject: false,
    stdin: 'ignore',
  });
  if (check.exitCode !== 0) {
    const reason =
      `${check.stderr}`.trim().split('\n').at(-1) || `${python}: ${check.shortMessage ?? 'cannot run'}`;
    throw new HarnessError('precondition.miles_python', reason.replace(/^precondition: /, ''), {
      details: { reason: 'python' },
    });
  }
  const line = `${check.stdout}`.split('\n').find((l) => l.startsWith('capabilities '));
  if (line === undefined)
    throw new HarnessError('conformance.miles_failed', 'the launcher printed no capabilities line');
  return MilesCapabilitiesSchema.parse(parseJson(line.slice('capabilities '.length)));
}
