import { resolve } from 'node:path';
import { z } from 'zod';
import { parseFlags, switchFlag, valueFlag } from '../../common/cli-flags.ts';
import { HarnessError } from '../../common/errors.ts';
import { EXIT } from '../../common/exit-codes.ts';
import { checkOutputFile } from '../../common/output-path.ts';
import { wholeNumber } from '../../common/whole-number.ts';
import { DEFAULT_PYTHON } from '../../replay/conformance/miles-server.ts';
import { StreamedReport } from '../../replay/report/streamed-report.ts';
import { renderCheckRunText } from '../../replay/run-check/render-text.ts';
import { checkRunDumps, type ShapeFlags } from '../../replay/run-check/run-check.ts';
import type { CliCommand, CliIo } from '../io.ts';

const count = (flag: string, help: string) => valueFlag('N', wholeNumber(flag, 1, 65_536).optional(), help);

const SPEC = {
  command: 'check-run',
  operands: 'DIR',
  about: `Checks a recipe run's --dump-details folder (rollout_data/<step>.pt, train_data/<step>_<rank>.pt,
trajectory/<step>.jsonl) one step at a time with every check of harness replay: the invariant checks and the
token accounting over the dumped samples, GRPO recomputed from the raw rewards against the advantages the
trainer used (the train rows), Miles' logged metrics recomputed against the log's values (--log), and the
branches no sample trains, with the conversation from the trajectory rows. The .pt files are read by one
Python process with torch (miles-bridge/convert_dumps.py --serve).`,
  flags: {
    log: valueFlag('FILE', z.string().min(1).optional(), "the launcher's log (Miles' 'perf N: {...}' lines)"),
    python: valueFlag(
      'BIN',
      z.string().min(1).default(DEFAULT_PYTHON),
      `a Python with torch (default: ${DEFAULT_PYTHON})`,
    ),
    'miles-root': valueFlag(
      'PATH',
      z.string().optional(),
      "a Miles checkout on the converter's path, for dumps that pickle Miles' classes\n(default: $MILES_ROOT when set)",
    ),
    'n-samples-per-prompt': count(
      '--n-samples-per-prompt',
      'rollouts per prompt group (default: read off the dumps)',
    ),
    'rollout-batch-size': count(
      '--rollout-batch-size',
      'prompt groups per step (default: read off the dumps)',
    ),
    'global-batch-size': count('--global-batch-size', 'rollouts per optimizer step (default: all of a step)'),
    'dp-size': count('--dp-size', 'data-parallel ranks (default: the rank files found)'),
    'reward-key': valueFlag('KEY', z.string().min(1).optional(), '--reward-key, when rewards are dicts'),
    json: switchFlag(
      'print the report as JSON on stdout (format harness-check-run/1); the table goes to stderr',
    ),
    'json-file': valueFlag('FILE', z.string().min(1).optional(), 'write the report as JSON to FILE'),
    report: valueFlag(
      'FILE.html',
      z.string().min(1).optional(),
      "write the replay's HTML report of the run's steps",
    ),
    'replay-json': valueFlag(
      'FILE',
      z.string().min(1).optional(),
      "write the replay's JSON report (harness-replay/2) of the steps",
    ),
    strict: switchFlag('exit 1 on findings too'),
  },
  footer: `Exit status: 0 every check passes (findings allowed), 1 a check or comparison failed or the input has a
problem (a missing step, an unreadable .pt, a missing rank file, a trajectory row without its sample: each
named, the rest still checked), 2 usage (an empty or foreign folder), 3 no Python with torch. Docs: docs/check-run.md`,
} as const;

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseFlags(argv, SPEC, io);
  if (parsed === undefined) return EXIT.ok;
  const flags = parsed.values;
  if (parsed.positionals.length !== 1)
    throw new HarnessError('usage.missing_argument', 'check-run: expected one DIR, a --dump-details folder', {
      details: { command: 'check-run', expected: 'DIR' },
    });
  const dir = resolve(io.cwd, parsed.positionals[0]!);
  const jsonFile =
    flags.json_file === undefined ? undefined : await checkOutputFile(io.cwd, flags.json_file, '--json-file');
  const htmlFile =
    flags.report === undefined ? undefined : await checkOutputFile(io.cwd, flags.report, '--report');
  const replayJson =
    flags.replay_json === undefined
      ? undefined
      : await checkOutputFile(io.cwd, flags.replay_json, '--replay-json');
  const shape: ShapeFlags = {
    ...(flags.n_samples_per_prompt === undefined ? {} : { n_samples_per_prompt: flags.n_samples_per_prompt }),
    ...(flags.rollout_batch_size === undefined ? {} : { rollout_batch_size: flags.rollout_batch_size }),
    ...(flags.global_batch_size === undefined ? {} : { global_batch_size: flags.global_batch_size }),
    ...(flags.dp_size === undefined ? {} : { dp_size: flags.dp_size }),
    ...(flags.reward_key === undefined ? {} : { reward_key: flags.reward_key }),
  };
  const milesRoot = flags.miles_root ?? io.env.MILES_ROOT;
  const sink =
    htmlFile === undefined && replayJson === undefined
      ? null
      : new StreamedReport({
          ...(htmlFile === undefined ? {} : { htmlFile }),
          ...(replayJson === undefined ? {} : { jsonFile: replayJson }),
        });
  const { report, replay } = await checkRunDumps(
    {
      dir,
      ...(flags.log === undefined ? {} : { log: resolve(io.cwd, flags.log) }),
      converter: { python: flags.python, ...(milesRoot ? { milesRoot } : {}) },
      shape,
      strict: flags.strict,
      signal: io.signal,
      onStep: (s) => io.stderr.write(`check-run: step ${s.step}: ${s.samples} samples\n`),
    },
    sink,
  );
  const text = renderCheckRunText(report);
  (flags.json ? io.stderr : io.stdout).write(text);
  const json = `${JSON.stringify(report)}\n`;
  if (flags.json) io.stdout.write(json);
  if (jsonFile !== undefined) {
    const { writeFile } = await import('node:fs/promises');
    await writeFile(jsonFile, json);
    io.stderr.write(`wrote ${jsonFile}\n`);
  }
  for (const path of replay?.written ?? []) io.stderr.write(`wrote ${path}\n`);
  return report.verdict === 'fail' ? EXIT.failed : EXIT.ok;
}

export const command: CliCommand = {
  summary: "check a recipe run's --dump-details folder step by step with every check of the replay",
  run,
};
