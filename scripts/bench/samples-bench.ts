import type { SamplesReply } from '../../contracts/wire-sample.ts';
import { type SamplesOpPerformance, samplesOpSpeed } from '../../fakes/session/compose.ts';
import { promptIdsFromSnapshot } from '../../fakes/session/fast/prompt-ids-getter.ts';
import { defaultPostprocess } from '../../fakes/session/hooks/default-postprocess.ts';
import { dropRetries } from '../../fakes/session/hooks/drop-retries.ts';
import { DEFAULT_PICKER_PATH, DEFAULT_POSTPROCESSOR_PATH } from '../../fakes/session/hooks/types.ts';
import { collectSamples } from '../../fakes/session/samples-op.ts';
import { SessionState } from '../../fakes/session/state.ts';
import { addTurn } from '../../fakes/session/testing/build-tree.ts';
import { MAX_NODES, type TrajectoryNode } from '../../fakes/session/tree.ts';
import { decodeSamples, encodeSamples, samplesReplyStream } from '../../fakes/session/wire/codec.ts';
import { ReplyBufferPool } from '../../fakes/session/wire/reply-buffers.ts';
import { REPLY_CHUNK_BYTES } from '../../fakes/session/wire/send-stream.ts';
import { titoFamily } from '../../fakes/tokenizer/tito.ts';
import { WORD_BASE } from '../../fakes/tokenizer/toy-tokenizer.ts';

/**
 * The samples op on a large tree: `chains` independent chains of `turns` nodes each (the session's
 * node cap, 1024, by default), every turn adding `tokensPerTurn` tokens (half observation, half
 * completion) so each leaf holds `turns * tokensPerTurn` tokens (32k by default). Measures the server's
 * side (assembly, hooks, safetensors encoding) and the client's side (decoding) separately, median of
 * `repeats`.
 */

export interface SamplesBenchOptions {
  readonly chains: number;
  readonly turns: number;
  readonly tokensPerTurn: number;
  readonly repeats: number;
  /** Records whose `input_ids` is the node-snapshot getter the chat route installs (else a plain copy). */
  readonly snapshotRecords: boolean;
  /**
   * How the reply's bytes are made. `streamed`, as the samples route sends them: written in order
   * through chunks of `REPLY_CHUNK_BYTES` from a pool reused across repeats, each chunk copied into the
   * client's buffer and given back (the socket's write callback in the route); the copy is timed apart
   * and counted as the client's. `reused-buffer`: the whole reply in one buffer reused across repeats (how
   * the route sent replies before it streamed them); `fresh-buffer`: a fresh whole buffer every repeat. The
   * first repeat
   * always starts with an empty pool: `first_op_*`.
   */
  readonly reply: 'streamed' | 'reused-buffer' | 'fresh-buffer';
  /** The op's speed switches (default the server's: the fold as runs; fakes/session/samples-op.ts). */
  readonly performance?: SamplesOpPerformance;
}

export const DEFAULT_SAMPLES_BENCH: SamplesBenchOptions = {
  chains: 64,
  turns: MAX_NODES / 64,
  tokensPerTurn: 2048,
  repeats: 3,
  snapshotRecords: true,
  reply: 'streamed',
};

export interface SamplesBenchResult {
  readonly nodes: number;
  readonly leaves: number;
  readonly tokens_per_leaf: number;
  /** collectSamples + encodeSamples, what the server does per request: wall time, then CPU time. */
  readonly op_ms: number;
  readonly op_cpu_ms: number;
  /** The first repeat's collect + encode (an empty pool, as for a server's first samples request). */
  readonly first_op_ms: number;
  readonly first_op_cpu_ms: number;
  readonly collect_ms: number;
  readonly encode_ms: number;
  readonly decode_ms: number;
  /** The same three as process CPU time (user + system), which a shared machine disturbs less. */
  readonly collect_cpu_ms: number;
  readonly encode_cpu_ms: number;
  readonly decode_cpu_ms: number;
  readonly reply_mb: number;
}

// Word ids, so the toy tokenizer decodes them; spread over a range so the text is not one repeated word.
const word = (k: number) => WORD_BASE + (k % 5000);

