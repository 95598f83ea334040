import { z } from 'zod';

/**
 * A Miles profile: which Miles the fakes, the checks and the bridge stand in for. Every behaviour that
 * differs between Miles versions is one named switch here; a profile is a full set of switches plus the
 * Miles commit(s) its facts come from. Fakes read switches, never a profile's name or a commit string.
 *
 * The facts of each switch, upstream file and commit, are in docs/session-server.md's rule table and in the
 * comment of the module that implements it.
 */
export const MilesSwitchesSchema = z
  .object({
    /**
     * The samples op's picker when the client names none (`--session-sample-picker-path` unset).
     * 31f1ca96: `drop_retries` (v2/picker_hub/drop_retries.py); newer: `drop_same_prompt_retries`
     * (sii-avalanche/miles@4d412b5a v2/picker_hub/__init__.py, drop_same_prompt_retries.py; the default path
     * in its tests' `SessionServerConfig`). Any of the three is selectable by its import path.
     */
    defaultPicker: z.enum(['drop_retries', 'drop_same_prompt_retries']),
    /** Chat reply without `meta_info`; a choice's `logprobs` only when the client asked for them. */
    chatReplyStripsMetaInfo: z.boolean(),
    /**
     * The request resolved as sii-avalanche/miles@4d412b5a miles/rollout/session/request_args.py does: the
     * forwarded and recorded request always carries `return_routed_experts`/`return_indexer_topk`
     * (false unless the replay flags), `chat_template_kwargs` (launch, then the continued turn's, then the
     * request's; `{}` when none) and `tools` (`null` when none), in that key order; the attach node is found
     * before the request is resolved (its `turn_args` are the history); a client `input_ids`,
     * `routed_experts_start_len`, `logprob_start_len`, a foreign `lora_path` or `tools` inside
     * `chat_template_kwargs` is a 400.
     */
    forwardedRequestDefaults: z.boolean(),
    /**
     * `top_p < 1` or `top_k > 0` answered 400 "bounded training-request sampling requires bounded rollout
     * sampling"; `top_p` outside (0, 1] 400 "training request top_p must be in (0, 1], got …"
     * (sii-avalanche/miles@4d412b5a miles/rollout/generate_utils/sampling_mask.py).
     */
    refuseBoundedSampling: z.boolean(),
    /** An upstream 200 with `finish_reason "abort"` answered 503, nothing committed (radixark PR #3337). */
    upstreamAbortIs503: z.boolean(),
    /** GET shows the active leaf's path (31f1ca96) or, without `active_leaf`, the last committed path (PR #3258). */
    activeLeaf: z.boolean(),
    /** `turn_args` in GET and samples metadata and on tree nodes. */
    turnArgs: z.boolean(),
    /** `/health` adds `anthropic_intermediate_system_supported`. */
    healthAnthropicField: z.boolean(),
    /** Samples wire: `weight_versions` a list of span dicts and `spec_info` per sample (newer), or 31f1ca96's. */
    samplesWire: z.enum(['31f1ca96', 'spans']),
    /** 400 for an invalid `POST /sessions` body (`CreateSessionRequest`). */
    validateCreateSession: z.boolean(),
    /** 400 "tools changed on a continued turn…". */
    refuseToolsChanged: z.boolean(),
    /** Rollout metrics as 31f1ca96's `log_rollout_data` or the newer `metrics.py` (normalised zero_std buckets, …). */
    rolloutMetrics: z.enum(['31f1ca96', 'normalised']),
    /** `--session-server-workers`: N worker processes with per-session affinity (PR #2774). */
    sessionServerWorkers: z.boolean(),
  })
  .strict();
export type MilesSwitches = z.infer<typeof MilesSwitchesSchema>;

export const MilesProfileSchema = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9-]*$/),
    /** Where the facts come from, `owner/repo@sha` (at least 8 hex digits), oldest first. */
    commits: z.array(z.string().regex(/^[\w.-]+\/[\w.-]+@[0-9a-f]{8,40}$/)).min(1),
    /** One line: what this Miles is. */
    about: z.string().min(1),
    /** How it has been checked against real Miles code (the default profile must have been). */
    checkedAgainstMiles: z.string().nullable(),
    switches: MilesSwitchesSchema,
  })
  .strict();
