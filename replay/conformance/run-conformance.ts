import { readdir, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pythonJsonLoads } from '../../common/python-json/loads.ts';
import { readSessionTrace, type SessionTrace } from '../../contracts/trace.ts';
import { startPolicyServer } from '../../fakes/policy/server.ts';
import { startSessionServer } from '../../fakes/session/server.ts';
import { familyModel, type TokenizerName } from '../../fakes/tokenizer/tito.ts';
import { traceIdForPath } from '../trace/replay.ts';
import { BUNDLED_VECTORS_DIR } from './bundled-vectors.ts';
import { compareRecords, type Difference } from './compare.ts';
import { type RawTrace, recordExchanges } from './exchanges.ts';
import { profileForCheckout, readMilesCapabilities } from './miles-capabilities.ts';
import { checkMilesRoot, startMilesServer } from './miles-server.ts';
import { RAW_SCRIPT, RAW_SCRIPT_ID, recordRawRequests } from './raw-requests.ts';

/**
 * `harness conformance`: the same traces replayed against Miles' real session server (on CPU) and the
 * fake, both in front of one scripted policy, every answer compared (see compare.ts).
 */

export interface ConformanceOptions {
  readonly milesRoot: string;
  readonly python: string;
  /** Trace files; empty: the bundled conformance traces. */
  readonly traces: readonly string[];
  readonly signal?: AbortSignal;
  /** Both servers' tokenizer (default toy): qwen3 runs the fake's qwen3 family and Miles' Qwen3TITOTokenizer. */
  readonly tokenizer?: TokenizerName;
  /** `--miles-profile`: refused when it contradicts the checkout's capabilities (miles-capabilities.ts). */
  readonly milesProfile?: string;
  /** Progress (one line per trace as it finishes). */
  readonly onTrace?: (result: TraceConformance) => void;
}

interface TraceConformance {
  readonly trace: string;
  readonly exchanges: number;
  readonly differences: readonly Difference[];
}

export interface ConformanceReport {
  readonly milesRoot: string;
  /**
   * The Miles profile both servers ran under (the fake's switches, the checkout's capabilities), with the
   * commits its facts come from.
   */
  readonly profile: { readonly name: string; readonly commits: readonly string[] };
  /** What the launcher replaced, as it printed it. */
  readonly replacements: readonly string[];
  /** What the launcher adapted to in this checkout (`adapted <what>: <why>`), as it printed it. */
  readonly adaptations: readonly string[];
  readonly traces: readonly TraceConformance[];
  /** Traces that agree. */
  readonly agree: number;
  /** The requests outside the traces (raw-requests.ts), compared the same way. */
  readonly rawRequests: TraceConformance;
}

export async function bundledTraceFiles(): Promise<string[]> {
  const names = await readdir(BUNDLED_VECTORS_DIR);
  return names
    .filter((n) => /^trace-\d+\.json$/.test(n))
    .sort()
    .map((n) => join(BUNDLED_VECTORS_DIR, n));
}

export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  checkMilesRoot(options.milesRoot);
  const capabilities = await readMilesCapabilities(options.milesRoot, options.python);
  const profile = profileForCheckout(capabilities, options.milesProfile);
  const files = options.traces.length > 0 ? options.traces.map((f) => resolve(f)) : await bundledTraceFiles();
  const traces: Array<{ file: string; id: string; trace: SessionTrace; raw: RawTrace }> = [];
  for (const file of files) {
    const trace = await readSessionTrace(file);
    // Re-read with floats kept, so `"reward": 1.0` reaches both servers as `1.0`.
    const raw = pythonJsonLoads(await readFile(file, 'utf8'), { keepFloats: true }) as RawTrace;
    traces.push({ file, id: traceIdForPath(file), trace, raw });
  }
  const ids = new Set(traces.map((t) => t.id));
  if (ids.size !== traces.length || ids.has(RAW_SCRIPT_ID)) {
    throw new Error(`conformance: trace file base names must be distinct and not ${RAW_SCRIPT_ID}`);
  }

  const tokenizer = options.tokenizer ?? 'toy';
  const titoModel = familyModel(tokenizer, 'default');
  const policy = await startPolicyServer({
    mode: 'script',
    tokenizer: titoModel,
    scripts: { ...Object.fromEntries(traces.map((t) => [t.id, t.trace])), [RAW_SCRIPT_ID]: RAW_SCRIPT },
  });
  const closers: Array<() => Promise<void>> = [() => policy.close()];
  try {
    const fake = await startSessionServer({
      backendUrl: policy.url,
      titoModel,
      // The fake answers as the Miles the checkout is (or the name given, once checked against it).
      milesProfile: profile,
    });
    closers.push(() => fake.close());
    const miles = await startMilesServer({
      milesRoot: options.milesRoot,
      python: options.python,
      backendUrl: policy.url,
      vocabularyTraces: files,
      tokenizer,
    });
    closers.push(() => miles.close());
    const results: TraceConformance[] = [];
    for (const t of traces) {
      options.signal?.throwIfAborted();
      const fakeRecord = await recordExchanges(t.raw, fake.url, t.id);
      const milesRecord = await recordExchanges(t.raw, miles.url, t.id);
      const result = {
        trace: t.file,
        exchanges: milesRecord.exchanges.length,
        differences: compareRecords(fakeRecord, milesRecord),
      };
      options.onTrace?.(result);
      results.push(result);
    }
    const fakeRaw = await recordRawRequests(fake.url, policy.events);
    const milesRaw = await recordRawRequests(miles.url, policy.events);
    return {
      milesRoot: options.milesRoot,
      profile: { name: profile.name, commits: profile.commits },
      replacements: miles.replacements,
      adaptations: miles.adaptations,
      traces: results,
      agree: results.filter((r) => r.differences.length === 0).length,
      rawRequests: {
        trace: RAW_SCRIPT_ID,
        exchanges: milesRaw.exchanges.length,
        differences: compareRecords(fakeRaw, milesRaw),
      },
    };
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  }
}
