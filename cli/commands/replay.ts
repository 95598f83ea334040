import { z } from 'zod';
import { parseFlags, switchFlag, valueFlag } from '../../common/cli-flags.ts';
import { HarnessError, isHarnessError } from '../../common/errors.ts';
import { EXIT } from '../../common/exit-codes.ts';
import { checkOutputFile } from '../../common/output-path.ts';
import { wholeNumber } from '../../common/whole-number.ts';
import { milesProfileFlag } from '../../contracts/miles-profile-flag.ts';
import { QWEN3_TOOL_CALL_RATE } from '../../fakes/harbor/generator/params.ts';
import { recipeFamily } from '../../fakes/tokenizer/tito.ts';
import { resolveRecipeConfig } from '../../recipe/builder.ts';
import { recipeInputFromValues } from '../../recipe/options.ts';
import { TENSOR_PARALLEL_SIZE } from '../../recipe/validate.ts';
import { TrainScheduleConfigSchema } from '../../replay/grpo/train-schedule.ts';
import { replayExitCode } from '../../replay/report/exit-code.ts';
import { StreamedReport, type StreamedResult } from '../../replay/report/streamed-report.ts';
import { type ReplayOptions, streamReplay } from '../../replay/run-replay.ts';
import type { CliCommand, CliIo } from '../io.ts';
import { refuseEpisodesWithPool, replayInputFlags, replayInputOptions } from './replay-input-flags.ts';
import { tokenizerFlag } from './serve/options.ts';

/** Harbor's `--agent-timeout` in the compaction recipe: `--max-concurrent 32 --agent-timeout 3600` (docs/harbor.md). */
const RECIPE_AGENT_TIMEOUT_S = 3600;

/** The replay's flags; the help shows the recipe's defaults, which come from the environment. */
function replaySpec(defaults: { batch: number; n: number; gbs: number }) {
  return {
    command: 'replay',
    about: `Runs GRPO steps of the Terminus-2 compaction recipe end to end on this machine: prompts -> mock Harbor
-> Terminus-2 episodes -> fake session server v2 -> samples -> GRPO -> metrics, then checks that
shared-token masking and GRPO grouping hold. The fake policy, session server and Harbor mock run on free
loopback ports and stop when the command ends.`,
    trailing: 'episodes',
    flags: {
      ...replayInputFlags(defaults),
      'global-batch-size': valueFlag(
        'G',
        wholeNumber('--global-batch-size', 1, 65_536).optional(),
        `rollouts per optimizer step; leftovers are dropped as Miles does\n[default from the recipe: ${defaults.gbs}]`,
      ),
      'miles-profile': milesProfileFlag,
      tokenizer: tokenizerFlag(
        "toy: word ids, the recipe's glm47 TITO family [default: fast];\nqwen3: Qwen3's real tokenizer, Miles' qwen3_fixed.jinja and the qwen3 family,\nwith thinking and tool calls in the generated episodes",
      ),
      json: switchFlag(
        'print the whole report as JSON on stdout (schema: docs/replay.md);\nthe summary then goes to stderr',
      ),
      'json-file': valueFlag('FILE', z.string().min(1).optional(), 'write the whole report as JSON to FILE'),
      report: valueFlag(
        'FILE.html',
        z.string().min(1).optional(),
        'write a self-contained HTML report\n(output paths are checked before the run starts)',
      ),
      strict: switchFlag('exit 1 on findings too'),
      'session-server-workers': valueFlag(
        'N',
        wholeNumber('--session-server-workers', 1, 256).optional(),
        "fake session servers on their own ports, one picked per session (newer Miles'\nflag, PR #2774; needs a Miles profile with workers) [default: 1, 32 under one]",
      ),
    },
    footer: `Exit status: 0 all checks pass (or only findings), 1 a check failed (or a finding under --strict),
2 usage or configuration error, 130 interrupted. Docs: docs/replay.md`,
  } as const;
}

