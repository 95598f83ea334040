import { z } from 'zod';
import { createRunId } from './run-id.ts';
import { recipeIssues } from './validate.ts';

/** An environment as commands see it (`CliIo.env`); tests pass their own object. */
export type RecipeEnv = Readonly<Record<string, string | undefined>>;

/** Where a field comes from: Miles' `ExecuteTrainConfig`, the recipe's `ScriptArgs`, or this harness. */
export type FieldOrigin = 'ExecuteTrainConfig' | 'ScriptArgs' | 'harness';

/** The Miles checkout in the recipe's layout: `docker/Dockerfile` clones Miles to `/root/miles`. */
export const DEFAULT_MILES_ROOT = '/root/miles';

const RECIPE_MODES = ['normal', 'debug_rollout_only'] as const;

/**
 * Attaches a field's docs: its description, where it comes from, and (for defaults Miles reads from the
 * environment) the variable it reads; all three also land in the JSON Schema.
 */
function described<T extends z.ZodType>(
  schema: T,
  origin: FieldOrigin,
  description: string,
  defaultEnv?: string,
): T {
  return schema.meta({
    description,
    'x-origin': origin,
    ...(defaultEnv ? { 'x-default-env': defaultEnv } : {}),
  });
}

/**
 * The recipe config: every field of V2's `ScriptArgs` (radixark/miles@99337a20
 * examples/experimental/terminus-compaction/run.py) in declaration order after the four it inherits from
 * `ExecuteTrainConfig` (radixark/miles@31f1ca96 miles/utils/external_utils/command_utils.py), plus the
 * harness's `miles_root`. The object is strict (unknown fields are errors) and carries the cross-field
 * rules of `validate.ts`. Where Miles' `default_factory` reads an env var, the field names it in its
 * `x-default-env` metadata and its default here is the value used when that variable is unset;
 * `applyEnvDefaults` (env-defaults.ts) reads the variables from an explicit env object before parsing.
 */
