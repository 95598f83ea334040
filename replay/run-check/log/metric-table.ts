/** One logged value of a metric: the step it was logged at (the number in `step N:` / `rollout N:`). */
export interface MetricPoint {
  readonly step: number;
  readonly value: number;
}

/** Every metric found in a run's logs, by Miles' name (`train/step`, `rollout/num_training_samples`). */
export type MetricTable = ReadonlyMap<string, readonly MetricPoint[]>;
