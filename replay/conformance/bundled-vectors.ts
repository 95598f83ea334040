import { type MilesProfile, milesProfileNamed } from '../../contracts/miles-profile.ts';

/** The bundled conformance vectors: session traces and what Miles made of each (fixtures/conformance). */
export const BUNDLED_VECTORS_DIR = new URL('../../fixtures/conformance/session-v2/', import.meta.url)
  .pathname;

function profileNamed(name: string): MilesProfile {
  const profile = milesProfileNamed(name);
  if (profile === undefined) throw new Error(`no Miles profile named ${name}`);
  return profile;
}

/**
 * The Miles whose own v2 session logic produced the bundled `.expected.json` files: radixark/miles@31f1ca96
 * (fixtures/conformance/PROVENANCE.md). Checks against those files run the fake under this profile, whatever
 * the default profile is.
 */
export const VECTORS_MILES_PROFILE: MilesProfile = profileNamed('31f1ca96');