export const RecipeConfigSchema = z
  .strictObject({
    cuda_core_dump: described(
      z.boolean().default(false),
      'ExecuteTrainConfig',
      'Have execute_train enable CUDA core dumps into output_dir. Not part of the argv or the recipe env.',
    ),
    num_nodes: described(z.int().default(1), 'ExecuteTrainConfig', 'Number of nodes.', 'SLURM_JOB_NUM_NODES'),
    extra_env_vars: described(
      z.string().default(''),
      'ExecuteTrainConfig',
      'Extra Ray runtime env vars for execute_train (JSON, or space-separated K=V). Not part of the argv or the recipe env.',
    ),
    output_dir: described(
      z.string().default('/root/shared_data'),
      'ExecuteTrainConfig',
      'Root of the run outputs; checkpoints and traces go under output_dir/run_id.',
    ),
    mode: described(
      z.enum(RECIPE_MODES).default('normal'),
      'ScriptArgs',
      'normal, or debug_rollout_only (adds --debug-rollout-only: rollouts without training).',
    ),
    run_id: described(
      z.string().default(() => createRunId()),
      'ScriptArgs',
      'Run id: one path segment naming the output folder, Prometheus run and W&B group (create_run_id() gives UTC YYMMDD-HHMMSS-NNN).',
    ),
    megatron_model_type: described(
      z.string().default('glm4.7-flash'),
      'ScriptArgs',
      'Model type whose scripts/models/<type>.py args execute_train prepends to the argv.',
    ),
    megatron_path: described(
      z.string().default('/root/Megatron-LM'),
      'ScriptArgs',
      'Megatron-LM checkout used by checkpoint conversion and execute_train.',
    ),
    num_gpus_per_node: described(z.int().default(8), 'ScriptArgs', 'GPUs per node.'),
    skip_prepare: described(
      z.boolean().default(false),
      'ScriptArgs',
      'Skip the HF to torch_dist checkpoint conversion before training.',
    ),
    model_dir: described(
      z.string().default('/root/models'),
      'ScriptArgs',
      'Folder holding the model checkpoints.',
    ),
    model_name: described(
      z.string().default('GLM-4.7-Flash'),
      'ScriptArgs',
      'Model folder name under model_dir.',
    ),
    hf_checkpoint: described(
      z.string().default(''),
      'ScriptArgs',
      'HF checkpoint (--hf-checkpoint). Empty: model_dir/model_name.',
    ),
    ref_load: described(
      z.string().default(''),
      'ScriptArgs',
      'Reference model checkpoint (--ref-load). Empty: model_dir/model_name_torch_dist.',
    ),
    save_dir: described(
      z.string().default(''),
      'ScriptArgs',
      'Checkpoint output (--save). Empty: output_dir/run_id/checkpoints.',
    ),
    save_traces_dir: described(
      z.string().default(''),
      'ScriptArgs',
      'Trace dump folder (--dump-details). Empty: output_dir/run_id/details.',
    ),
    prompt_data: described(
      z.string().default('/root/tb2_train_89.jsonl'),
      'ScriptArgs',
      'Prompt JSONL (--prompt-data): the 89 Terminal-Bench 2 tasks.',
    ),
    max_seq_len: described(
      z.int().default(32768),
      'ScriptArgs',
      'Maximum episode length in tokens (--max-seq-len).',
    ),
    rollout_max_response_len: described(
      z.int().default(8192),
      'ScriptArgs',
      'Maximum tokens per model response (--rollout-max-response-len); at most max_seq_len.',
    ),
    num_rollout: described(
      z.int().default(100),
      'ScriptArgs',
      'Number of rollouts, each followed by training on its samples (--num-rollout).',
    ),
    rollout_batch_size: described(
      z.int().default(4),
      'ScriptArgs',
      'Prompts per rollout step (--rollout-batch-size).',
    ),
    n_samples_per_prompt: described(
      z.int().default(8),
      'ScriptArgs',
      'Rollouts per prompt, the GRPO group size (--n-samples-per-prompt).',
    ),
    global_batch_size: described(
      z.int().default(32),
      'ScriptArgs',
      'Samples per optimizer step (--global-batch-size); must divide rollout_batch_size x n_samples_per_prompt.',
    ),
    save_interval: described(
      z.int().default(100),
      'ScriptArgs',
      'Checkpoint every N steps (--save-interval).',
    ),
    agent_server_url: described(
      z.string().default('http://127.0.0.1:11000'),
      'ScriptArgs',
      'Harbor agent server URL (env AGENT_SERVER_URL of the run).',
      'AGENT_SERVER_URL',
    ),
    agent_model_name: described(
      z.string().default('model'),
      'ScriptArgs',
      'Model name the agent requests (env AGENT_MODEL_NAME of the run).',
      'AGENT_MODEL_NAME',
    ),
    agent_trial_timeout: described(
      z.int().default(7200),
      'ScriptArgs',
      'Seconds a Harbor trial may run (env AGENT_TRIAL_TIMEOUT of the run); must be > 0.',
    ),
    router_external_host: described(
      z.string().default(''),
      'ScriptArgs',
      'Host the agent uses to reach the trainer (env MILES_ROUTER_EXTERNAL_HOST of the run, only when non-empty).',
      'MILES_ROUTER_EXTERNAL_HOST',
    ),
    miles_host_ip: described(
      z.string().default(''),
      'ScriptArgs',
      'Host IP for Miles (env MILES_HOST_IP of the run, only when non-empty).',
      'MILES_HOST_IP',
    ),
    session_server_ip: described(
      z.string().default(''),
      'ScriptArgs',
      'Session server bind address (--session-server-ip, only when non-empty).',
      'MILES_SESSION_SERVER_IP',
    ),
    use_prometheus: described(
      z.boolean().default(true),
      'ScriptArgs',
      'Export Prometheus metrics (--use-prometheus --prometheus-port --prometheus-run-name).',
    ),
    prometheus_port: described(z.int().default(9090), 'ScriptArgs', 'Prometheus port (--prometheus-port).'),
    miles_root: described(
      z.string().default(DEFAULT_MILES_ROOT),
      'harness',
      "Absolute path of the Miles checkout (Miles' repo_base_dir); PYTHONPATH of the run is its examples/swe-agent-harbor-docker.",
    ),
  })
  .superRefine((config, ctx) => {
    for (const issue of recipeIssues(config)) {
      ctx.addIssue({
        code: 'custom',
        path: [issue.field],
        message: issue.message,
        params: { rule: issue.rule },
      });
    }
  });

/** A resolved recipe config: every field present and valid. */
export type RecipeConfig = z.output<typeof RecipeConfigSchema>;
/** What callers may pass: any subset of the fields; the rest take their defaults. */
export type RecipeInput = z.input<typeof RecipeConfigSchema>;
export type RecipeField = keyof RecipeConfig;

export const RECIPE_SHAPE = RecipeConfigSchema.shape;
export const RECIPE_FIELDS = Object.keys(RECIPE_SHAPE) as RecipeField[];

/** The metadata every field carries (see `described`). */
export interface FieldMeta {
  readonly description: string;
  readonly 'x-origin': FieldOrigin;
  readonly 'x-default-env'?: string;
}

export function fieldMeta(field: RecipeField): FieldMeta {
  return RECIPE_SHAPE[field].meta() as unknown as FieldMeta;
}

/** The config's JSON Schema as the CLI's `--schema` prints it: defaults as with an empty environment. */
export function recipeJsonSchema(): Record<string, unknown> {
  const json = z.toJSONSchema(RecipeConfigSchema, { io: 'input' }) as {
    properties: Record<string, Record<string, unknown>>;
  };
  // The run id's default is a fresh id per run, not a value worth documenting.
  delete json.properties.run_id?.default;
  return json;
}
