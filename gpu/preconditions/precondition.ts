import { z } from 'zod';

/**
 * Stable codes for unmet preconditions of a real smoke run: tests, docs and the nightly job key on these,
 * never on the wording of `reason`.
 */
const PRECONDITION_CODES = [
  'gpu.nvidia_smi_missing',
  'gpu.nvidia_smi_failed',
  'gpu.too_few',
  'miles.root_missing',
  'miles.train_py_missing',
  'miles.launcher_missing',
  'miles.harbor_adapter_missing',
  'python.missing',
  'python.miles_import_failed',
  'python.torch_import_failed',
  'checkpoint.hf_missing',
  'checkpoint.torch_dist_missing',
  'ray.missing',
  'ports.busy',
  'disk.low',
] as const;
const PreconditionCodeSchema = z.enum(PRECONDITION_CODES);
export type PreconditionCode = z.infer<typeof PreconditionCodeSchema>;

export const PreconditionSchema = z.object({
  /** What was checked, e.g. `gpus`, `train_py`, `ports`. */
  name: z.string(),
  met: z.boolean(),
  /** Set exactly when `met` is false. */
  code: PreconditionCodeSchema.nullable(),
  /** What was found, for people: on success too ("8 GPUs: NVIDIA H200"). */
  reason: z.string(),
});
export type Precondition = z.infer<typeof PreconditionSchema>;

export const met = (name: string, reason: string): Precondition => ({ name, met: true, code: null, reason });
export const unmet = (name: string, code: PreconditionCode, reason: string): Precondition => ({
  name,
  met: false,
  code,
  reason,
});

/** How probes reach the outside: the environment whose PATH finds `nvidia-smi` and `python3`. */
export interface ProbeContext {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
}

/** The env a probe's child gets: only defined values (execa rejects undefined entries). */
export function childEnv(env: Readonly<Record<string, string | undefined>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}
