import { deriveFamilyRecords } from './derived-families.ts';
import { overlayId, selectOverlays } from './overlays.ts';
import type { FlagRecord, Surface } from './surface-schema.ts';

/** Where a flag's record came from: the base surface, a derived prefix family, or an overlay. */
type FlagLayer = 'base' | 'derived' | 'overlay';

interface FlagSpec {
  readonly record: FlagRecord;
  readonly layer: FlagLayer;
  /** The overlay id, for layer `overlay`. */
  readonly overlay?: string;
}

/** Every option string `train.py` accepts under a chosen set of overlays, resolved to its record. */
export interface FlagIndex {
  readonly surface: Surface;
  /** Ids of the overlays applied, in surface order. */
  readonly overlays: readonly string[];
  readonly byName: ReadonlyMap<string, FlagSpec>;
  /** Names that only an overlay not applied knows, mapped to that overlay's id (for hints). */
  readonly elsewhere: ReadonlyMap<string, string>;
}

const memo = new WeakMap<Surface, Map<string, FlagIndex>>();

/**
 * Indexes the surface's flags by every name (flag and aliases), adds derived families, then applies
 * the chosen overlays in order: an overlay's `flags` are added and its `changed_flags` replace the
 * base record of the same flag, because an overlay describes a newer Miles in which both hold.
 */
export function buildFlagIndex(surface: Surface, overlayIds: readonly string[] = []): FlagIndex {
  const chosen = selectOverlays(surface, overlayIds);
  const key = chosen.map(overlayId).join(',');
  let perSurface = memo.get(surface);
  if (!perSurface) {
    perSurface = new Map();
    memo.set(surface, perSurface);
  }
  const cached = perSurface.get(key);
  if (cached) return cached;

  const byName = new Map<string, FlagSpec>();
  const put = (spec: FlagSpec): void => {
    // A replacement drops every name of the record it replaces, so no stale alias survives.
    const previous = byName.get(spec.record.flag);
    if (previous) for (const name of namesOf(previous.record)) byName.delete(name);
    for (const name of namesOf(spec.record)) byName.set(name, spec);
  };
  for (const record of surface.flags) put({ record, layer: 'base' });
  for (const record of deriveFamilyRecords(surface))
    if (!byName.has(record.flag)) put({ record, layer: 'derived' });
  for (const overlay of chosen) {
    const id = overlayId(overlay);
    for (const record of [...(overlay.changed_flags ?? []), ...overlay.flags])
      put({ record: { ...record, where: `${record.where} [overlay ${id}]` }, layer: 'overlay', overlay: id });
  }

  const elsewhere = new Map<string, string>();
  for (const overlay of surface.overlays) {
    for (const record of overlay.flags)
      for (const name of namesOf(record)) if (!byName.has(name)) elsewhere.set(name, overlayId(overlay));
  }
  const index: FlagIndex = { surface, overlays: chosen.map(overlayId), byName, elsewhere };
  perSurface.set(key, index);
  return index;
}

function namesOf(record: FlagRecord): string[] {
  return [record.flag, ...record.aliases];
}
