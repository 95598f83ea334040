import { z } from 'zod';

/** A command as an argument array, with where it runs and the env it adds to the inherited one. */
const PlannedCommandSchema = z.object({
  command: z.string(),
  args: z.array(z.string()),
  cwd: z.string(),
  /** Set on top of the inherited environment. */
  env: z.record(z.string(), z.string()),
});
export type PlannedCommand = z.infer<typeof PlannedCommandSchema>;

const PortNeedSchema = z.object({ port: z.number().int(), purpose: z.string() });

/**
 * Everything a smoke run will do, decided before anything starts; `--dry-run` prints it and a real run
 * writes it (secrets redacted) next to its logs as `plan.json`.
 */
export const SmokePlanSchema = z.object({
  run_id: z.string(),
  miles_root: z.string(),
  /** The Miles profile the run is taken to be (`--miles-profile`): the dump checks hold under it. */
  miles_profile: z.object({ name: z.string(), commits: z.array(z.string()) }),
  gpus_per_node: z.number().int(),
  nodes: z.number().int(),
  timeout_s: z.number().int(),
  grace_s: z.number().int(),
  skip_prepare: z.boolean(),
  keep_checkpoints: z.boolean(),
  min_free_disk_gib: z.number(),
  paths: z.object({
    output_dir: z.string(),
    /** `<output>/<run_id>`: fresh for every run. */
    run_dir: z.string(),
    /** The harness's own files: logs, plan, prompts, converted dumps, report. */
    smoke_dir: z.string(),
    log_file: z.string(),
    harbor_log: z.string(),
    plan_file: z.string(),
    report_file: z.string(),
    prompt_data: z.string(),
    /** Miles' `--dump-details` folder. */
    details_dir: z.string(),
    checkpoints_dir: z.string(),
    hf_checkpoint: z.string(),
    ref_load: z.string(),
  }),
  harbor: z.object({
    host: z.string(),
    port: z.number().int(),
    url: z.string(),
    max_concurrent: z.number().int(),
    agent_timeout_s: z.number().int(),
    /** AGENT_MAX_INPUT_TOKENS of the mock's Terminus engine: small, so every episode compacts. */
    context_limit: z.number().int(),
    /** Proactive summarization when free context falls below this. */
    summarize_threshold: z.number().int(),
    /** The tasks in the prompt data, each played by the mock's tuned compaction episode. */
    instance_ids: z.array(z.string()),
  }),
  launcher: PlannedCommandSchema,
  /** What the launcher will submit to Ray (from the recipe builder), for reference and for the ports. */
  train: z.object({
    groups: z.array(z.object({ name: z.string(), argv: z.array(z.string()) })),
    env: z.record(z.string(), z.string()),
  }),
  cleanup: z.array(PlannedCommandSchema),
  converter: PlannedCommandSchema,
  ports: z.array(PortNeedSchema),
  thresholds: z.object({ file: z.string(), expressions: z.array(z.string()) }),
  /** The plan values threshold expressions may name. */
  variables: z.record(z.string(), z.number()),
});
export type SmokePlan = z.infer<typeof SmokePlanSchema>;
