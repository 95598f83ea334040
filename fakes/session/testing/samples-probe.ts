import { createHash } from 'node:crypto';
import type { SamplesReply } from '../../../contracts/wire-sample.ts';
import { type TitoModel, titoFamily } from '../../tokenizer/tito.ts';
import { WORD_BASE } from '../../tokenizer/toy-tokenizer.ts';
import { type SamplesOpPerformance, samplesOpSpeed } from '../compose.ts';
import { HttpFailure } from '../errors.ts';
import { promptIdsFromSnapshot } from '../fast/prompt-ids-getter.ts';
import { defaultPostprocess } from '../hooks/default-postprocess.ts';
import { dropRetries } from '../hooks/drop-retries.ts';
import { DEFAULT_PICKER_PATH, DEFAULT_POSTPROCESSOR_PATH } from '../hooks/types.ts';
import { collectSamples } from '../samples-op.ts';
import { SessionState } from '../state.ts';
import type { TrajectoryNode } from '../tree.ts';
import { decodeSamples, encodeSamples } from '../wire/codec.ts';
import type { Allocate } from '../wire/safetensors.ts';
import { addTurn } from './build-tree.ts';

/**
 * Seeded trees for the samples op's byte-identity probe (docs/performance.md): branches, retries,
 * glm47 trims, `max_seq_len` cuts, aborted and truncated turns, words the tokenizer learned (non-ASCII,
 * quotes, backslashes, control characters), special and unknown ids, records whose `input_ids` read
 * the node's snapshot (as the chat route commits them) or hold a plain copy. `probeDigest` is the sha256
 * of the whole outcome: the reply's wire bytes and its decoded samples, or the error's status and text.
 */

/** A small deterministic generator (mulberry32), so a seed names one tree on every run. */
function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    int: (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1)),
    chance: (p: number) => next() < p,
  };
}

const WORDS =
  'héllo wörld "quoted" back\\slash tab\u0001ctl 日本語 😀 emoji\u2028sep plain words here 0.5 -0 null';

export interface ProbeOutcome {
  readonly digest: string;
  /** A short description (for a failing test's message): sample count and reply size, or the error. */
  readonly summary: string;
}

/**
 * `allocate`: where the reply is encoded (default a fresh buffer; the reply-buffer test passes reused,
 * dirtied ones); `encode`: the encoder itself (default `encodeSamples`; the stream test passes one that
 * streams through small chunks); `performance`: the op's speed switches (default the server's).
 */
export function probeOutcome(
  seed: number,
  allocate?: Allocate,
  encode: (reply: SamplesReply, allocate?: Allocate) => Uint8Array = encodeSamples,
  performance: SamplesOpPerformance = {},
): ProbeOutcome {
  const r = rng(seed);
  const model: TitoModel = r.chance(0.4) ? 'glm47' : 'default';
  const family = titoFamily(model);
  const known = family.tokenizer.encodeText(WORDS);
  const stop = model === 'glm47' ? 4 : 3;
  // Seeds above 1000 grow long chains (hundreds of ids a turn), the shape the samples bench measures.
  const large = seed > 1000;
  const id = () => {
    const roll = r.int(0, 9);
    // Rare ids the backend may send that are not 32-bit integers: -0 (kept) and a float (refused on the wire).
    if (!large && r.chance(0.004)) return r.chance(0.7) ? -0 : 7.5;
    if (roll === 0) return r.int(0, WORD_BASE - 1);
    if (roll <= 5) return known[r.int(0, known.length - 1)] as number;
    return WORD_BASE + r.int(0, 40_000);
  };
  const ids = (n: number) => Array.from({ length: n }, id);
  const state = new SessionState(`probe-${seed}`);
  const nodes: TrajectoryNode[] = [];
  const snapshotRecords = r.chance(0.6);
  const turns = large ? r.int(20, 40) : r.int(1, 14);
  const width = large ? 300 : 6;
  for (let t = 0; t < turns; t += 1) {
    const parent =
      nodes.length > 0 && r.chance(0.85)
        ? (nodes[
            large ? Math.max(0, nodes.length - r.int(1, 2)) : r.int(0, nodes.length - 1)
          ] as TrajectoryNode)
        : null;
    let prompt = parent === null ? ids(r.int(1, 6)) : parent.tokens.toArray();
    // glm47 drops the parent's trailing opener (a trim of one output id); other families keep it.
    if (parent !== null && model === 'glm47' && r.chance(0.5) && prompt.at(-1) === stop)
      prompt = prompt.slice(0, -1);
    // Rarely a prompt that does not extend its parent's snapshot (a broken chain: Miles' 422).
    if (prompt.length > 0 && r.chance(large ? 0.005 : 0.03))
      prompt[r.int(0, prompt.length - 1)] = WORD_BASE + 1;
    prompt = prompt.concat(ids(r.int(1, width - 1)));
    const output = ids(r.int(1, width));
    if (r.chance(0.5)) output.push(stop);
    const finish = r.chance(0.85) ? 'stop' : r.chance(0.5) ? 'length' : 'abort';
    const node = addTurn(state.tree, parent, {
      prompt,
      output,
      logprobs: output.map((_, k) => (r.chance(0.1) ? -0 : -((k + 1) * r.int(1, 997)) / 1024)),
      finish,
      ...(r.chance(0.5) ? { weightVersion: `w${r.int(0, 3)}` } : {}),
      ...(r.chance(0.5) ? { cachedTokens: r.int(0, 9), promptTokens: prompt.length } : {}),
      timestamp: 1000 + t * 1.5,
    });
    if (snapshotRecords) promptIdsFromSnapshot(node.record.request, node.tokens, prompt.length);
    nodes.push(node);
  }
  const maxSeqLen = r.chance(0.3) ? r.int(2, large ? 6000 : 60) : null;
  const agentMetadata = r.chance(0.7)
    ? { reward: r.int(0, 2) / 2, note: r.chance(0.05) ? 'lone \ud800' : 'ünïcode', leaf: 'agent' }
    : undefined;
  const hash = createHash('sha256');
  let summary: string;
  try {
    const reply = collectSamples(
      state,
      family,
      {
        picker: dropRetries,
        postprocessor: defaultPostprocess,
        pickerPath: DEFAULT_PICKER_PATH,
        postprocessorPath: DEFAULT_POSTPROCESSOR_PATH,
      },
      { maxSeqLen, agentMetadata },
      samplesOpSpeed(performance),
    );
    const wire = encode(reply, allocate);
    hash.update(wire);
    const decoded = decodeSamples(wire);
    hash.update(
      JSON.stringify(decoded, (_k, v) => (typeof v === 'number' && !Number.isFinite(v) ? String(v) : v)),
    );
    summary = `${decoded.samples.length} samples, ${wire.length} bytes`;
  } catch (error) {
    const status = error instanceof HttpFailure ? error.status : 'thrown';
    const text =
      error instanceof HttpFailure ? error.body : error instanceof Error ? error.message : String(error);
    hash.update(`error ${status} ${text}`);
    summary = `error ${status}: ${text.slice(0, 80)}`;
  }
  return { digest: hash.digest('hex'), summary };
}
