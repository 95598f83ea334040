import type { ReportConfig, ReportFrame } from './build-report.ts';
import { withSteps } from './build-report.ts';
import type { ReplayReport, ReportStep } from './schema.ts';

/**
 * Where a replay puts its report as it goes (`streamReplay`): the config first, then each step's
 * section as soon as the step is processed, then the frame (checks, verdict) once the run ends. A sink
 * that writes steps out lets the replay keep nothing of a step after it (docs/replay.md "Reports").
 */
export interface ReplayReportSink<Result> {
  begin(config: ReportConfig): Promise<void>;
  addStep(step: ReportStep): Promise<void>;
  finish(frame: ReportFrame): Promise<Result>;
}

/** Keeps every step and gives the whole report at the end (tests and tools that want it in memory). */
export class InMemoryReport implements ReplayReportSink<ReplayReport> {
  private readonly steps: ReportStep[] = [];

  async begin(): Promise<void> {}

  async addStep(step: ReportStep): Promise<void> {
    this.steps.push(step);
  }

  async finish(frame: ReportFrame): Promise<ReplayReport> {
    return withSteps(frame, this.steps);
  }
}
