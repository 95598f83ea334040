/**
 * The deep tier's campaign seed: HARNESS_DEEP_SEED, which vitest.deep.config.ts draws fresh (or takes from
 * the environment), prints and passes to its workers; a random one when a campaign file runs on its own.
 */
export function deepCampaignSeed(): number {
  const given = process.env.HARNESS_DEEP_SEED;
  return given === undefined ? Math.floor(Math.random() * 2 ** 31) : Number(given);
}
