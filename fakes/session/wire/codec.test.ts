import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isHarnessError } from '../../../common/errors.ts';
import type { SamplesReply, WireSample } from '../../../contracts/wire-sample.ts';
import {
  countTextClasses,
  stringsIn,
  textClasses,
  wildJsonValue,
  wildString,
} from '../../../test/helpers/text-arbitraries.ts';
import { decodeSamples, encodeSamples, META_TENSOR } from './codec.ts';
import { decodeSafetensors, encodeSafetensors, type Tensor } from './safetensors.ts';

const tree = { nodes: [], leaves: [] };

function sample(overrides: Partial<WireSample> = {}): WireSample {
  return {
    tokens: [1, 2, 3, 10, 11],
    response: '10 11',
    response_length: 2,
    loss_mask: [1, 1],
    rollout_log_probs: [-0.5, -0.25],
    rollout_routed_experts: null,
    rollout_indexer_topk: null,
    status: 'completed',
    weight_versions: ['w1'],
    prefix_cache_info: { cached_tokens: 0, total_prompt_tokens: 3 },
    metadata: { leaf: { node_id: 0 } },
    reward: 1.5,
    ...overrides,
  };
}

function reply(samples: WireSample[]): SamplesReply {
  return { samples, sessionMetadata: { tree, max_trim_tokens: 0 }, emptyReason: null };
}

/** Re-encodes a valid reply after editing its tensors, to build malformed inputs. */
function tamper(edit: (tensors: Map<string, Tensor>, meta: Record<string, unknown>) => void): Uint8Array {
  const tensors = decodeSafetensors(encodeSamples(reply([sample()])));
  const metaTensor = tensors.get(META_TENSOR)!;
  const meta = JSON.parse(Buffer.from(metaTensor.data).toString('utf8'));
  edit(tensors, meta);
  const bytes = [...Buffer.from(JSON.stringify(meta), 'utf8')];
  if (tensors.has(META_TENSOR) && tensors.get(META_TENSOR) === metaTensor) {
    tensors.set(META_TENSOR, { dtype: 'U8', shape: [bytes.length], data: bytes });
  }
  return encodeSafetensors(tensors);
}

function reason(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return isHarnessError(error) ? error.details.reason : `not a harness error: ${String(error)}`;
  }
  return 'no error';
}

const int32Tensor = fc.array(fc.integer({ min: 1, max: 3 }), { minLength: 1, maxLength: 3 }).chain((shape) =>
  fc.record({
    shape: fc.constant(shape),
    data: fc.array(fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }), {
      minLength: shape.reduce((a, b) => a * b, 1),
      maxLength: shape.reduce((a, b) => a * b, 1),
    }),
  }),
);
const jsonValue = wildJsonValue().map((v) => JSON.parse(JSON.stringify(v)) as unknown);

const wireSample: fc.Arbitrary<WireSample> = fc.record({
  tokens: fc.array(fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 }), { maxLength: 20 }),
  response: wildString(),
  response_length: fc.nat(1000),
  loss_mask: fc.option(fc.array(fc.integer({ min: 0, max: 255 }), { maxLength: 20 }), { nil: null }),
  rollout_log_probs: fc.option(
    fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { maxLength: 20 }),
    {
      nil: null,
    },
  ),
  rollout_routed_experts: fc.option(int32Tensor, { nil: null }),
  rollout_indexer_topk: fc.option(int32Tensor, { nil: null }),
  status: fc.constantFrom('pending', 'completed', 'truncated', 'aborted', 'failed'),
  weight_versions: fc.array(wildString(), { maxLength: 3 }),
  prefix_cache_info: fc.record({ cached_tokens: fc.nat(), total_prompt_tokens: fc.nat() }),
  metadata: fc.dictionary(wildString(), jsonValue, { maxKeys: 4 }),
  reward: fc.option(jsonValue, { nil: null }),
});

