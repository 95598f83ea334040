import { writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { parseFlags, switchFlag, valueFlag } from '../../common/cli-flags.ts';
import { HarnessError } from '../../common/errors.ts';
import { EXIT } from '../../common/exit-codes.ts';
import { checkOutputFile } from '../../common/output-path.ts';
import { plural } from '../../common/plural.ts';
import { wholeNumber } from '../../common/whole-number.ts';
import { FaultKindSchema } from '../../contracts/fault-scenario.ts';
import { type MilesProfile, milesProfileLine } from '../../contracts/miles-profile.ts';
import { milesProfileFlag } from '../../contracts/miles-profile-flag.ts';
import { readTb2Tasks } from '../../fakes/harbor/episode-catalog.ts';
import { identityHolds, lostTotal } from '../../replay/accounting/schema.ts';
import type { FaultCensus } from '../../replay/fuzz/fault-census.ts';
import { DEFAULT_FAULT_RATE, FUZZ_FAULT_KINDS, injectedFaults } from '../../replay/fuzz/faults.ts';
import { type FuzzResult, runFuzz } from '../../replay/fuzz/run-fuzz.ts';
import type { CliCommand, CliIo } from '../io.ts';
import { tokenizerFlag } from './serve/options.ts';

const SPEC = {
  command: 'fuzz',
  about: `Whole-pipeline fuzzing: fast-check draws small batches of generated Terminus-2 episodes (1-3 groups
of 1-4 rollouts, contexts of 4k-12k tokens with the recipe's ratios) and plays each through the real
stack (Harbor mock -> session server -> samples -> GRPO -> the seven checks). The first batch with a
failed check (findings do not count) is shrunk to a minimal one, written as episode scripts under
--out, and the harness replay command that reproduces it is printed.`,
  flags: {
    runs: valueFlag(
      'N',
      wholeNumber('--runs', 1, 1_000_000).default(100),
      'cases in the whole campaign [default: 100]',
    ),
    seed: valueFlag('S', wholeNumber('--seed', 0, 2 ** 31 - 1).default(1), 'the campaign seed [default: 1]'),
    shard: valueFlag(
      'I/K',
      z
        .string()
        .regex(/^\d+\/\d+$/, '--shard must be I/K, e.g. 2/4')
        .transform((s) => s.split('/').map(Number) as [number, number])
        .refine(([i, k]) => k >= 1 && i >= 1 && i <= k, '--shard I/K needs 1 ≤ I ≤ K')
        .default([1, 1]),
      "run shard I of K (1-based): this machine's share of the campaign [default: 1/1]",
    ),
    tokenizer: tokenizerFlag("toy [default] or qwen3 (Qwen3's real tokenizer and the qwen3 TITO family)"),
    'miles-profile': milesProfileFlag,
    faults: valueFlag(
      'KINDS',
      z.string().min(1).optional(),
      `KIND[,KIND...][:RATE]: field-failure kinds mixed into the generated episodes at RATE\n(default ${DEFAULT_FAULT_RATE}): ${FUZZ_FAULT_KINDS.join(', ')}\n(docs/field-failures.md)`,
    ),
    json: switchFlag(
      `print {"runs", "seed", "miles_profile", "failures": [{"check", "episodes", "command"}], ...}\non stdout (people's text then goes to stderr)`,
    ),
    'json-file': valueFlag(
      'F',
      z.string().min(1).optional(),
      'write the same JSON document to F (checked before the campaign starts)',
    ),
    out: valueFlag(
      'DIR',
      z.string().min(1).default('fuzz-failures'),
      "where a failing batch's scripts go [default: fuzz-failures]",
    ),
  },
  footer: `Exit status: 0 no check failed, 1 a check failed (shrunk and written), 2 usage error, 130 interrupted.
Docs: docs/replay.md`,
};

/** The JSON document: the issue's three keys first, then the shard and the campaign's accounting. */
function jsonOf(result: FuzzResult, profile: MilesProfile) {
  return {
    runs: result.runs,
    seed: result.seed,
    miles_profile: { name: profile.name, commits: profile.commits },
    failures: result.failures.map((f) => ({
      check: f.check,
      checks: f.checks,
      episodes: f.episodes,
      prompts: f.prompts,
      command: f.command,
      batch: f.batch,
      shrinks: f.shrinks,
      faults: f.faults,
      injected: f.injected,
    })),
    shard: `${result.shard.index + 1}/${result.shard.count}`,
    cases: result.cases,
    episodes: result.episodes,
    faults: result.faults,
    findings: result.findings,
    accounting: result.accounting,
    accounting_identity_holds: identityHolds(result.accounting),
  };
}

/** `kind ×N, …` in the catalogue's order, or `none`. */
function censusText(census: FaultCensus): string {
  const parts = FaultKindSchema.options.flatMap((k) => (census[k] ? [`${k} ×${census[k]}`] : []));
  return parts.length === 0 ? 'none' : parts.join(', ');
}

/** `check ×N, …`, or `none`. */
function findingsText(findings: Readonly<Record<string, number>>): string {
  const parts = Object.entries(findings).map(([check, n]) => `${check} ×${n}`);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseFlags(argv, SPEC, io);
  if (parsed === undefined) return EXIT.ok;
  const flags = parsed.values;
  const jsonFile =
    flags.json_file === undefined ? undefined : await checkOutputFile(io.cwd, flags.json_file, '--json-file');
  // --json: stdout carries only the JSON document; people's text goes to stderr (docs/cli.md).
  const people = flags.json ? io.stderr : io.stdout;
  const injected = flags.faults === undefined ? [] : injectedFaults(flags.faults, flags.tokenizer);
  const [index, count] = flags.shard;
  const started = performance.now();
  const result = await runFuzz({
    runs: flags.runs,
    seed: flags.seed,
    shard: { index: index - 1, count },
    outDir: resolve(io.cwd, flags.out),
    tasks: await readTb2Tasks(),
    tokenizer: flags.tokenizer,
    milesProfile: flags.miles_profile,
    injected,
    signal: io.signal,
    onProgress: (done, total) => {
      if (done === total || done % Math.max(1, Math.ceil(total / 10)) === 0)
        io.stderr.write(`fuzz: ${done}/${total} cases\n`);
    },
  });
  if (io.signal.aborted) {
    io.stderr.write('harness fuzz: interrupted\n');
    return EXIT.interrupted;
  }
  if (jsonFile !== undefined) {
    try {
      await writeFile(jsonFile, `${JSON.stringify(jsonOf(result, flags.miles_profile))}\n`);
    } catch (error) {
      throw new HarnessError('config.output_unwritable', `--json-file ${jsonFile}: cannot write it`, {
        details: { option: '--json-file', path: jsonFile },
        cause: error,
      });
    }
    io.stderr.write(`wrote ${jsonFile}\n`);
  }
  const a = result.accounting;
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  people.write(
    `fuzz: ${plural(result.cases, 'case')} (shard ${index}/${count} of ${result.runs}, seed ${result.seed}) in ${seconds} s, ${milesProfileLine(flags.miles_profile)}\n` +
      `episodes: ${result.episodes}; faults mixed: ${censusText(result.faults)}\n` +
      `findings (cases): ${findingsText(result.findings)}\n` +
      `tokens: ${a.completion_tokens} completion = ${a.trained_tokens} trained + ${a.masked_shared_tokens} masked shared + ${lostTotal(a)} lost (${identityHolds(a) ? 'identity holds' : 'IDENTITY BROKEN'})\n`,
  );
  for (const f of result.failures)
    people.write(
      `FAIL ${f.checks.join(', ')}: shrunk in ${plural(f.shrinks, 'step')} to ${plural(f.batch.groupSeeds.length, 'group')} × ${plural(f.batch.samples, 'rollout')}${injected.length === 0 ? '' : `, --faults kinds still injected: ${f.injected.join(', ') || 'none'}`}; faults carried: ${censusText(f.faults)}; scripts in ${dirname(f.prompts)}\nreproduce: ${f.command}\n`,
    );
  if (flags.json) io.stdout.write(`${JSON.stringify(jsonOf(result, flags.miles_profile))}\n`);
  return result.failures.length > 0 || !identityHolds(a) ? 1 : 0;
}

export const command: CliCommand = {
  summary: 'fuzz the whole pipeline with generated episodes; shrink and write failures',
  run,
};
