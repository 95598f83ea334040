import { z } from 'zod';
import { EvidenceKindSchema } from '../checks/evidence-schema.ts';

/** Where in the dumps a check looked: enough to find the row again. */
const DumpEvidenceSchema = z.object({
  /** The kind of problem, when the check is one of the replay's (its evidence kinds). */
  kind: EvidenceKindSchema.optional(),
  step: z.number().int().optional(),
  rank: z.number().int().optional(),
  group_index: z.number().int().nullable().optional(),
  rollout: z.number().int().nullable().optional(),
  row: z.number().int().optional(),
  /** Half-open range into the sample's tokens. */
  token_range: z.tuple([z.number().int(), z.number().int()]).optional(),
  detail: z.string(),
});
export type DumpEvidence = z.infer<typeof DumpEvidenceSchema>;

/**
 * The verdict of one check on a smoke run. `undecided` means the dumps do not carry enough to decide
 * (say, no train shards): reported, never counted as a pass. `source` tells a check reused from the
 * replay (`replay`) from one that only exists for Miles' dumps (`dumps`) or its logs (`logs`).
 */
export const SmokeCheckSchema = z.object({
  name: z.string(),
  source: z.enum(['replay', 'dumps', 'logs']),
  verdict: z.enum(['pass', 'fail', 'finding', 'undecided']),
  summary: z.string(),
  evidence: z.array(DumpEvidenceSchema),
});
export type SmokeCheck = z.infer<typeof SmokeCheckSchema>;

/** Caps the evidence list so one systematic defect does not bury the report. */
export const MAX_EVIDENCE = 20;
