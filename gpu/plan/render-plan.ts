import { quote } from 'shell-quote';
import { parseJson } from '../../common/python-json/loads.ts';
import { redactSecrets, SECRET_ENV_KEYS, secretsFromEnv } from '../../common/redact.ts';
import { REDACTED, redactArgv, TRAIN_COMMAND } from '../../recipe/render.ts';
import type { RecipeEnv } from '../../recipe/schema.ts';
import type { PlannedCommand, SmokePlan } from './smoke-plan.ts';

const SECRET_KEYS: ReadonlySet<string> = new Set(SECRET_ENV_KEYS);

function redactEnv(env: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).map(([k, v]) => [k, SECRET_KEYS.has(k) ? REDACTED : v]));
}

function redactCommand(c: PlannedCommand): PlannedCommand {
  return { ...c, args: redactArgv(c.args), env: redactEnv(c.env) };
}

/**
 * The plan with every secret replaced by `***`: secret flag values (`--wandb-key`), secret env keys, and
 * any occurrence of a secret value from the environment anywhere else.
 */
export function redactPlan(plan: SmokePlan, env: RecipeEnv): SmokePlan {
  const structural: SmokePlan = {
    ...plan,
    launcher: redactCommand(plan.launcher),
    train: {
      groups: plan.train.groups.map((g) => ({ name: g.name, argv: redactArgv(g.argv) })),
      env: redactEnv(plan.train.env),
    },
    cleanup: plan.cleanup.map(redactCommand),
    converter: redactCommand(plan.converter),
  };
  return parseJson(redactSecrets(JSON.stringify(structural), secretsFromEnv(env))) as SmokePlan;
}

/** `30000-30031 (session server)`: contiguous ports of one purpose on one line. */
function portRanges(ports: SmokePlan['ports']): string[] {
  const out: string[] = [];
  for (let i = 0; i < ports.length; ) {
    let j = i;
    while (
      j + 1 < ports.length &&
      ports[j + 1]!.purpose === ports[i]!.purpose &&
      ports[j + 1]!.port === ports[j]!.port + 1
    )
      j += 1;
    const range = i === j ? String(ports[i]!.port) : `${ports[i]!.port}-${ports[j]!.port}`;
    out.push(`${range} (${ports[i]!.purpose})`);
    i = j + 1;
  }
  return out;
}

const envLine = (env: Readonly<Record<string, string>>): string =>
  Object.entries(env)
    .map(([k, v]) => `${k}=${quote([v])}`)
    .join(' ');

/** The plan for people (already redacted: pass the output of `redactPlan`). */
export function renderPlanText(plan: SmokePlan): string {
  const p = plan.paths;
  const lines = [
    `harness smoke: plan for run ${plan.run_id}`,
    `  Miles profile ${plan.miles_profile.name} (${plan.miles_profile.commits.join(', ')})`,
    '',
    'Paths',
    `  run folder      ${p.run_dir}`,
    `  launcher log    ${p.log_file}`,
    `  harbor log      ${p.harbor_log}`,
    `  report          ${p.report_file}`,
    `  prompt data     ${p.prompt_data}`,
    `  Miles dumps     ${p.details_dir}`,
    `  checkpoints     ${p.checkpoints_dir}${plan.keep_checkpoints ? '' : ' (removed after the run; --keep-checkpoints keeps them)'}`,
    `  HF checkpoint   ${p.hf_checkpoint}`,
    `  torch_dist      ${p.ref_load}${plan.skip_prepare ? ' (must exist: --skip-prepare)' : ' (written by the prepare step)'}`,
    '',
    'Harbor mock',
    `  listens on      ${plan.harbor.url} (max ${plan.harbor.max_concurrent} trials at once, ${plan.harbor.agent_timeout_s} s per trial)`,
    `  compaction      context limit ${plan.harbor.context_limit} tokens, summarize below ${plan.harbor.summarize_threshold} free`,
    `  tasks           ${plan.harbor.instance_ids.join(', ')}`,
    '',
    `Launcher: ${plan.gpus_per_node} GPUs × ${plan.nodes} node${plan.nodes === 1 ? '' : 's'}, own process group, timeout ${plan.timeout_s} s, SIGTERM then SIGKILL after ${plan.grace_s} s`,
    `  cwd ${plan.launcher.cwd}`,
    `  env ${envLine(plan.launcher.env)} (on top of the inherited environment)`,
    `  $ ${quote([plan.launcher.command, ...plan.launcher.args])}`,
    '',
    'What the launcher submits to Ray (recipe builder)',
    `  $ ${quote([...TRAIN_COMMAND])} \\`,
    ...plan.train.groups
      .filter((g) => g.argv.length > 0)
      .map((g, i, all) => `      ${quote(g.argv)}${i === all.length - 1 ? '' : ' \\'}`),
    `  runtime env ${envLine(plan.train.env)}`,
    '',
    'Afterwards',
    ...plan.cleanup.map(
      (c) => `  $ ${quote([c.command, ...c.args])}    (stops the Ray job and daemons the launcher started)`,
    ),
    `  $ ${quote([plan.converter.command, ...plan.converter.args])}`,
    '  then: the replay invariant checks and the dump checks on the converted dumps, train/step from the log,',
    `  and the thresholds of ${plan.thresholds.file}:`,
    ...plan.thresholds.expressions.map((e) => `    ${e}`),
    '',
    `Ports that must be free: ${portRanges(plan.ports).join(', ')}`,
    `Disk: at least ${plan.min_free_disk_gib} GiB free under ${p.output_dir}`,
    `Plan values for thresholds: ${Object.entries(plan.variables)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`,
    '',
  ];
  return lines.join('\n');
}