/** A file-system error on one of the report files, named by its option; anything else as it is. */
function outputError(error: unknown, jsonFile: string | undefined, htmlFile: string | undefined): unknown {
  const path = (error as NodeJS.ErrnoException | null)?.path;
  if (isHarnessError(error) || typeof path !== 'string') return error;
  const option =
    jsonFile !== undefined && path.startsWith(jsonFile)
      ? '--json-file'
      : htmlFile !== undefined && path.startsWith(htmlFile)
        ? '--report'
        : null;
  if (option === null) return error;
  return new HarnessError(
    'config.output_unwritable',
    `${option} ${path}: cannot write (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    { details: { option, path }, cause: error },
  );
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const recipe = resolveRecipeConfig(recipeInputFromValues({}, io.env), io.env);
  const spec = replaySpec({
    batch: recipe.rollout_batch_size,
    n: recipe.n_samples_per_prompt,
    gbs: recipe.global_batch_size,
  });
  const parsed = parseFlags(argv, spec, io);
  if (parsed === undefined) return EXIT.ok;
  const flags = parsed.values;
  refuseEpisodesWithPool(flags);
  // Outputs first: a bad path is a usage error now, not after the whole run.
  const jsonFile =
    flags.json_file === undefined ? undefined : await checkOutputFile(io.cwd, flags.json_file, '--json-file');
  const htmlFile =
    flags.report === undefined ? undefined : await checkOutputFile(io.cwd, flags.report, '--report');
  const options: ReplayOptions = {
    // Real templates special-case tool calls: qwen3 replays carry some (toy episodes stay as they were).
    ...replayInputOptions(
      flags,
      recipe,
      io.cwd,
      flags.tokenizer === 'qwen3' ? { tool_call_rate: QWEN3_TOOL_CALL_RATE } : undefined,
    ),
    maxSeqLen: recipe.max_seq_len,
    maxResponseLen: recipe.rollout_max_response_len,
    modelName: recipe.agent_model_name,
    trialTimeoutS: recipe.agent_trial_timeout,
    agentTimeoutS: RECIPE_AGENT_TIMEOUT_S,
    titoModel: recipeFamily(flags.tokenizer),
    milesProfile: flags.miles_profile,
    train: TrainScheduleConfigSchema.parse({
      global_batch_size: flags.global_batch_size ?? recipe.global_batch_size,
      // Megatron's data-parallel size under the recipe: every GPU, tensor-parallel groups of 4.
      dp_size: Math.max(1, Math.floor((recipe.num_nodes * recipe.num_gpus_per_node) / TENSOR_PARALLEL_SIZE)),
      // The recipe does not pass --allow-partial-train-step.
    }),
    // Miles sets --rollout-num-gpus to the actor's GPUs under --colocate (arguments.py), which the recipe passes.
    rolloutNumGpus: recipe.num_nodes * recipe.num_gpus_per_node,
    strict: flags.strict,
    ...(flags.session_server_workers === undefined
      ? {}
      : { sessionServerWorkers: flags.session_server_workers }),
  };
  // Each step goes into the reports as it finishes (replay/report/streamed-report.ts); the files are
  // written whole at the end. --json: stdout carries only the JSON document, written last; the summary
  // moves to stderr (docs/cli.md).
  const sink = new StreamedReport({
    ...(jsonFile === undefined ? {} : { jsonFile }),
    ...(htmlFile === undefined ? {} : { htmlFile }),
    ...(flags.json ? { jsonOut: io.stdout } : {}),
  });
  const tellPartial = async () => {
    for (const path of await sink.abandon())
      io.stderr.write(`harness replay: partial report left in ${path}\n`);
  };
  let result: StreamedResult;
  try {
    result = await streamReplay(options, { signal: io.signal, progress: io.stderr }, sink);
  } catch (error) {
    await tellPartial();
    if (isHarnessError(error) && error.code === 'replay.interrupted') {
      io.stderr.write('harness replay: interrupted; servers stopped\n');
      return EXIT.interrupted;
    }
    throw outputError(error, jsonFile, htmlFile);
  }
  (flags.json ? io.stderr : io.stdout).write(result.summary);
  // Their paths last, where a person looks.
  for (const path of result.written) io.stderr.write(`wrote ${path}\n`);
  return replayExitCode(result.frame.verdict);
}

export const command: CliCommand = {
  summary: 'run GRPO steps of the recipe end to end and check masking and grouping',
  run,
};