function buildTree(o: SamplesBenchOptions): SessionState {
  const state = new SessionState('bench');
  const half = o.tokensPerTurn / 2;
  for (let c = 0; c < o.chains; c += 1) {
    let parent: TrajectoryNode | null = null;
    let prompt: number[] = [];
    for (let t = 0; t < o.turns; t += 1) {
      const base = (c * o.turns + t) * o.tokensPerTurn;
      const observation = Array.from({ length: half }, (_, k) => word(base + k));
      const output = Array.from({ length: half }, (_, k) => word(base + half + k));
      prompt = prompt.concat(observation);
      parent = addTurn(state.tree, parent, { prompt, output, responseId: `c${c}t${t}` });
      // As the chat route commits a record: `input_ids` read from the node's snapshot.
      if (o.snapshotRecords) promptIdsFromSnapshot(parent.record.request, parent.tokens, prompt.length);
      prompt = prompt.concat(output);
    }
  }
  return state;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const ms = (v: number) => Math.round(v * 10) / 10;

export function benchSamplesOp(o: SamplesBenchOptions = DEFAULT_SAMPLES_BENCH): SamplesBenchResult {
  const state = buildTree(o);
  const family = titoFamily('default');
  const hooks = {
    picker: dropRetries,
    postprocessor: defaultPostprocess,
    pickerPath: DEFAULT_PICKER_PATH,
    postprocessorPath: DEFAULT_POSTPROCESSOR_PATH,
  };
  const collect: number[] = [];
  const encode: number[] = [];
  const decode: number[] = [];
  const opCpu: number[] = [];
  const collectCpu: number[] = [];
  const encodeCpu: number[] = [];
  const decodeCpu: number[] = [];
  const cpuMs = (since: NodeJS.CpuUsage) => {
    const c = process.cpuUsage(since);
    return (c.user + c.system) / 1000;
  };
  const opWall: number[] = [];
  const buffers = o.reply === 'reused-buffer' ? new ReplyBufferPool() : null;
  const allocate = buffers === null ? undefined : (size: number) => buffers.take(size);
  const chunks = new ReplyBufferPool({ maxIdle: 4 });
  /**
   * The reply streamed as the route sends it: the server's part (the stream's set-up, each chunk's fill)
   * timed piece by piece, the client's (its buffer, each chunk's copy into it) left out of it.
   */
  let client = new Uint8Array(0);
  const streamed = (reply: SamplesReply) => {
    let c = process.cpuUsage();
    let t = performance.now();
    const stream = samplesReplyStream(reply);
    let serverMs = performance.now() - t;
    let serverCpuMs = cpuMs(c);
    // The client's buffer, kept across repeats (a fresh 64 MB each time would bring the collector into the server's part).
    if (client.length < stream.length) client = new Uint8Array(stream.length);
    const wire = client.subarray(0, stream.length);
    while (!stream.done) {
      const at = stream.position;
      c = process.cpuUsage();
      t = performance.now();
      const chunk = chunks.take(Math.min(REPLY_CHUNK_BYTES, stream.length - at));
      const n = stream.fill(chunk);
      serverMs += performance.now() - t;
      serverCpuMs += cpuMs(c);
      wire.set(chunk.subarray(0, n), at);
      chunks.give(chunk);
    }
    return { wire, serverMs, serverCpuMs };
  };
  let leaves = 0;
  let bytes = 0;
  for (let r = 0; r < o.repeats; r += 1) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const reply = collectSamples(
      state,
      family,
      hooks,
      { maxSeqLen: null, agentMetadata: { reward: 1 } },
      samplesOpSpeed(o.performance),
    );
    const t1 = performance.now();
    const c1 = process.cpuUsage();
    const t1c = performance.now();
    const sent = o.reply === 'streamed' ? streamed(reply) : null;
    const wire = sent?.wire ?? encodeSamples(reply, allocate);
    const t2 = performance.now();
    const c2 = process.cpuUsage();
    const decoded = decodeSamples(wire);
    const t3 = performance.now();
    // Sent and read: the route hands its buffer back at this point.
    buffers?.give(wire);
    // Streamed: the encode is the server's part alone; the client's buffer and copies count as its decode.
    const encodeMs = sent?.serverMs ?? t2 - t1c;
    const encodeCpuMs = sent?.serverCpuMs ?? cpuMs(c1) - cpuMs(c2);
    decodeCpu.push(cpuMs(c1) - encodeCpuMs);
    encodeCpu.push(encodeCpuMs);
    collectCpu.push(cpuMs(c0) - cpuMs(c1));
    opCpu.push(collectCpu.at(-1)! + encodeCpuMs);
    opWall.push(t1 - t0 + encodeMs);
    collect.push(t1 - t0);
    encode.push(encodeMs);
    decode.push(t3 - t1c - encodeMs);
    leaves = decoded.samples.length;
    bytes = wire.length;
  }
  return {
    nodes: state.tree.size,
    leaves,
    tokens_per_leaf: o.turns * o.tokensPerTurn,
    op_ms: ms(median(collect) + median(encode)),
    op_cpu_ms: ms(median(opCpu)),
    first_op_ms: ms(opWall[0] as number),
    first_op_cpu_ms: ms(opCpu[0] as number),
    collect_ms: ms(median(collect)),
    encode_ms: ms(median(encode)),
    decode_ms: ms(median(decode)),
    collect_cpu_ms: ms(median(collectCpu)),
    encode_cpu_ms: ms(median(encodeCpu)),
    decode_cpu_ms: ms(median(decodeCpu)),
    reply_mb: Math.round((bytes / 2 ** 20) * 10) / 10,
  };
}
