import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FaultScenario, HarnessRowVerdict, MilesRowVerdict } from '../../contracts/fault-scenario.ts';
import { MILES_PROFILES, type MilesProfile } from '../../contracts/miles-profile.ts';
import type { SessionTrace } from '../../contracts/trace.ts';
import { startPolicyServer } from '../../fakes/policy/server.ts';
import { startSessionServer } from '../../fakes/session/server.ts';
import { familyModel, type TokenizerName } from '../../fakes/tokenizer/tito.ts';
import { profileForCheckout, readMilesCapabilities } from '../conformance/miles-capabilities.ts';
import { checkMilesRoot, startMilesServer } from '../conformance/miles-server.ts';
import { harnessVerdict, type PlayedRollout } from './harness-side.ts';
import { milesVerdict } from './miles-side.ts';
import { playFaultRollout } from './play-rollout.ts';

/**
 * `harness catalogue`: every field-failure row played through the fakes (one scripted policy and one fake
 * session server per tokenizer and Miles profile), every harness check's verdict, under each profile asked
 * for; with a Miles checkout, the same rollouts through Miles' own session server and reward code, under
 * the profile the checkout's capabilities identify (the fakes answer as that profile).
 */

export interface CatalogueOptions {
  /**
   * The Miles profile to run under (`--miles-profile`). Without a checkout, omitted means every profile; with
   * one, the checkout's profile is the one run and a contradicting name is refused.
   */
  readonly milesProfile?: MilesProfile;
  /** With a checkout: Miles' verdicts too. */
  readonly miles?: { readonly milesRoot: string; readonly python: string };
  readonly signal?: AbortSignal;
  readonly onRow?: (row: RowResult) => void;
}

export interface RowResult {
  readonly id: string;
  /** The Miles profile the fakes (and Miles, with a checkout) ran under; verdicts are recorded under it. */
  readonly profile: string;
  readonly harness: HarnessRowVerdict;
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
  profile: MilesProfile,
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
    const fake = await startSessionServer({ backendUrl: policy.url, titoModel, milesProfile: profile });
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
        profile: profile.name,
        harness: harnessVerdict(scenario, played, profile),
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

/** The profiles a run plays: the checkout's (an explicit name must agree), else the one named, else every one. */
export async function catalogueProfiles(options: CatalogueOptions): Promise<MilesProfile[]> {
  if (options.miles !== undefined) {
    checkMilesRoot(options.miles.milesRoot);
    const capabilities = await readMilesCapabilities(options.miles.milesRoot, options.miles.python);
    return [profileForCheckout(capabilities, options.milesProfile?.name)];
  }
  return options.milesProfile === undefined ? [...MILES_PROFILES] : [options.milesProfile];
}

/** Every row's verdicts under each profile: profile by profile, rows in the order given. */
export async function runCatalogue(
  scenarios: readonly FaultScenario[],
  options: CatalogueOptions = {},
): Promise<RowResult[]> {
  const all: RowResult[] = [];
  for (const profile of await catalogueProfiles(options)) {
    const results = new Map<string, RowResult>();
    for (const tokenizer of ['toy', 'qwen3'] as const) {
      const rows = scenarios.filter((s) => s.tokenizer === tokenizer);
      if (rows.length === 0) continue;
      for (const r of await runOnTokenizer(tokenizer, profile, rows, options)) results.set(r.id, r);
    }
    for (const s of scenarios) all.push(results.get(s.id)!);
  }
  return all;
}
