import { plural } from '../../common/plural.ts';
import type { ReportStep } from './schema.ts';

/**
 * One line on how the trainer splits the step into optimizer steps (the global batch size, each
 * step's rollouts and rows, the rollouts it drops, or the assertion Miles would raise instead).
 */
export function scheduleText(step: ReportStep): string {
  const s = step.train_schedule;
  const head = `train schedule (${s.mode === 'rollout_side' ? 'rollout side' : 'legacy, rows per step'}): global batch size ${s.global_batch_size}, dp ${s.dp_size}, ${plural(s.distinct_rollouts, 'distinct rollout')}`;
  if (s.error) return `${head}; Miles would raise (${s.error.code}): ${s.error.message}; nothing trains`;
  const steps = s.steps
    .map((t) =>
      t.rollouts === null
        ? `${plural(t.row_count, 'row')} / ${t.loss_divisor}`
        : `${plural(t.rollouts.length, 'rollout')} (${plural(t.row_count, 'row')}) / ${t.loss_divisor}`,
    )
    .join(', ');
  const dropped =
    s.dropped_rollouts.length === 0
      ? 'no rollout dropped'
      : `dropped ${plural(s.dropped_rollouts.length, 'rollout')} (${plural(s.dropped_rows, 'row')}): ${s.dropped_rollouts.join(', ')}`;
  return `${head}; ${plural(s.steps.length, 'optimizer step')}: ${steps}; ${dropped}`;
}

/** A rollout's train-step cell: its optimizer step, `dropped` by the schedule, or `-` (not trained). */
export function trainStepCell(weight: { train_step: number | null; trained: boolean } | null): string {
  if (weight === null) return '-';
  if (!weight.trained) return 'dropped';
  return weight.train_step === null ? 'legacy' : String(weight.train_step);
}