export type MilesProfile = z.infer<typeof MilesProfileSchema>;

const MILES_31F1CA96: MilesProfile = MilesProfileSchema.parse({
  name: '31f1ca96',
  commits: ['radixark/miles@31f1ca961a94cb860cec3b2dea34ec332bfa8f76'],
  about: 'radixark/miles at 31f1ca96 (2026-08-21), the one whole snapshot the harness was first built on',
  checkedAgainstMiles:
    'harness conformance: 40/40 bundled traces and 28/28 raw requests (docs/conformance.md)',
  switches: {
    defaultPicker: 'drop_retries',
    chatReplyStripsMetaInfo: false,
    forwardedRequestDefaults: false,
    refuseBoundedSampling: false,
    upstreamAbortIs503: false,
    activeLeaf: true,
    turnArgs: false,
    healthAnthropicField: false,
    samplesWire: '31f1ca96',
    validateCreateSession: false,
    refuseToolsChanged: false,
    rolloutMetrics: '31f1ca96',
    sessionServerWorkers: false,
  },
});

/**
 * The newer session server: sii-avalanche/miles at 4d412b5a (a fork holding most of one coherent set of
 * session-server files after 31f1ca96), with `v2/tree_trajectory.py` from radixark/miles@2ea774cb and the
 * TITO tokenizer base from radixark/miles@3abe1f8c, overlaid on 31f1ca96 (docs/conformance.md "A newer
 * Miles"; radixark PRs #3258 and #3337 for the active leaf and the abort).
 */
const MILES_4D412B5A: MilesProfile = MilesProfileSchema.parse({
  name: '4d412b5a',
  commits: [
    'radixark/miles@2ea774cbd2a63b64c86ab321f0fce5e1e221d426',
    'radixark/miles@3abe1f8c06dd33c3d11d6205453101af05748ad8',
    'sii-avalanche/miles@4d412b5aca323b49cd414dadb10d7ae1742ec637',
  ],
  about:
    'a newer session server v2: sii-avalanche/miles at 4d412b5a with two radixark files, overlaid on 31f1ca96',
  checkedAgainstMiles:
    'harness conformance against the overlaid tree on CPU: 40/40 bundled traces and 28/28 raw requests (docs/conformance.md "A newer Miles")',
  switches: {
    defaultPicker: 'drop_same_prompt_retries',
    chatReplyStripsMetaInfo: true,
    forwardedRequestDefaults: true,
    refuseBoundedSampling: true,
    upstreamAbortIs503: true,
    activeLeaf: false,
    turnArgs: true,
    healthAnthropicField: true,
    samplesWire: 'spans',
    validateCreateSession: true,
    refuseToolsChanged: true,
    rolloutMetrics: 'normalised',
    sessionServerWorkers: true,
  },
});

/** Every known profile, oldest first. */
export const MILES_PROFILES: readonly MilesProfile[] = [MILES_31F1CA96, MILES_4D412B5A];

/** The newest profile that has been checked against real Miles code. */
export const DEFAULT_MILES_PROFILE: MilesProfile = [...MILES_PROFILES]
  .reverse()
  .find((p) => p.checkedAgainstMiles !== null) as MilesProfile;

export const MILES_PROFILE_NAMES: readonly string[] = MILES_PROFILES.map((p) => p.name);

/** The profile of that name, or undefined (the CLI turns that into a usage error listing the names). */
export function milesProfileNamed(name: string): MilesProfile | undefined {
  return MILES_PROFILES.find((p) => p.name === name);
}

/** One line naming a profile and its commits, for terminal output: `Miles profile NAME (owner/repo@sha8, …)`. */
export function milesProfileLine(profile: MilesProfile): string {
  const commits = profile.commits.map((c) => c.replace(/@([0-9a-f]{8})[0-9a-f]*$/, '@$1'));
  const checked = profile.checkedAgainstMiles === null ? '; not yet checked against real Miles code' : '';
  return `Miles profile ${profile.name} (${commits.join(', ')}${checked})`;
}
