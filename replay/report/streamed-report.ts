import { createReadStream } from 'node:fs';
import { type FileHandle, mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { ReportConfig, ReportFrame } from './build-report.ts';
import { HTML_AFTER, htmlBefore, htmlPartialHead, htmlStep } from './html.ts';
import type { ReplayReportSink } from './report-sink.ts';
import type { ReportStep } from './schema.ts';
import { summaryHead, summaryStep, summaryTailLines } from './summary.ts';

/** Where `harness replay` puts its report. */
export interface StreamedOutputs {
  /** `--json-file`: the whole JSON report. */
  readonly jsonFile?: string;
  /** `--report`: the HTML page. */
  readonly htmlFile?: string;
  /** `--json`: the whole JSON report written here at the end (stdout). */
  readonly jsonOut?: { write(chunk: string): unknown };
}

export interface StreamedResult {
  readonly frame: ReportFrame;
  /** The terminal summary, as `renderSummary` gives it for the whole report. */
  readonly summary: string;
  /** The report files written. */
  readonly written: readonly string[];
}

/** A file being appended to, and how many bytes of it precede the first step. */
interface Spool {
  readonly path: string;
  readonly handle: FileHandle;
  readonly headBytes: number;
  steps: number;
}

async function openSpool(path: string, head: string): Promise<Spool> {
  const handle = await open(path, 'w');
  await handle.write(head);
  return { path, handle, headBytes: Buffer.byteLength(head), steps: 0 };
}

/** Writes to a file handle and to an optional second writer. */
type Write = (text: string) => Promise<void>;

/**
 * The report of `harness replay`, written as the run goes (docs/replay.md "Reports"). While it runs,
 * each step is appended to a partial file beside each output: `FILE.partial.jsonl` (a header line,
 * then one step of the JSON report per line) and `FILE.partial.html` (a page of the steps so far);
 * `--json` alone spools to a temporary folder. Only the summary's per-step text is kept in memory. At
 * the end the outputs are written from the partial files, byte for byte what the in-memory renderers
 * (`JSON.stringify`, `renderHtml`, `renderSummary`) give for the whole report, and the partial files
 * are removed. A run that fails or is interrupted leaves them (`partialPaths`).
 */
export class StreamedReport implements ReplayReportSink<StreamedResult> {
  private readonly outputs: StreamedOutputs;
  private json: Spool | null = null;
  private html: Spool | null = null;
  private tempDir: string | null = null;
  private readonly summarySteps: string[] = [];

  constructor(outputs: StreamedOutputs) {
    this.outputs = outputs;
  }

  async begin(config: ReportConfig): Promise<void> {
    const { jsonFile, htmlFile, jsonOut } = this.outputs;
    if (jsonFile !== undefined || jsonOut !== undefined) {
      let base = jsonFile;
      if (base === undefined) {
        this.tempDir = await mkdtemp(join(tmpdir(), 'harness-replay-'));
        base = join(this.tempDir, 'report.json');
      }
      const header = JSON.stringify({ format: 'harness-replay-partial/1', config });
      this.json = await openSpool(`${base}.partial.jsonl`, `${header}\n`);
    }
    if (htmlFile !== undefined)
      this.html = await openSpool(`${htmlFile}.partial.html`, htmlPartialHead(config));
  }

  async addStep(step: ReportStep): Promise<void> {
    if (this.json) {
      await this.json.handle.write(`${JSON.stringify(step)}\n`);
      this.json.steps += 1;
    }
    if (this.html) {
      await this.html.handle.write(this.html.steps === 0 ? htmlStep(step) : `\n${htmlStep(step)}`);
      this.html.steps += 1;
    }
    this.summarySteps.push(summaryStep(step));
  }

  async finish(frame: ReportFrame): Promise<StreamedResult> {
    const written: string[] = [];
    if (this.json) {
      const spool = this.json;
      await spool.handle.close();
      const { jsonFile, jsonOut } = this.outputs;
      const target = jsonFile === undefined ? null : await open(jsonFile, 'w');
      const write: Write = async (text) => {
        if (target) await target.write(text);
        jsonOut?.write(text);
      };
      try {
        await copyJson(spool, frame, write);
      } finally {
        await target?.close();
      }
      await rm(spool.path, { force: true });
      if (jsonFile !== undefined) written.push(jsonFile);
      this.json = null;
    }
    if (this.html && this.outputs.htmlFile !== undefined) {
      const spool = this.html;
      await spool.handle.close();
      const target = await open(this.outputs.htmlFile, 'w');
      try {
        await target.write(htmlBefore(frame));
        for await (const chunk of createReadStream(spool.path, { start: spool.headBytes }))
          await target.write(chunk as Buffer);
        await target.write(HTML_AFTER);
      } finally {
        await target.close();
      }
      await rm(spool.path, { force: true });
      written.push(this.outputs.htmlFile);
      this.html = null;
    }
    if (this.tempDir) await rm(this.tempDir, { recursive: true, force: true });
    const summary = [summaryHead(frame.config), ...this.summarySteps, ...summaryTailLines(frame)].join('\n');
    return { frame, summary, written };
  }

  /** Closes the partial files of a run that did not finish and says where they are. */
  async abandon(): Promise<string[]> {
    const left: string[] = [];
    for (const spool of [this.json, this.html])
      if (spool) {
        await spool.handle.close().catch(() => undefined);
        left.push(spool.path);
      }
    this.json = null;
    this.html = null;
    return left;
  }
}

/**
 * The JSON report from its frame and the spooled steps, exactly as `JSON.stringify` writes the whole
 * report: the frame's keys before `steps`, the steps joined by commas, the frame's keys after.
 */
async function copyJson(spool: Spool, frame: ReportFrame, write: Write): Promise<void> {
  const head = JSON.stringify({
    format: frame.format,
    config: frame.config,
    verdict: frame.verdict,
    checks_verdict: frame.checks_verdict,
    steps: [],
  });
  const tail = JSON.stringify({ checks: frame.checks, skipped_checks: frame.skipped_checks });
  // `…"steps":[]}` without its closing `]}`; then `],` and the tail without its opening `{`.
  await write(head.slice(0, -2));
  const lines = createInterface({
    input: createReadStream(spool.path, { start: spool.headBytes }),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  let first = true;
  for await (const line of lines) {
    if (line === '') continue;
    await write(first ? line : `,${line}`);
    first = false;
  }
  await write(`],${tail.slice(1)}\n`);
}
