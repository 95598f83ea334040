import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkDataFromOutcomes } from '../../replay/checks/from-step-outcomes.ts';
import { runApplicableChecks } from '../../replay/checks/run-checks.ts';
import { buildReport, type ReportConfig, type ReportFrame } from '../../replay/report/build-report.ts';
import { renderHtml } from '../../replay/report/html.ts';
import { InMemoryReport, type ReplayReportSink } from '../../replay/report/report-sink.ts';
import { type ReplayReport, ReportStepSchema } from '../../replay/report/schema.ts';
import { StreamedReport, type StreamedResult } from '../../replay/report/streamed-report.ts';
import { renderSummary } from '../../replay/report/summary.ts';
import { normalizationFor, type ReplayOptions, streamReplay } from '../../replay/run-replay.ts';
import type { StepOutcome } from '../../replay/step/process-step.ts';

/**
 * `harness replay` writes each step into its reports as it goes and keeps only the checks' evidence:
 * on one seeded run, the streamed reports must be byte for byte what the in-memory path gives (every
 * outcome kept, the checks run over all steps at once, the renderers applied to the whole report), and
 * an interrupted run must leave its partial reports.
 */

const options = (steps: number): ReplayOptions => ({
  // The bundled episodes: compaction, retries and lost completions in a small run.
  episodes: [],
  prompts: 'fixtures/prompts/tb2-89.jsonl',
  rolloutBatchSize: 2,
  nSamplesPerPrompt: 3,
  steps,
  concurrency: 6,
  seed: 5,
  maxSeqLen: 32768,
  maxResponseLen: 8192,
  modelName: 'model',
  trialTimeoutS: 120,
  agentTimeoutS: 120,
  titoModel: 'glm47',
  // Five rollouts per optimizer step of six: the schedule drops one, so steps differ in more than rows.
  train: { global_batch_size: 5, dp_size: 1, allow_partial_train_step: false },
});

/** Feeds one run to both sinks. */
class Tee implements ReplayReportSink<[StreamedResult, ReplayReport]> {
  private readonly a: StreamedReport;
  private readonly b: InMemoryReport;
  constructor(a: StreamedReport, b: InMemoryReport) {
    this.a = a;
    this.b = b;
  }
  async begin(config: ReportConfig) {
    await this.a.begin(config);
    await this.b.begin();
  }
  async addStep(step: ReplayReport['steps'][number]) {
    await this.a.addStep(step);
    await this.b.addStep(step);
  }
  async finish(frame: ReportFrame): Promise<[StreamedResult, ReplayReport]> {
    return [await this.a.finish(frame), await this.b.finish(frame)];
  }
}

let dir: string;
let streamed: StreamedResult;
let whole: ReplayReport;
let stdout: string;
const outcomes: StepOutcome[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'replay-streamed-'));
  let out = '';
  const sink = new StreamedReport({
    jsonFile: join(dir, 'report.json'),
    htmlFile: join(dir, 'report.html'),
    jsonOut: { write: (chunk: string) => (out += chunk) },
  });
  [streamed, whole] = await streamReplay(
    options(3),
    {
      signal: new AbortController().signal,
      progress: { write: () => true },
      onStep: (o) => outcomes.push(o),
    },
    new Tee(sink, new InMemoryReport()),
  );
  stdout = out;
}, 120_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('a streamed replay', () => {
  it('gives the report the in-memory path gives: every outcome kept, checks over all steps at once', () => {
    const normalization = normalizationFor(options(3));
    const all = buildReport(
      outcomes,
      runApplicableChecks(checkDataFromOutcomes(outcomes, normalization)),
      whole.config,
    );
    expect(outcomes.map((o) => o.step)).toEqual([0, 1, 2]);
    expect(JSON.stringify(whole)).toBe(JSON.stringify(all));
    // Not a vacuous comparison: evidence from more than one step, and every check ran.
    const steps = new Set(whole.checks.flatMap((c) => c.evidence.map((e) => e.step)));
    expect(steps.size).toBeGreaterThan(1);
    expect(whole.checks).toHaveLength(11);
  });

  it('writes the JSON file and stdout byte for byte as JSON.stringify of the whole report', async () => {
    const expected = `${JSON.stringify(whole)}\n`;
    expect(await readFile(join(dir, 'report.json'), 'utf8')).toBe(expected);
    expect(stdout).toBe(expected);
  });

  it('writes the HTML page and the summary as the renderers give them for the whole report', async () => {
    expect(await readFile(join(dir, 'report.html'), 'utf8')).toBe(renderHtml(whole));
    expect(streamed.summary).toBe(renderSummary(whole));
    expect(streamed.frame.verdict).toBe(whole.verdict);
  });

  it('removes its partial files once the reports are written', async () => {
    expect((await readdir(dir)).sort()).toEqual(['report.html', 'report.json']);
    expect(streamed.written).toEqual([join(dir, 'report.json'), join(dir, 'report.html')]);
  });
});

describe('an interrupted streamed replay', () => {
  it('leaves the steps it finished in readable partial reports', async () => {
    const where = await mkdtemp(join(tmpdir(), 'replay-partial-'));
    try {
      const controller = new AbortController();
      const sink = new StreamedReport({ jsonFile: join(where, 'r.json'), htmlFile: join(where, 'r.html') });
      const run = streamReplay(
        options(3),
        {
          signal: controller.signal,
          progress: { write: () => true },
          // Interrupt once the first step is in the reports.
          onStep: () => controller.abort(new Error('test interrupt')),
        },
        sink,
      );
      await expect(run).rejects.toMatchObject({ code: 'replay.interrupted' });
      const left = await sink.abandon();
      expect(left).toEqual([join(where, 'r.json.partial.jsonl'), join(where, 'r.html.partial.html')]);
      const lines = (await readFile(left[0]!, 'utf8')).trim().split('\n');
      expect(JSON.parse(lines[0]!)).toMatchObject({
        format: 'harness-replay-partial/1',
        config: { steps: 3 },
      });
      expect(lines.slice(1).map((l) => ReportStepSchema.parse(JSON.parse(l)).step)).toEqual([0]);
      const html = await readFile(left[1]!, 'utf8');
      expect(html).toContain('<h2>Step 0</h2>');
      expect(html).not.toContain('<h2>Step 1</h2>');
      // No final report claims a verdict for a run that did not finish.
      expect((await readdir(where)).sort()).toEqual(['r.html.partial.html', 'r.json.partial.jsonl']);
    } finally {
      await rm(where, { recursive: true, force: true });
    }
  }, 120_000);
});
