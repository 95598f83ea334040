import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import type { FaultKind } from '../../contracts/fault-scenario.ts';
import type { MilesProfile } from '../../contracts/miles-profile.ts';
import { stableHash } from '../../fakes/harbor/episode-catalog.ts';
import type { GeneratorParamsInput } from '../../fakes/harbor/generator/params.ts';
import type { TokenizerName } from '../../fakes/tokenizer/tito.ts';
import { addAccounting, emptyAccounting, type TokenAccounting } from '../accounting/schema.ts';
import type { ReplayReport } from '../report/schema.ts';
import { type ReplayOptions, runReplay } from '../run-replay.ts';
import { type FuzzBatch, fuzzBatchArbitrary } from './batch.ts';
import { droppableKinds } from './droppable-kinds.ts';
import { addCensus, type FaultCensus } from './fault-census.ts';
import { type InjectedFault, mergeFaultParams } from './faults.ts';
import { type MaterializedBatch, materializeBatch } from './materialize.ts';

/**
 * `harness fuzz`: fast-check draws batches of generated episodes, each batch goes through the real
 * stack (Harbor mock → session server → samples → GRPO → checks), and a batch with a failed check
 * (not a finding) is shrunk to a minimal one, written as episode scripts with the replay command that
 * reproduces it.
 */

export interface FuzzShard {
  /** 0-based shard index. */
  readonly index: number;
  readonly count: number;
}

export interface FuzzOptions {
  /** Cases in the whole campaign (all shards together). */
  readonly runs: number;
  readonly seed: number;
  readonly shard: FuzzShard;
  /** Where a failing batch's scripts go. */
  readonly outDir: string;
  /** Task names the groups play (the TB2 list). */
  readonly tasks: readonly string[];
  readonly signal: AbortSignal;
  /** Extra replay options for every case (planted defects in tests). */
  readonly replay?: Pick<ReplayOptions, 'sessionHooks'>;
  /** The tokenizer of the fakes (`--tokenizer`; default toy). */
  readonly tokenizer?: TokenizerName;
  /** Which Miles the fakes answer as (`--miles-profile`); default `DEFAULT_MILES_PROFILE`. */
  readonly milesProfile?: MilesProfile;
  /** Generator parameters over the fuzzer's own (written into the scripts, so the command keeps them). */
  readonly params?: GeneratorParamsInput;
  /**
   * The `--faults` kinds, over `params`: every case injects them all, and a failure's shrinking drops
   * those it does not need (`FuzzFailure.injected` keeps the rest).
   */
  readonly injected?: readonly InjectedFault[];
  readonly onProgress?: (done: number, total: number) => void;
}

interface FuzzFailure {
  /** The first failed check of the shrunk batch. */
  readonly check: string;
  /** Every failed check of the shrunk batch. */
  readonly checks: readonly string[];
  readonly episodes: readonly string[];
  readonly prompts: string;
  readonly command: string;
  readonly batch: FuzzBatch;
  readonly shrinks: number;
  /** The catalogue fault kinds the shrunk batch's episodes carry. */
  readonly faults: FaultCensus;
  /** The `--faults` kinds the shrunk batch still injects (shrinking dropped the others). */
  readonly injected: readonly FaultKind[];
}

export interface FuzzResult {
  readonly runs: number;
  readonly seed: number;
  readonly shard: FuzzShard;
  /** Cases this shard ran (shrinking runs not counted). */
  readonly cases: number;
  readonly failures: FuzzFailure[];
  /** The token accounting summed over every case of the shard. */
  readonly accounting: TokenAccounting;
  /** Rollouts played first by the cases (groups × samples; shrinking not counted). */
  readonly episodes: number;
  /** Catalogue faults the cases' episodes carried, per kind (shrinking not counted). */
  readonly faults: FaultCensus;
  /** Per check, the cases where it found something (Miles' own behaviour: reported, not a failure). */
  readonly findings: Readonly<Record<string, number>>;
}

