import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FaultScenario, HarnessRowVerdict, MilesRowVerdict } from '../../contracts/fault-scenario.ts';
import type { SessionTrace } from '../../contracts/trace.ts';
import { startPolicyServer } from '../../fakes/policy/server.ts';
import { startSessionServer } from '../../fakes/session/server.ts';
import { familyModel, type TokenizerName } from '../../fakes/tokenizer/tito.ts';
import { startMilesServer } from '../conformance/miles-server.ts';
import { CATALOGUE_MILES_PROFILE } from './catalogue.ts';
import { harnessVerdict, type PlayedRollout } from './harness-side.ts';
import { milesVerdict } from './miles-side.ts';
import { playFaultRollout } from './play-rollout.ts';

/**
 * `harness catalogue`: every field-failure row played through the fakes (one scripted policy and one fake
 * session server per tokenizer), every harness check's verdict; with a Miles checkout, the same rollouts
 * through Miles' own session server and reward code, under the profile the fakes stand in for: the one
 * the rows were recorded under (CATALOGUE_MILES_PROFILE).
 */

export interface CatalogueOptions {
  /** With a checkout: Miles' verdicts too. */
  readonly miles?: { readonly milesRoot: string; readonly python: string };
  readonly signal?: AbortSignal;
  readonly onRow?: (row: RowResult) => void;
}

export interface RowResult {
  readonly id: string;
  readonly harness: HarnessRowVerdict;
  /** The Miles profile the fakes ran under (its verdicts are recorded under this name). */
  readonly profile: string;
  readonly miles: MilesRowVerdict | null;
}

const traceId = (scenario: FaultScenario, k: number) => `${scenario.id}.r${k}`;

function scripts(scenarios: readonly FaultScenario[]): Record<string, SessionTrace> {
  return Object.fromEntries(
    scenarios.flatMap((s) =>
      s.rollouts.map((r, k) => [
        traceId(s, k),
        { format: 'session-trace/1', turns: r.turns } as SessionTrace,
      ]),
    ),
  );
}

async function playAll(
  scenario: FaultScenario,
  serverUrl: string,
  logFor: (sessionId: string) => PlayedRollout['requests'],
): Promise<PlayedRollout[]> {
  const played: PlayedRollout[] = [];
  for (const [k, rollout] of scenario.rollouts.entries()) {
    const record = await playFaultRollout(rollout, serverUrl, traceId(scenario, k));
    played.push({ rollout, record, requests: logFor(record.sessionId) });
  }
  return played;
}

/** Trace files for the toy Miles launcher's vocabulary (it must know the words up front). */
async function vocabularyFiles(dir: string, traces: Record<string, SessionTrace>): Promise<string[]> {
  const files: string[] = [];
  for (const [id, trace] of Object.entries(traces)) {
    const file = join(dir, `${id}.json`);
    await writeFile(file, JSON.stringify(trace));
    files.push(file);
  }
  return files;
}

async function runOnTokenizer(
  tokenizer: TokenizerName,
  scenarios: readonly FaultScenario[],
  options: CatalogueOptions,
): Promise<RowResult[]> {
  const titoModel = familyModel(tokenizer, 'default');
  const traces = scripts(scenarios);
  const policy = await startPolicyServer({ mode: 'script', tokenizer: titoModel, scripts: traces });
  const closers: Array<() => Promise<void>> = [() => policy.close()];
  const dir = await mkdtemp(join(tmpdir(), 'catalogue-'));
  closers.push(() => rm(dir, { recursive: true, force: true }));
  try {
    const fake = await startSessionServer({
      backendUrl: policy.url,
      titoModel,
      milesProfile: CATALOGUE_MILES_PROFILE,
    });
    closers.push(() => fake.close());
    const miles =
      options.miles === undefined
        ? null
        : await startMilesServer({
            ...options.miles,
            backendUrl: policy.url,
            vocabularyTraces: tokenizer === 'toy' ? await vocabularyFiles(dir, traces) : [],
            tokenizer,
          });
    if (miles !== null) closers.push(() => miles.close());
    const logFor = (sessionId: string) => policy.log.byRoutingKey(sessionId);
    const results: RowResult[] = [];
    for (const scenario of scenarios) {
      options.signal?.throwIfAborted();
      const played = await playAll(scenario, fake.url, logFor);
      const milesPlayed = miles === null ? null : await playAll(scenario, miles.url, logFor);
      const result: RowResult = {
        id: scenario.id,
        harness: harnessVerdict(scenario, played),
        profile: CATALOGUE_MILES_PROFILE.name,
        miles:
          milesPlayed === null || options.miles === undefined
            ? null
            : await milesVerdict(scenario, milesPlayed, played, options.miles),
      };
      options.onRow?.(result);
      results.push(result);
    }
    return results;
  } finally {
    for (const close of closers.reverse()) await close().catch(() => undefined);
  }
}

/** Every row's verdicts, in the order given. */
export async function runCatalogue(
  scenarios: readonly FaultScenario[],
  options: CatalogueOptions = {},
): Promise<RowResult[]> {
  const results = new Map<string, RowResult>();
  for (const tokenizer of ['toy', 'qwen3'] as const) {
    const rows = scenarios.filter((s) => s.tokenizer === tokenizer);
    if (rows.length === 0) continue;
    for (const r of await runOnTokenizer(tokenizer, rows, options)) results.set(r.id, r);
  }
  return scenarios.map((s) => results.get(s.id)!);
}
