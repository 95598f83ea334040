import type { SamplesReply, WireSample } from '../../contracts/wire-sample.ts';
import type { TitoFamily } from '../tokenizer/tito.ts';
import { AssemblyError, buildLeafMaterial, type LeafTokenFieldsFor, plainLeafFields } from './assembly.ts';
import { internalServerError, plainError } from './errors.ts';
import type { SamplePicker, SamplePostprocessor } from './hooks/types.ts';
import { LeafMismatchMemo } from './mismatch.ts';
import { buildSessionMetadata, type SessionMetadata } from './session-metadata.ts';
import type { SessionState } from './state.ts';

/**
 * `POST /sessions/{id}/samples` after the route has parsed the body (radixark/miles@31f1ca96
 * miles/rollout/session/v2/core.py `SessionCoreV2.collect_samples`): session metadata (plus
 * `agent`), empty reasons, per-leaf assembly, then the picker and postprocessor. Synchronous, so it is
 * atomic with respect to chats, and idempotent: the tree is never touched.
 */

export interface SampleHooks {
  readonly picker: SamplePicker;
  readonly postprocessor: SamplePostprocessor;
  /** Names used in hook-failure texts (Miles prints the import paths). */
  readonly pickerPath: string;
  readonly postprocessorPath: string;
}

export const PICK_CONTRACT_ERROR =
  'pick hook must return a subset of its input samples without duplicates (pure selection)';

export interface SamplesRequest {
  readonly maxSeqLen: number | null;
  /** The agent metadata; `undefined` when the request carried none (or null). */
  readonly agentMetadata: unknown;
  /** The profile switch `turnArgs`: `turn_args` in the session and sample metadata and the tree (turn-args.ts). */
  readonly turnArgs?: boolean;
  /** The profile switch `samplesWire: 'spans'` (weight-version-spans.ts). */
  readonly weightVersionSpans?: boolean;
}

/** The op's speed (compose.ts plugs in the server's); the default is Miles' rule, plain lists. */
export interface SamplesOpSpeed {
  /** How each leaf's per-token fields are made (assembly.ts `LeafTokenFields`). */
  readonly leafFields: LeafTokenFieldsFor;
}

const MILES_SAMPLES_SPEED: SamplesOpSpeed = { leafFields: plainLeafFields };

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Enforces the picker contract: a subset of the input, by identity, without duplicates. */
function checkPickContract(input: readonly WireSample[], picked: unknown): WireSample[] {
  if (!Array.isArray(picked)) throw new TypeError(PICK_CONTRACT_ERROR);
  const allowed = new Set(input);
  const seen = new Set<WireSample>();
  for (const s of picked as WireSample[]) {
    if (!allowed.has(s) || seen.has(s)) throw new TypeError(PICK_CONTRACT_ERROR);
    seen.add(s);
  }
  return picked as WireSample[];
}

export function collectSamples(
  state: SessionState,
  family: TitoFamily,
  hooks: SampleHooks,
  request: SamplesRequest,
  speed: SamplesOpSpeed = MILES_SAMPLES_SPEED,
): SamplesReply {
  // The active leaf's comparison is made once for the metadata and reused for its sample when it can be.
  const mismatches = new LeafMismatchMemo(family);
  const turnArgs = request.turnArgs ?? false;
  const sessionMetadata: SessionMetadata = buildSessionMetadata(state, family, mismatches, turnArgs);
  if (request.agentMetadata !== undefined && request.agentMetadata !== null) {
    sessionMetadata.agent = request.agentMetadata;
  }
  const empty = (emptyReason: 'no_records' | 'all_truncated'): SamplesReply => ({
    samples: [],
    sessionMetadata,
    emptyReason,
  });
  if (state.tree.size === 0) return empty('no_records');

  let material: WireSample[];
  try {
    material = buildLeafMaterial(state.tree, family, request.maxSeqLen, mismatches, speed.leafFields, {
      turnArgs,
      weightVersionSpans: request.weightVersionSpans ?? false,
    });
  } catch (error) {
    if (error instanceof AssemblyError) throw plainError(422, error.message);
    throw internalServerError(error);
  }
  if (material.length === 0) return empty('all_truncated');

  let processed: unknown;
  try {
    const picked = checkPickContract(material, hooks.picker(material, sessionMetadata));
    processed = hooks.postprocessor(picked, sessionMetadata);
  } catch (error) {
    throw plainError(
      422,
      `session sample hook failed (picker=${hooks.pickerPath}, postprocessor=${hooks.postprocessorPath}): ${errorText(error)}`,
    );
  }
  if (processed === null || processed === undefined || (Array.isArray(processed) && processed.length === 0)) {
    return empty('all_truncated');
  }
  if (!Array.isArray(processed)) throw internalServerError('postprocessor returned a non-list');
  return { samples: processed as WireSample[], sessionMetadata, emptyReason: null };
}
