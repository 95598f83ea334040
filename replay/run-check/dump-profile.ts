import {
  DEFAULT_MILES_PROFILE,
  type MilesProfile,
  milesProfileNamed,
} from '../../contracts/miles-profile.ts';
import type { DumpFormat } from './dump-schema.ts';

/**
 * The Miles profile a dump format names: the newer writers' span dicts are 4d412b5a's, version strings
 * 31f1ca96's; a folder that says neither is read under the default profile. The checks and the metrics
 * recomputed from the dumps hold under it (its `rolloutMetrics` switch: which metrics.py logged them).
 */
export function profileOfDumps(format: DumpFormat): MilesProfile {
  const name =
    format === 'miles-next-spans' ? '4d412b5a' : format === 'miles-31f1ca96' ? '31f1ca96' : undefined;
  return (name === undefined ? undefined : milesProfileNamed(name)) ?? DEFAULT_MILES_PROFILE;
}
