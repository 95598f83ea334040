import type { ReportMilesProfile } from './schema.ts';

/** `Miles profile NAME (commits), picker P`: what every check and finding holds under. */
export function profileText(p: ReportMilesProfile): string {
  const checked = p.checked_against_miles === null ? '; not yet checked against real Miles code' : '';
  return `Miles profile ${p.name} (${p.commits.join(', ')}${checked}), picker ${p.picker}`;
}
