import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { parseJson } from '../../common/python-json/loads.ts';
import { overlayId } from './overlays.ts';
import { Overlay, type Surface } from './surface-schema.ts';

/**
 * The newer Miles' surface (fixtures/miles-cli/newer-miles.json): 31f1ca96's surface plus one overlay
 * holding the session arguments of sii-avalanche/miles@379af027 `miles/utils/arguments.py`
 * (`add_session_arguments`), and the recipe flags that Miles renamed since.
 */
export const NEWER_MILES_PATH = fileURLToPath(
  new URL('../../fixtures/miles-cli/newer-miles.json', import.meta.url),
);

const NewerMiles = z.object({
  format: z.literal('harness-newer-miles/1'),
  name: z.string(),
  about: z.string(),
  overlay: Overlay,
  renamed: z.array(z.object({ flag: z.string(), now: z.string(), evidence: z.string() })),
});
export type NewerMiles = z.infer<typeof NewerMiles>;

export function loadNewerMiles(path: string = NEWER_MILES_PATH): NewerMiles {
  return NewerMiles.parse(parseJson(readFileSync(path, 'utf8')));
}

/** The base surface with the newer Miles' overlay appended, and that overlay's id (to apply it). */
export function newerSurface(base: Surface, newer: NewerMiles): { surface: Surface; overlay: string } {
  return {
    surface: { ...base, overlays: [...base.overlays, newer.overlay] },
    overlay: overlayId(newer.overlay),
  };
}

/** A default the newer Miles changed for a flag the argv leaves unset: what Miles now runs with. */
export interface ChangedDefault {
  readonly flag: string;
  readonly was: unknown;
  readonly now: unknown;
  readonly where: string;
}

/**
 * The newer overlay's flags whose default differs from 31f1ca96's (a flag 31f1ca96 lacks counts as
 * changed from absent) and that `given` (the argv's option strings) does not set.
 */
export function changedDefaults(
  base: Surface,
  newer: NewerMiles,
  given: ReadonlySet<string>,
): ChangedDefault[] {
  const byFlag = new Map(base.flags.map((f) => [f.flag, f] as const));
  const out: ChangedDefault[] = [];
  for (const record of [...(newer.overlay.changed_flags ?? []), ...newer.overlay.flags]) {
    if (given.has(record.flag) || record.aliases.some((a) => given.has(a))) continue;
    const old = byFlag.get(record.flag);
    const was = old === undefined ? '(no such flag)' : old.default;
    if (old !== undefined && JSON.stringify(old.default) === JSON.stringify(record.default)) continue;
    out.push({ flag: record.flag, was, now: record.default, where: record.where });
  }
  return out;
}
