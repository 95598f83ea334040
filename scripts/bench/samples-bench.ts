import { defaultPostprocess } from '../../fakes/session/hooks/default-postprocess.ts';
import { dropRetries } from '../../fakes/session/hooks/drop-retries.ts';
import { DEFAULT_PICKER_PATH, DEFAULT_POSTPROCESSOR_PATH } from '../../fakes/session/hooks/types.ts';
import { promptIdsFromSnapshot } from '../../fakes/session/record.ts';
import { collectSamples } from '../../fakes/session/samples-op.ts';
import { SessionState } from '../../fakes/session/state.ts';
import { addTurn } from '../../fakes/session/testing/build-tree.ts';
import { MAX_NODES, type TrajectoryNode } from '../../fakes/session/tree.ts';
import { decodeSamples, encodeSamples } from '../../fakes/session/wire/codec.ts';
import { ReplyBufferPool } from '../../fakes/session/wire/reply-buffers.ts';
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
   * Encode into reply buffers reused across repeats, each given back once the client side has decoded
   * it, as the server's samples route does across requests (`wire/reply-buffers.ts`); else a fresh
   * buffer each time. The first repeat always starts with no idle buffer: `first_op_*`.
   */
  readonly reuseReplyBuffer: boolean;
}

export const DEFAULT_SAMPLES_BENCH: SamplesBenchOptions = {
  chains: 64,
  turns: MAX_NODES / 64,
  tokensPerTurn: 2048,
  repeats: 3,
  snapshotRecords: true,
  reuseReplyBuffer: true,
};

export interface SamplesBenchResult {
  readonly nodes: number;
  readonly leaves: number;
  readonly tokens_per_leaf: number;
  /** collectSamples + encodeSamples, what the server does per request: wall time, then CPU time. */
  readonly op_ms: number;
  readonly op_cpu_ms: number;
  /** The first repeat's collect + encode (a fresh reply buffer, as for a server's first samples request). */
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
  const buffers = o.reuseReplyBuffer ? new ReplyBufferPool() : null;
  const allocate = buffers === null ? undefined : (size: number) => buffers.take(size);
  let leaves = 0;
  let bytes = 0;
  for (let r = 0; r < o.repeats; r += 1) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    const reply = collectSamples(state, family, hooks, { maxSeqLen: null, agentMetadata: { reward: 1 } });
    const t1 = performance.now();
    const c1 = process.cpuUsage();
    const wire = encodeSamples(reply, allocate);
    const t2 = performance.now();
    const c2 = process.cpuUsage();
    const decoded = decodeSamples(wire);
    const t3 = performance.now();
    // Sent and read: the route hands its buffer back at this point.
    buffers?.give(wire);
    decodeCpu.push(cpuMs(c2));
    encodeCpu.push(cpuMs(c1) - decodeCpu.at(-1)!);
    opCpu.push(cpuMs(c0) - decodeCpu.at(-1)!);
    collectCpu.push(opCpu.at(-1)! - encodeCpu.at(-1)!);
    opWall.push(t2 - t0);
    collect.push(t1 - t0);
    encode.push(t2 - t1);
    decode.push(t3 - t2);
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