describe('samples wire codec', () => {
  it('fuzzes with non-ASCII, non-BMP and lone-surrogate text (the property below would not otherwise)', () => {
    const seen = countTextClasses(fc.sample(wireSample, { numRuns: 300, seed: 13 }));
    expect(seen.nonAscii).toBeGreaterThan(100);
    expect(seen.nonBmp).toBeGreaterThan(50);
    expect(seen.loneSurrogate).toBeGreaterThan(20);
  });

  it('round-trips any reply (property)', () => {
    fc.assert(
      fc.property(
        fc.array(wireSample, { maxLength: 4 }),
        fc.constantFrom(null, 'no_records', 'all_truncated'),
        (samples, emptyReason) => {
          const sent: SamplesReply = { samples, sessionMetadata: { tree, agent: { x: 'é' } }, emptyReason };
          // Miles' `.encode("utf-8")` refuses a lone surrogate; the fake must too (not send U+FFFD).
          if (textClasses(stringsIn(samples).join('\n')).loneSurrogate) {
            expect(reason(() => encodeSamples(sent))).toBe('utf8');
            return;
          }
          const back = decodeSamples(encodeSamples(sent));
          expect(back.samples).toEqual(samples);
          expect(back.emptyReason).toBe(emptyReason);
          expect(back.sessionMetadata).toEqual(sent.sessionMetadata);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("refuses a lone surrogate with CPython's UnicodeEncodeError message (python3 is the oracle)", () => {
    let message = '';
    try {
      encodeSamples(reply([sample({ metadata: { note: '\u{1F600}x\ud800' } })]));
    } catch (error) {
      message = (error as Error).message;
    }
    // The meta text with a marker where the surrogate goes; CPython puts it in and encodes as codec.py does.
    const marked = decodeSafetensors(encodeSamples(reply([sample({ metadata: { note: '\u{1F600}x@' } })])));
    const metaText = Buffer.from(marked.get(META_TENSOR)!.data).toString('utf8');
    const python = execFileSync(
      '/usr/bin/python3',
      [
        '-c',
        'import sys\ntry: sys.argv[1].replace("x@", "x\\ud800").encode("utf-8")\nexcept UnicodeEncodeError as e: print(e)',
        metaText,
      ],
      { encoding: 'utf8', env: { ...process.env, PYTHONIOENCODING: 'utf-8' } },
    ).trim();
    expect(python).toContain('surrogates not allowed');
    expect(message.endsWith(`samples wire: ${python}`)).toBe(true);
  });

  it("uses Miles' dtypes, tensor names and null markers", () => {
    const tensors = decodeSafetensors(encodeSamples(reply([sample()])));
    expect([...tensors.keys()].sort()).toEqual([
      '_samples_meta',
      'loss_mask.0',
      'rollout_log_probs.0',
      'tokens.0',
    ]);
    expect(tensors.get('tokens.0')!.dtype).toBe('I64');
    expect(tensors.get('loss_mask.0')!.dtype).toBe('U8');
    expect(tensors.get('rollout_log_probs.0')!.dtype).toBe('F64');
    const meta = JSON.parse(Buffer.from(tensors.get(META_TENSOR)!.data).toString('utf8'));
    expect(Object.keys(meta)).toEqual(['samples', 'session_metadata', 'empty_reason']);
    expect(Object.keys(meta.samples[0])).toEqual([
      'response',
      'response_length',
      'status',
      'weight_versions',
      'prefix_cache_info',
      'metadata',
      'reward',
      'nulls',
    ]);
    expect(meta.samples[0].nulls).toEqual(['rollout_routed_experts', 'rollout_indexer_topk']);
  });

  it('encodes an empty reply as the meta tensor alone', () => {
    const bytes = encodeSamples({ samples: [], sessionMetadata: { tree }, emptyReason: 'no_records' });
    expect([...decodeSafetensors(bytes).keys()]).toEqual([META_TENSOR]);
    expect(decodeSamples(bytes)).toEqual({
      samples: [],
      sessionMetadata: { tree },
      emptyReason: 'no_records',
    });
  });

  it('refuses values the wire dtypes cannot hold', () => {
    expect(() => encodeSamples(reply([sample({ loss_mask: [1, -1] })]))).toThrow(
      'loss_mask values do not fit wire dtype uint8',
    );
    expect(() =>
      encodeSamples(reply([sample({ rollout_routed_experts: { shape: [1], data: [2 ** 31] } })])),
    ).toThrow('int32');
  });

  it.each([
    ['missing promised tensor', (t: Map<string, Tensor>) => t.delete('tokens.0'), 'missing_tensor'],
    [
      'wrong dtype',
      (t: Map<string, Tensor>) => t.set('loss_mask.0', { dtype: 'I64', shape: [2], data: [1, 1] }),
      'dtype',
    ],
    [
      'wrong rank',
      (t: Map<string, Tensor>) => t.set('tokens.0', { dtype: 'I64', shape: [1, 5], data: [1, 2, 3, 4, 5] }),
      'shape',
    ],
    [
      'leftover tensor',
      (t: Map<string, Tensor>) => t.set('extra.0', { dtype: 'U8', shape: [1], data: [1] }),
      'leftover_tensor',
    ],
    [
      'replay tensor not int32',
      (t: Map<string, Tensor>, m: Record<string, unknown>) => {
        (m.samples as Array<{ nulls: string[] }>)[0]!.nulls = ['rollout_indexer_topk'];
        t.set('rollout_routed_experts.0', { dtype: 'I64', shape: [1], data: [1] });
      },
      'dtype',
    ],
    [
      'null marker on a JSON field',
      (_t: Map<string, Tensor>, m: Record<string, unknown>) => {
        (m.samples as Array<{ nulls: string[] }>)[0]!.nulls.push('response');
      },
      'nulls',
    ],
    [
      'metadata not an object',
      (_t: Map<string, Tensor>, m: Record<string, unknown>) => {
        (m.samples as Array<Record<string, unknown>>)[0]!.metadata = [1];
      },
      'metadata',
    ],
    [
      'missing JSON field',
      (_t: Map<string, Tensor>, m: Record<string, unknown>) => {
        delete (m.samples as Array<Record<string, unknown>>)[0]!.reward;
      },
      'field',
    ],
    [
      'invalid status',
      (_t: Map<string, Tensor>, m: Record<string, unknown>) => {
        (m.samples as Array<Record<string, unknown>>)[0]!.status = 'done';
      },
      'status',
    ],
    ['missing meta', (t: Map<string, Tensor>) => t.delete(META_TENSOR), 'meta'],
    [
      'meta of the wrong dtype',
      (t: Map<string, Tensor>) => t.set(META_TENSOR, { dtype: 'I32', shape: [1], data: [1] }),
      'meta',
    ],
  ])('refuses a reply with a %s', (_name, edit, expected) => {
    expect(reason(() => decodeSamples(tamper(edit)))).toBe(expected);
  });

  it('names the first invalid field as a whole schema parse does (tensor values and JSON fields)', () => {
    const message = (fn: () => unknown) => {
      try {
        fn();
      } catch (error) {
        return (error as Error).message;
      }
      return 'no error';
    };
    // A NaN log-prob: the F64 tensor is the one tensor the dtype does not make valid.
    const nan = tamper((t) =>
      t.set('rollout_log_probs.0', { dtype: 'F64', shape: [2], data: [-0.5, Number.NaN] }),
    );
    expect(message(() => decodeSamples(nan))).toMatch(/samples wire: sample 0: rollout_log_probs\.1 /);
    // A bad JSON field after the tensors in schema order, with valid tensors.
    const length = tamper((_t, m) => {
      (m.samples as Array<Record<string, unknown>>)[0]!.response_length = -1;
    });
    expect(message(() => decodeSamples(length))).toMatch(/samples wire: sample 0: response_length /);
  });

  /** The error a decode raises: its reason and its message (which must name what is wrong). */
  function failure(fn: () => unknown): { reason: unknown; message: string } {
    try {
      fn();
    } catch (error) {
      if (!isHarnessError(error)) return { reason: `not a harness error: ${String(error)}`, message: '' };
      return { reason: error.details.reason, message: error.message };
    }
    return { reason: 'no error', message: '' };
  }
  const metaBytes = (text: string | number[]) => (t: Map<string, Tensor>) => {
    const bytes = typeof text === 'string' ? [...Buffer.from(text, 'utf8')] : text;
    t.set(META_TENSOR, { dtype: 'U8', shape: [bytes.length], data: bytes });
  };
  const goodMeta = () => {
    const t = decodeSafetensors(encodeSamples(reply([sample()])));
    return JSON.parse(Buffer.from(t.get(META_TENSOR)!.data).toString('utf8')) as Record<string, unknown>;
  };
  const firstSample = (m: Record<string, unknown>) => (m.samples as Array<Record<string, unknown>>)[0]!;

  it.each([
    ['no meta tensor', (t: Map<string, Tensor>) => t.delete(META_TENSOR), 'meta', /missing _samples_meta/],
    [
      'a 2-D meta tensor',
      (t: Map<string, Tensor>) => {
        const data = [...Buffer.from(JSON.stringify(goodMeta()), 'utf8')];
        t.set(META_TENSOR, { dtype: 'U8', shape: [1, data.length], data });
      },
      'meta',
      /_samples_meta must be a 1-D U8 tensor/,
    ],
    [
      'a meta tensor of another dtype',
      (t: Map<string, Tensor>) => t.set(META_TENSOR, { dtype: 'I32', shape: [1], data: [0x7b] }),
      'meta',
      /_samples_meta must be a 1-D U8 tensor/,
    ],
    ['meta that is not JSON', metaBytes('{"samples": ['), 'meta', /_samples_meta is not UTF-8 JSON \(.+\)/],
    [
      'meta that is not UTF-8 (a 0xff byte inside a string)',
      (t: Map<string, Tensor>) => {
        const text = JSON.stringify({ ...goodMeta(), pad: 'XX' });
        const bytes = [...Buffer.from(text, 'utf8')];
        const at = bytes.indexOf(0x58);
        bytes[at] = 0xff;
        metaBytes(bytes)(t);
      },
      'meta',
      /is not UTF-8 JSON/,
    ],
    ['meta that is a list', metaBytes('[]'), 'meta', /must hold \{samples/],
    [
      'meta whose samples are not a list',
      metaBytes('{"samples": {}, "session_metadata": {}, "empty_reason": null}'),
      'meta',
      /must hold/,
    ],
    [
      'meta without session_metadata',
      metaBytes('{"samples": [], "empty_reason": null}'),
      'meta',
      /must hold/,
    ],
    [
      'an unknown empty_reason',
      metaBytes(JSON.stringify({ ...goodMeta(), empty_reason: 'bored' })),
      'meta',
      /invalid empty_reason "bored"/,
    ],
    [
      'no empty_reason key',
      metaBytes(
        JSON.stringify({ samples: goodMeta().samples, session_metadata: goodMeta().session_metadata }),
      ),
      'meta',
      /invalid empty_reason/,
    ],
    [
      'a tree that is not tree metadata',
      metaBytes(JSON.stringify({ ...goodMeta(), session_metadata: { tree: { nodes: 3 } } })),
      'meta',
      /session_metadata\.tree is not a tree metadata object/,
    ],
    [
      'a sample meta that is not an object',
      metaBytes(JSON.stringify({ ...goodMeta(), samples: [3] })),
      'field',
      /sample 0: meta is not an object/,
    ],
    [
      'a missing JSON field',
      (_t: Map<string, Tensor>, m: Record<string, unknown>) => {
        delete firstSample(m).prefix_cache_info;
      },
      'field',
      /sample 0: missing field prefix_cache_info/,
    ],
    [
      'nulls that is not a list',
      (_t: Map<string, Tensor>, m: Record<string, unknown>) => {
        firstSample(m).nulls = 'tokens';
      },
      'nulls',
      /sample 0: nulls must be a list of field names/,
    ],
    [
      'nulls holding a non-string',
      (_t: Map<string, Tensor>, m: Record<string, unknown>) => {
        firstSample(m).nulls = ['rollout_routed_experts', 1];
      },
      'nulls',
      /sample 0: nulls must be a list/,
    ],
    [
      'nulls naming a JSON field',
      (_t: Map<string, Tensor>, m: Record<string, unknown>) => {
        (firstSample(m).nulls as string[]).push('reward');
      },
      'nulls',
      /sample 0: nulls names non-tensor field reward/,
    ],
    [
      'metadata that is not an object',
      (_t: Map<string, Tensor>, m: Record<string, unknown>) => {
        firstSample(m).metadata = 'x';
      },
      'metadata',
      /sample 0: metadata is not an object/,
    ],
    [
      'an unknown status',
      (_t: Map<string, Tensor>, m: Record<string, unknown>) => {
        firstSample(m).status = 'done';
      },
      'status',
      /sample 0: invalid status "done"/,
    ],
    [
      'a missing promised tensor',
      (t: Map<string, Tensor>) => t.delete('loss_mask.0'),
      'missing_tensor',
      /sample 0: missing tensor loss_mask\.0/,
    ],
    [
      'a tensor of the wrong dtype',
      (t: Map<string, Tensor>) => t.set('tokens.0', { dtype: 'I32', shape: [5], data: [1, 2, 3, 10, 11] }),
      'dtype',
      /tensor tokens\.0: dtype I32, expected I64/,
    ],
    [
      'a 2-D tokens tensor',
      (t: Map<string, Tensor>) => t.set('tokens.0', { dtype: 'I64', shape: [1, 5], data: [1, 2, 3, 10, 11] }),
      'shape',
      /tensor tokens\.0: must be 1-D/,
    ],
    [
      'a field of the wrong type',
      (_t: Map<string, Tensor>, m: Record<string, unknown>) => {
        firstSample(m).response_length = 'two';
      },
      'field',
      /sample 0: response_length \S/,
    ],
    [
      'a nested field of the wrong type',
      (_t: Map<string, Tensor>, m: Record<string, unknown>) => {
        firstSample(m).prefix_cache_info = { cached_tokens: 'x', total_prompt_tokens: 0 };
      },
      'field',
      /sample 0: prefix_cache_info\.cached_tokens .*expected number/i,
    ],
    [
      'an unreferenced tensor',
      (t: Map<string, Tensor>) => t.set('tokens.1', { dtype: 'I64', shape: [1], data: [1] }),
      'leftover_tensor',
      /unreferenced tensor tokens\.1/,
    ],
  ])('names what is wrong in a reply with %s', (_name, edit, expectedReason, message) => {
    const got = failure(() => decodeSamples(tamper(edit)));
    expect(got.reason).toBe(expectedReason);
    expect(got.message).toMatch(message);
  });

  it('encodes every int64 token and int32 replay value, and refuses what does not fit', () => {
    const wide = sample({
      tokens: [0, -5, 1000, 2 ** 53 - 1],
      rollout_routed_experts: { shape: [2], data: [-(2 ** 31), 2 ** 31 - 1] },
    });
    expect(decodeSamples(encodeSamples(reply([wide]))).samples).toEqual([wide]);
    expect(() => encodeSamples(reply([sample({ tokens: [2 ** 53] })]))).toThrow(
      'tokens must be int64 values',
    );
    expect(() => encodeSamples(reply([sample({ tokens: [1.5] })]))).toThrow('tokens must be int64 values');
    for (const bad of [1.5, -(2 ** 31) - 1])
      expect(() =>
        encodeSamples(reply([sample({ rollout_indexer_topk: { shape: [1], data: [bad] } })])),
      ).toThrow('rollout_indexer_topk must already be int32');
    expect(() => encodeSamples(reply([sample({ loss_mask: [256] })]))).toThrow('uint8');
    expect(() => encodeSamples(reply([sample({ loss_mask: [0.5] })]))).toThrow('uint8');
  });

  it('refuses malformed containers', () => {
    const good = encodeSamples(reply([sample()]));
    expect(reason(() => decodeSamples(good.slice(0, 5)))).toBe('container');
    expect(reason(() => decodeSamples(good.slice(0, good.length - 1)))).toBe('container');
    const gap = Uint8Array.from([...good, 0]);
    expect(reason(() => decodeSamples(gap))).toBe('container');
    const badHeader = Uint8Array.from(good);
    badHeader[8] = 0x5b; // '[' instead of '{'
    expect(reason(() => decodeSamples(badHeader))).toBe('container');
  });
});
