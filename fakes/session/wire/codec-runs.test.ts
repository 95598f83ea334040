import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { SamplesReply, WireSample } from '../../../contracts/wire-sample.ts';
import { wildString } from '../../../test/helpers/text-arbitraries.ts';
import { deferredSource, defineDeferred } from '../values/deferred-field.ts';
import { type NumberRun, NumberRuns } from '../values/number-runs.ts';
import { TextPieces } from '../values/text-pieces.ts';
import { encodeSamples } from './codec.ts';
import { metaTensor } from './meta-text.ts';

/**
 * The samples op hands the codec samples whose per-token fields are deferred (runs and text pieces,
 * never joined). The oracle is the joined path: the same samples with every field read as a plain value
 * (what the codec encoded before the samples op's speed work), which must give the same bytes, or the same
 * error.
 */

const int32 = fc.oneof(
  fc.integer({ min: -3, max: 200_000 }),
  fc.constantFrom(-(2 ** 31), 2 ** 31 - 1, -1, 0),
);
const oddNumber = fc.constantFrom(
  -0,
  0.5,
  2 ** 40,
  2 ** 53,
  -(2 ** 33),
  Number.NaN,
  Number.POSITIVE_INFINITY,
);

function runs(values: fc.Arbitrary<number>, int32Stores: boolean, fills: readonly number[]) {
  const stored = fc
    .tuple(fc.array(values, { minLength: 1, maxLength: 8 }), fc.nat({ max: 3 }), fc.nat({ max: 3 }))
    .map(([xs, a, b]): NumberRun => {
      const data =
        int32Stores && xs.every((v) => (v | 0) === v && !Object.is(v, -0)) ? Int32Array.from(xs) : xs;
      return {
        data,
        from: Math.min(a, xs.length - 1),
        to: Math.max(xs.length - b, Math.min(a, xs.length - 1) + 1),
      };
    });
  const fill = fc.record({ fill: fc.constantFrom(...fills), count: fc.nat({ max: 4 }) });
  return fc.array(fc.oneof({ weight: 3, arbitrary: stored }, { weight: 1, arbitrary: fill }), {
    maxLength: 5,
  });
}

const tokenRuns = runs(
  fc.oneof({ weight: 12, arbitrary: int32 }, { weight: 1, arbitrary: oddNumber }),
  true,
  [7],
);
const maskRuns = runs(
  fc.oneof(
    { weight: 20, arbitrary: fc.constantFrom(0, 1) },
    { weight: 1, arbitrary: fc.constantFrom(2, 255, 256, -1, 0.5) },
  ),
  false,
  [0, 1],
);
const probRuns = runs(fc.oneof(fc.double(), oddNumber), false, [0]);
// Texts with every escape class; a lone surrogate is rare, a pair split across two pieces may occur.
const texts = fc.array(
  fc.oneof(
    {
      weight: 8,
      arbitrary: fc.string({
        unit: fc.constantFrom('a', ' ', '"', '\\', '\n', '\u0001', 'é', '日', '😀', '<tok:1>'),
      }),
    },
    { weight: 1, arbitrary: wildString({ maxLength: 4 }) },
    { weight: 1, arbitrary: fc.constantFrom('x\ud83d', '\ude00y') },
  ),
  { maxLength: 5 },
);

const sampleSpec = fc.record({
  tokens: tokenRuns,
  mask: fc.option(maskRuns),
  probs: fc.option(probRuns),
  response: fc.option(texts),
  ids: fc.option(tokenRuns),
  note: fc.string({ maxLength: 6 }),
});

type Spec = typeof sampleSpec extends fc.Arbitrary<infer T> ? T : never;

const toArray = (r: NumberRuns) => r.toArray();

