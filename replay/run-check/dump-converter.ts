import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { HarnessError } from '../../common/errors.ts';
import { DUMP_CONVERTER } from '../../miles-bridge/entry-points.ts';
import { type Frame, FrameHeaderSchema, FrameReader, placeBlocks } from './dump-frames.ts';

export interface ConverterOptions {
  readonly python: string;
  /** A Miles checkout on the converter's path (the dumps may pickle Miles' classes). */
  readonly milesRoot?: string;
  /** Extra environment (a test's stand-in torch on PYTHONPATH). */
  readonly env?: Readonly<Record<string, string>>;
}

/**
 * A file's answer as it came off the pipe (JSON header and binary blocks), decoded only when asked: the
 * step read ahead stays compact while the current one is checked.
 */
export interface PendingAnswer {
  decode(): Converted;
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
  private readonly frames: FrameReader;
  private stderr = '';
  private readonly options: ConverterOptions;
  readonly torch: string;

  private constructor(
    child: ChildProcessWithoutNullStreams,
    frames: FrameReader,
    options: ConverterOptions,
    torch: string,
  ) {
    this.child = child;
    this.frames = frames;
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
      env: {
        ...process.env,
        PYTHONDONTWRITEBYTECODE: '1',
        // glibc: blocks over 128 kB (a step's int32/float64 frames) straight from mmap and back to the
        // system when freed; its default raises that threshold as it goes and keeps the freed heap, which
        // put about 60 MB on the converter's peak over a few recipe-scale steps.
        MALLOC_MMAP_THRESHOLD_: '131072',
        ...options.env,
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
    });
    const spawnError = new Promise<Error>((resolve) => child.once('error', resolve));
    const frames = new FrameReader(child.stdout);
    const first = await Promise.race([
      frames.next().then(
        (frame) => ({ frame }),
        () => ({ frame: null }),
      ),
      spawnError.then((error) => ({ error })),
    ]);
    const ready = 'error' in first ? null : readyFrame(first.frame);
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
    return new DumpConverter(child, frames, options, ready);
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
  ): Promise<PendingAnswer> {
    this.child.stdin.write(`${JSON.stringify({ kind, path, omit })}\n`);
    const answer = this.queue.then(() => this.answer(path));
    this.queue = answer.catch(() => undefined);
    return answer;
  }

  private async answer(path: string): Promise<PendingAnswer> {
    let frame: Frame | null;
    try {
      frame = await this.frames.next();
    } catch (error) {
      throw this.failed(`sent a broken answer for ${path}: ${(error as Error).message}`);
    }
    if (frame === null) throw this.failed(`stopped while reading ${path}`);
    const got = frame;
    return { decode: () => this.decode(got, path) };
  }

  private decode(frame: Frame, path: string): Converted {
    const answer = frame.header as {
      ok?: unknown;
      document?: unknown;
      non_finite?: unknown;
      error?: unknown;
    };
    if (answer.ok !== true)
      return { ok: false, error: typeof answer.error === 'string' ? answer.error : 'unknown error' };
    let document: unknown;
    try {
      const { blobs } = FrameHeaderSchema.parse(frame.header);
      document = placeBlocks(answer.document, blobs, frame.body);
    } catch (error) {
      throw this.failed(`sent a broken answer for ${path}: ${(error as Error).message}`);
    }
    return { ok: true, document, nonFinite: typeof answer.non_finite === 'number' ? answer.non_finite : 0 };
  }

  private failed(what: string): HarnessError {
    return new HarnessError(
      'dumps.converter_failed',
      `the dump converter (${this.options.python}) ${what}: ${this.stderr.trim().split('\n').at(-1) ?? ''}`,
      {
        details: {
          python: this.options.python,
          stderr: this.stderr,
          exitCode: this.child.exitCode ?? undefined,
        },
      },
    );
  }

  async close(): Promise<void> {
    // Answers nobody will read (an interrupted run read ahead) must not keep the converter blocked on a full pipe.
    this.child.stdout.destroy();
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()));
    this.child.stdin.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

function readyFrame(frame: Frame | null): string | null {
  return frame?.header.ready === true ? String(frame.header.torch ?? '') : null;
}
