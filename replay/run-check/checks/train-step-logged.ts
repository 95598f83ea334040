import type { SmokeCheck } from '../check-result.ts';
import type { MetricTable } from '../log/metric-table.ts';

/** Training really stepped: `train/step` (logged by `log_train_step` after every optimizer step) is in the log. */
export function checkTrainStepLogged(metrics: MetricTable, unreadableLines: number): SmokeCheck {
  const steps = (metrics.get('train/step') ?? []).map((p) => p.value);
  const unreadable = unreadableLines > 0 ? `; ${unreadableLines} metric lines could not be read` : '';
  return {
    name: 'train_step_logged',
    source: 'logs',
    verdict: steps.length > 0 ? 'pass' : 'fail',
    summary:
      steps.length > 0
        ? `train/step logged ${steps.length} times: ${steps.join(', ')}${unreadable}`
        : `no 'step N: {...'train/step'...}' line in the launcher log${unreadable}`,
    evidence: [],
  };
}