/** A sample as the samples op builds it: fields deferred where the spec gives runs. */
function deferredSample(spec: Spec): WireSample {
  const s: WireSample = {
    tokens: [],
    response: 'plain',
    response_length: 1,
    loss_mask: [1],
    rollout_log_probs: [-0.5],
    rollout_routed_experts: null,
    rollout_indexer_topk: null,
    status: 'completed',
    weight_versions: ['w'],
    prefix_cache_info: { cached_tokens: 0, total_prompt_tokens: 1 },
    metadata: {},
    reward: null,
  };
  defineDeferred(s, 'tokens', new NumberRuns(spec.tokens), toArray);
  if (spec.mask !== null) defineDeferred(s, 'loss_mask', new NumberRuns(spec.mask), toArray);
  if (spec.probs !== null) defineDeferred(s, 'rollout_log_probs', new NumberRuns(spec.probs), toArray);
  if (spec.response !== null) defineDeferred(s, 'response', new TextPieces(spec.response), (t) => t.join());
  const metadata: Record<string, unknown> = {
    lifecycle: [{ t0: 1.5 }],
    accumulated_token_ids: [],
    note: spec.note,
  };
  if (spec.ids !== null) defineDeferred(metadata, 'accumulated_token_ids', new NumberRuns(spec.ids), toArray);
  s.metadata = metadata;
  return s;
}

/** The same sample with every field read (so the codec sees plain values only). */
const readAll = (s: WireSample): WireSample => ({ ...s, metadata: { ...s.metadata } });

function outcome(encode: () => Uint8Array): string {
  try {
    return Buffer.from(encode()).toString('base64');
  } catch (error) {
    return `${(error as Error).name}: ${(error as Error).message}`;
  }
}

const replyOf = (samples: WireSample[]): SamplesReply => ({
  samples,
  sessionMetadata: { tree: { nodes: [], leaves: [] }, accumulated_token_ids: [1, 2], note: 'ü' },
  emptyReason: null,
});

describe('samples codec: deferred fields written from their runs', () => {
  it('gives the bytes (or the error) of the same samples with every field read', () => {
    let streamed = 0;
    let runsTotal = 0;
    fc.assert(
      fc.property(fc.array(sampleSpec, { minLength: 1, maxLength: 3 }), (specs) => {
        runsTotal += 1;
        const samples = specs.map(deferredSample);
        const fromRuns = outcome(() => encodeSamples(replyOf(samples)));
        // Still deferred after encoding: the runs path wrote them (the joined path reads every field).
        if (samples.every((s) => deferredSource(s, 'tokens') !== undefined)) streamed += 1;
        const joined = outcome(() => encodeSamples(replyOf(samples.map(readAll))));
        expect(fromRuns).toBe(joined);
      }),
      { numRuns: 300 },
    );
    // About a third of the generated replies stay on the runs path (the rest hold a value it refuses).
    expect(streamed).toBeGreaterThan(runsTotal / 10);
  });
});

describe('metaTensor', () => {
  const placeholder = (k: number) => `P${k}`;
  const write = (t: NonNullable<ReturnType<typeof metaTensor>>) => {
    const out = new Uint8Array(t.length);
    t.open().write(out, 0, out.length);
    return Buffer.from(out).toString('utf8');
  };

  it('splices each value in place of its quoted placeholder', () => {
    const runs = new NumberRuns([
      { data: Int32Array.of(-(2 ** 31), 0, 42), from: 0, to: 3 },
      { fill: -0, count: 1 },
    ]);
    const t = metaTensor('{"a":"P0","b":["P1"]}', placeholder, [new TextPieces(['x"', 'é']), runs]);
    expect(t).not.toBeNull();
    expect(write(t!)).toBe('{"a":"x\\"é","b":[[-2147483648,0,42,-0.0]]}');
  });

  it('refuses a text where a placeholder occurs twice, is missing, or a piece is not well-formed', () => {
    const one = [new TextPieces(['x'])];
    expect(metaTensor('["P0","P0"]', placeholder, one)).toBeNull();
    expect(metaTensor('["Q0"]', placeholder, one)).toBeNull();
    expect(metaTensor('["P0"]', placeholder, [new TextPieces(['\ud800'])])).toBeNull();
    expect(metaTensor('["\ud800","P0"]', placeholder, one)).toBeNull();
  });
});
