import type { ReportGroup, ReportRollout, ReportStep } from './schema.ts';

/**
 * The episode cell of a rollout row: the script Harbor's mock played and its variant (`variants[N]`,
 * docs/episodes.md), marked `(pool)` when no script has the rollout's instance id and the pool stood in;
 * `-` when `/run` gave no result.
 */
export function episodeCell(episode: ReportRollout['episode']): string {
  if (episode === null) return '-';
  return `${episode.script} v${episode.variant}${episode.pool_fallback ? ' (pool)' : ''}`;
}

/** Said under a table whose episode cells have a `(pool)` mark. */
const POOL_FALLBACK_NOTE =
  "(pool): no episode script has the rollout's instance_id, so the mock's pool played this script (docs/episodes.md)";

/** The note a step's rollout table needs under it: `POOL_FALLBACK_NOTE` when a cell has `(pool)`. */
export function poolFallbackNote(step: Pick<ReportStep, 'groups'>): string | null {
  return step.groups.some((g) => g.rollouts.some((r) => r.episode?.pool_fallback))
    ? POOL_FALLBACK_NOTE
    : null;
}

/**
 * A rollout's state: its group's drop reason and its own abort reason (`no_records`, `collect_failed`,
 * …; the one that took the group down says both), else Harbor's exit status.
 */
export function stateCell(group: Pick<ReportGroup, 'dropped'>, rollout: ReportRollout): string {
  const aborted = rollout.aborted ? `aborted: ${rollout.abort_reason ?? 'unknown'}` : null;
  if (group.dropped) return aborted ? `dropped: ${group.dropped} (${aborted})` : `dropped: ${group.dropped}`;
  return aborted ?? rollout.exit_status ?? '';
}