/** This shard's share of the campaign: runs r with r mod K = I. */
export function shardRuns(runs: number, shard: FuzzShard): number {
  return Math.max(0, Math.ceil((runs - shard.index) / shard.count));
}

/** The fast-check seed of a shard: the campaign seed itself without sharding. */
function shardSeed(seed: number, shard: FuzzShard): number {
  return shard.count === 1 ? seed : stableHash(`fuzz/${seed}/${shard.index}/${shard.count}`) | 0;
}

function failedChecks(report: ReplayReport): string[] {
  return report.checks.filter((c) => c.verdict === 'fail').map((c) => c.name);
}

/** A replay that throws (not a check verdict) counts as a failure of its own kind. */
const REPLAY_ERROR = 'replay_error';

async function playBatch(
  batch: FuzzBatch,
  injected: readonly InjectedFault[],
  dir: string,
  options: FuzzOptions,
): Promise<{ report: ReplayReport | null; failed: string[]; materialized: MaterializedBatch }> {
  const materialized = await materializeBatch(
    batch,
    dir,
    options.tasks,
    mergeFaultParams([options.params ?? {}, ...injected.map((f) => f.params)]),
    options.tokenizer,
    options.milesProfile,
  );
  try {
    const { report } = await runReplay(
      { ...materialized.options, ...options.replay },
      { signal: options.signal, progress: { write: () => true } },
    );
    return { report, failed: failedChecks(report), materialized };
  } catch (error) {
    if (options.signal.aborted) throw error;
    return { report: null, failed: [REPLAY_ERROR], materialized };
  }
}

/** Runs this shard's cases; stops at the first failure, shrinks it and writes it to `outDir`. */
export async function runFuzz(options: FuzzOptions): Promise<FuzzResult> {
  const total = shardRuns(options.runs, options.shard);
  const accounting = emptyAccounting();
  const scratch = await mkdtemp(join(tmpdir(), 'harness-fuzz-'));
  let cases = 0;
  let episodes = 0;
  const faults: FaultCensus = {};
  const findings: Record<string, number> = {};
  let shrinking = false;
  try {
    const kinds = droppableKinds(options.injected ?? []);
    const property = fc.asyncProperty(fuzzBatchArbitrary, kinds, async (batch, injected) => {
      const dir = join(scratch, String(cases) + (shrinking ? '-shrink' : ''));
      try {
        const { report, failed, materialized } = await playBatch(batch, injected, dir, options);
        if (!shrinking) {
          // Cases before the first failure; afterwards fast-check only shrinks.
          cases += 1;
          episodes += batch.groupSeeds.length * batch.samples;
          addCensus(faults, materialized.faults);
          for (const check of report?.checks ?? [])
            if (check.verdict === 'finding') findings[check.name] = (findings[check.name] ?? 0) + 1;
          for (const step of report?.steps ?? []) addAccounting(accounting, step.accounting);
          options.onProgress?.(cases, total);
        }
        if (failed.length > 0) shrinking = true;
        return failed.length === 0;
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
    const details = await fc.check(property, {
      seed: shardSeed(options.seed, options.shard),
      numRuns: total,
    });
    const failures: FuzzFailure[] = [];
    if (details.failed && details.counterexample !== null) {
      const [batch, injected] = details.counterexample;
      const dir = join(options.outDir, `failure-seed${options.seed}-shard${options.shard.index}`);
      const { failed, materialized } = await playBatch(batch, injected, dir, options);
      failures.push({
        check: failed[0] ?? 'unreproduced',
        checks: failed,
        episodes: materialized.episodes,
        prompts: materialized.prompts,
        command: materialized.command,
        batch,
        shrinks: details.numShrinks,
        faults: materialized.faults,
        injected: injected.map((f) => f.kind),
      });
    }
    const { runs, seed, shard } = options;
    return { runs, seed, shard, cases, failures, accounting, episodes, faults, findings };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
