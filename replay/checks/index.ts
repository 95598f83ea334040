/**
 * The checks API (issue 6): six named invariant checks over replay data or converted Miles dumps.
 * Build a `CheckData` (use `groupsFromFlatSamples` for flattened dump rows), then call
 * `runApplicableChecks`: it runs what the data supports and lists the rest with what they lack.
 */

export { retainedRollouts, retainedRows } from '../model/retained.ts';
export { agentMetricsLoggedCheck } from './agent-metrics-logged.ts';
export { everySampleTrainableCheck } from './every-sample-trainable.ts';
export {
  EVIDENCE_KINDS,
  type Evidence,
  type EvidenceKind,
  EvidenceSchema,
} from './evidence-schema.ts';
export { exactlyOnceCheck } from './exactly-once.ts';
export { groupsFromFlatSamples } from './flat-samples.ts';
export { groupAccountingCheck } from './group-accounting.ts';
export { availableInputs } from './inputs.ts';
export { onlyGeneratedTrainedCheck } from './only-generated-trained.ts';
export { passAtKGroupsCheck } from './pass-at-k-groups.ts';
export { ALL_CHECKS, type CheckRun, runApplicableChecks } from './run-checks.ts';
export { segmentationInvarianceCheck } from './segmentation-invariance.ts';
export { sessionAffinityCheck } from './session-affinity.ts';
export { siblingsAgreeCheck } from './siblings-agree.ts';
export { titoSessionConsistentCheck } from './tito-session-consistent.ts';
export {
  type CheckData,
  type CheckInput,
  CheckInputSchema,
  type CheckName,
  CheckNameSchema,
  type CheckResult,
  CheckResultSchema,
  type CheckStep,
  type InvariantCheck,
  type SkippedCheck,
  SkippedCheckSchema,
  type Verdict,
  VerdictSchema,
} from './types.ts';
