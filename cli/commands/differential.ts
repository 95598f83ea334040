import { writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { z } from 'zod';
import { parseFlags, switchFlag, valueFlag } from '../../common/cli-flags.ts';
import { HarnessError, isHarnessError } from '../../common/errors.ts';
import { EXIT } from '../../common/exit-codes.ts';
import { checkOutputFile } from '../../common/output-path.ts';
import { DEFAULT_MILES_PROFILE } from '../../contracts/miles-profile.ts';
import { checkoutMilesProfileFlag } from '../../contracts/miles-profile-flag.ts';
import { QWEN3_TOOL_CALL_RATE } from '../../fakes/harbor/generator/params.ts';
import { resolveRecipeConfig } from '../../recipe/builder.ts';
import { recipeInputFromValues } from '../../recipe/options.ts';
import { type DifferentialReport, runDifferential } from '../../replay/differential/run-differential.ts';
import type { CliCommand, CliIo } from '../io.ts';
import { milesCheckoutFlags, milesRootOf } from './miles-checkout-flags.ts';
import { refuseEpisodesWithPool, replayInputFlags, replayInputOptions } from './replay-input-flags.ts';
import { tokenizerFlag } from './serve/options.ts';

function differentialSpec(defaults: { batch: number; n: number }) {
  return {
    command: 'differential',
    about: `Runs the same replay steps twice on identical inputs: once through Miles' own rollout path on CPU
(miles-bridge/rollout_driver.py: the recipe's generate.RolloutFn -> agentic_tool_call.generate ->
swe_agent_function.run -> reward_func -> check_no_aborted, then postprocess_rollout_data,
log_rollout_data and convert_samples_to_train_data, Miles' args from the typed recipe), once through the
harness's driver, each against a fresh stack of the same fakes playing the same episodes. Compares sample
for sample, matched on (step, instance, copy = sample index mod n, segment), blind to group order: ids,
variants, statuses, rewards, token counts and digests, loss masks, train rows (advantages, raw rewards,
rollout ids and mask sums), and every metric both sides log.`,
    trailing: 'episodes',
    flags: {
      ...milesCheckoutFlags("Debian's packages"),
      'session-server': valueFlag(
        'K',
        z.enum(['fake', 'miles'], { error: '--session-server must be fake or miles' }).default('fake'),
        "fake: the harness's fake session server on both sides (TITO glm47; qwen3 on\nQwen3's ids); miles: Miles' own session server v2 on CPU on both sides (the\ntoy's default TITO family; Miles' qwen3 family on Qwen3's ids) [default: fake]",
      ),
      'session-server-root': valueFlag(
        'PATH',
        z.string().min(1).optional(),
        "with --session-server miles: the checkout whose session server runs, when not\n--miles-root (a newer session server beside 31f1ca96's rollout path) [default: --miles-root]",
      ),
      'session-server-python': valueFlag(
        'BIN',
        z.string().min(1).optional(),
        'the Python for --session-server-root (a newer Miles needs pydantic 2) [default: --python]',
      ),
      ...replayInputFlags(defaults),
      tokenizer: tokenizerFlag(
        "toy: word ids [default];\nqwen3: Qwen3's real ids on both sides: the fakes' qwen3 family, and Miles' rollout\nside with --tito-model qwen3 over the HF-equal tokenizer (Miles' session server\non its qwen3 family); generated episodes carry thinking and tool calls",
      ),
      'miles-profile': checkoutMilesProfileFlag(
        `which Miles the fakes answer as; with --session-server miles it must agree with\nthe checkout (default: the checkout's; with the fake: ${DEFAULT_MILES_PROFILE.name})`,
      ),
      json: switchFlag('print the report as JSON on stdout (the text goes to stderr)'),
      'json-file': valueFlag('FILE', z.string().min(1).optional(), 'write the report as JSON to FILE'),
    },
    footer: `Exit status: 0 the two sides agree, 1 differences (each named: step, sample, field, both values), 2 usage,
3 unmet precondition (no checkout, a Python module: its Debian package; with --tokenizer qwen3 also
python3-regex, python3-jinja2 and the tokenizer file). Docs: docs/differential.md`,
  } as const;
}

/** The report for people: what was replaced, each difference, the metrics compared, the verdict. */
function renderText(report: DifferentialReport): string {
  const lines = [
    `Miles profile ${report.miles_profile.name} (${report.miles_profile.commits.join(', ')})`,
    ...(report.session_server_root === null ? [] : [`miles session server: ${report.session_server_root}`]),
    ...report.replacements.map((r) => `miles: ${r}`),
    ...report.derived.map((d) => `miles: ${d}`),
    `miles: the recipe's argv with ${report.miles_args_set.join(', ')}`,
  ];
  for (const d of report.differences) {
    lines.push(`step ${d.step}${d.sample === null ? '' : ` · ${d.sample}`} · ${d.field}`);
    lines.push(`    harness: ${d.harness}`, `    miles:   ${d.miles}`);
  }
  const m = report.metrics;
  lines.push(
    `metrics compared (${m.compared.length}): ${m.compared.join(', ') || '(none)'}`,
    `metrics both log, timing (not compared): ${m.timing.join(', ') || '(none)'}`,
    `metrics only the harness logs: ${m.onlyHarness.join(', ') || '(none)'}`,
    `metrics only Miles logs: ${m.onlyMiles.join(', ') || '(none)'}`,
  );
  for (const k of report.known_differences) lines.push(`known difference: ${k}`);
  lines.push(
    `wall time: Miles' side ${report.wall_s.miles.toFixed(1)} s (steps ${report.wall_s.miles_steps
      .map((s) => s.toFixed(1))
      .join(', ')}), the harness's ${report.wall_s.harness.toFixed(1)} s (steps ${report.wall_s.harness_steps
      .map((s) => s.toFixed(1))
      .join(', ')})`,
    report.differences.length === 0
      ? `agree: ${report.matched_samples} samples matched, ${m.compared.length} metrics compared (session server: ${report.session_server}, tokenizer: ${report.tokenizer})`
      : `${report.differences.length} difference(s); ${report.matched_samples} samples matched (session server: ${report.session_server}, tokenizer: ${report.tokenizer})`,
  );
  return `${lines.join('\n')}\n`;
}

/** Exit 0 when the sides agree, 1 when they differ. */
export function differentialExitCode(report: Pick<DifferentialReport, 'differences'>): number {
  return report.differences.length === 0 ? 0 : 1;
}

async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const recipe = resolveRecipeConfig(recipeInputFromValues({}, io.env), io.env);
  const parsed = parseFlags(
    argv,
    differentialSpec({ batch: recipe.rollout_batch_size, n: recipe.n_samples_per_prompt }),
    io,
  );
  if (parsed === undefined) return EXIT.ok;
  const flags = parsed.values;
  refuseEpisodesWithPool(flags);
  const milesRoot = milesRootOf(flags.miles_root, io.env, 'differential');
  if (
    flags.session_server !== 'miles' &&
    (flags.session_server_root ?? flags.session_server_python) !== undefined
  ) {
    throw new HarnessError(
      'usage.conflicting_options',
      'differential: --session-server-root and --session-server-python need --session-server miles',
      { details: { options: ['--session-server-root', '--session-server-python', '--session-server'] } },
    );
  }
  const jsonFile =
    flags.json_file === undefined ? undefined : await checkOutputFile(io.cwd, flags.json_file, '--json-file');
  let report: DifferentialReport;
  try {
    report = await runDifferential({
      milesRoot: resolve(io.cwd, milesRoot),
      python: flags.python,
      // As `harness replay --tokenizer qwen3`: generated episodes carry tool calls on real ids.
      ...replayInputOptions(
        flags,
        recipe,
        io.cwd,
        flags.tokenizer === 'qwen3' ? { tool_call_rate: QWEN3_TOOL_CALL_RATE } : undefined,
      ),
      sessionServer: flags.session_server,
      tokenizer: flags.tokenizer,
      ...(flags.miles_profile === undefined ? {} : { milesProfile: flags.miles_profile.name }),
      ...(flags.session_server_root === undefined
        ? {}
        : { sessionServerRoot: resolve(io.cwd, flags.session_server_root) }),
      ...(flags.session_server_python === undefined
        ? {}
        : { sessionServerPython: flags.session_server_python }),
      signal: io.signal,
      progress: io.stderr,
    });
  } catch (error) {
    if (isHarnessError(error) && error.code.startsWith('precondition.')) {
      io.stderr.write(`${error.message}\n`);
      return EXIT.precondition;
    }
    throw error;
  }
  const json = `${JSON.stringify(report)}\n`;
  if (jsonFile !== undefined) await writeFile(jsonFile, json);
  if (flags.json) io.stdout.write(json);
  (flags.json ? io.stderr : io.stdout).write(renderText(report));
  if (jsonFile !== undefined) io.stderr.write(`wrote ${jsonFile}\n`);
  return differentialExitCode(report);
}

export const command: CliCommand = {
  summary:
    "run replay steps through Miles' own rollout path and the harness's driver, compare sample for sample",
  run,
};
