import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { createInterface, type Interface } from 'node:readline';
import { HarnessError } from '../../common/errors.ts';
import { parseJson } from '../../common/python-json/loads.ts';
import { DUMP_CONVERTER } from '../../miles-bridge/entry-points.ts';

export interface ConverterOptions {
  readonly python: string;
  /** A Miles checkout on the converter's path (the dumps may pickle Miles' classes). */
  readonly milesRoot?: string;
  /** Extra environment (a test's stand-in torch on PYTHONPATH). */
  readonly env?: Readonly<Record<string, string>>;
}

/** One file's answer: the converted document, or why it could not be read. */
export type Converted =
  | { readonly ok: true; readonly document: unknown; readonly nonFinite: number }
  | { readonly ok: false; readonly error: string };

/**
 * `miles-bridge/convert_dumps.py --serve`: one Python process (one torch import, seconds on a small
 * machine) for a whole run, asked for one `.pt` file at a time, so a long run is read step by step and a
 * bad file is one named error, not the end of the run (docs/check-run.md, "Reading the dumps").
 */
export class DumpConverter {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly lines: AsyncIterator<string>;
  private readonly reader: Interface;
  private stderr = '';
  private readonly options: ConverterOptions;
  readonly torch: string;

  private constructor(
    child: ChildProcessWithoutNullStreams,
    reader: Interface,
    lines: AsyncIterator<string>,
    options: ConverterOptions,
    torch: string,
  ) {
    this.child = child;
    this.reader = reader;
    this.lines = lines;
    this.options = options;
    this.torch = torch;
    child.stderr.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-4000);
    });
  }

  /** Starts the converter and waits for its ready line; no torch (or no Python) is a precondition (exit 3). */
  static async start(options: ConverterOptions): Promise<DumpConverter> {
    const args = [
      DUMP_CONVERTER,
      '--serve',
      ...(options.milesRoot ? ['--miles-root', options.milesRoot] : []),
    ];
    const child = spawn(options.python, args, {
      env: { ...process.env, PYTHONDONTWRITEBYTECODE: '1', ...options.env },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
    const reader = createInterface({ input: child.stdout, crlfDelay: Number.POSITIVE_INFINITY });
    const lines = reader[Symbol.asyncIterator]();
    const first = await Promise.race([lines.next(), spawnError.then((error) => ({ error }))]);
    const ready = 'error' in first ? null : first.done ? null : readyLine(first.value);
    if (ready === null) {
      child.kill();
      const reason =
        'error' in first
          ? `${options.python}: ${first.error.message}`
          : stderr.trim().split('\n').at(-1) ||
            `${options.python} ${DUMP_CONVERTER} --serve gave no ready line`;
      throw new HarnessError('precondition.dump_converter', `reading .pt dumps needs torch: ${reason}`, {
        details: { python: options.python, reason },
      });
    }
    return new DumpConverter(child, reader, lines, options, ready);
  }

  /** Answers arrive in request order: each `convert` waits for the one before it to be read. */
  private queue: Promise<unknown> = Promise.resolve();

  /**
   * Converts one file, leaving out `omit` (sample keys or train columns nothing here reads). The request
   * is sent at once, so the converter works on the next files while the caller checks a step; a file
   * torch cannot read is `{ok: false}`; a converter that died is an error.
   */
  convert(
    kind: 'rollout_data' | 'train_data',
    path: string,
    omit: readonly string[] = [],
  ): Promise<Converted> {
    this.child.stdin.write(`${JSON.stringify({ kind, path, omit })}\n`);
    const answer = this.queue.then(() => this.answer(path));
    this.queue = answer.catch(() => undefined);
    return answer;
  }

  private async answer(path: string): Promise<Converted> {
    const next = await this.lines.next();
    if (next.done)
      throw new HarnessError(
        'dumps.converter_failed',
        `the dump converter (${this.options.python}) stopped while reading ${path}: ${this.stderr.trim().split('\n').at(-1) ?? ''}`,
        {
          details: {
            python: this.options.python,
            stderr: this.stderr,
            exitCode: this.child.exitCode ?? undefined,
          },
        },
      );
    const answer = parseJson(next.value) as {
      ok: boolean;
      document?: unknown;
      non_finite?: number;
      error?: string;
    };
    return answer.ok
      ? { ok: true, document: answer.document, nonFinite: answer.non_finite ?? 0 }
      : { ok: false, error: answer.error ?? 'unknown error' };
  }

  async close(): Promise<void> {
    this.reader.close();
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

function readyLine(line: string): string | null {
  try {
    const value = parseJson(line) as { ready?: boolean; torch?: string };
    return value.ready === true ? String(value.torch ?? '') : null;
  } catch {
    return null;
  }
}
