import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from 'node:child_process';
import { Readable } from 'node:stream';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJson } from '../../common/python-json/loads.ts';
import {
  blockNumbers,
  FrameHeaderSchema,
  FrameReader,
  placeBlocks,
} from '../../replay/run-check/dump-frames.ts';

// The oracle is the converter's own JSON path: Python builds each random value, converts it once with
// to_jsonable alone (JSON, as before the framing) and once with a Packer (JSON header plus binary
// blocks, miles-bridge/dump_frames.py); the frame read back by the harness must be the JSON document.
const SCRIPTS_DIR = new URL('../../miles-bridge/', import.meta.url).pathname;
const PYTHON = ['python3', '/usr/bin/python3'].find(
  (p) => spawnSync(p, ['-c', 'import sys'], { stdio: 'ignore' }).status === 0,
);
if (!PYTHON) console.warn('[skip] dump frames round trip: no python3 on this machine');

// Each line a typed value ({"i": int}, {"f": "repr"}, {"b"}, {"s"}, {"n"}, {"l": [...]}, {"t": [...]},
// {"d": {...}}), answered with one frame whose header also carries the JSON path's text and count.
const ECHO = `
import json, sys
import convert_dumps as c
from dump_frames import Packer
def build(v):
    (k, x), = v.items()
    if k == 'i': return int(x)
    if k == 'f': return float(x)
    if k in ('b', 's', 'n'): return x
    if k == 'l': return [build(e) for e in x]
    if k == 't': return tuple(build(e) for e in x)
    return {key: build(e) for key, e in x.items()}
out = sys.stdout.buffer
for line in sys.stdin:
    value = build(json.loads(line))
    plain = c.Stats()
    text = json.dumps(c.to_jsonable(value, plain), allow_nan=False)
    framed, packer = c.Stats(), Packer()
    document = c.to_jsonable(value, framed, packer)
    packer.write(out, {"document": document, "non_finite": framed.non_finite, "json": text, "json_non_finite": plain.non_finite})
    out.flush()
`;

type Typed =
  | { i: number | string }
  | { f: string }
  | { b: boolean }
  | { s: string }
  | { n: null }
  | { l: Typed[] }
  | { t: Typed[] }
  | { d: Record<string, Typed> };

const int32 = fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }).map((i): Typed => ({ i }));
const bigInt = fc
  .constantFrom(2 ** 31, -(2 ** 31) - 1, 2 ** 53, '123456789012345678901234567890')
  .map((i): Typed => ({ i }));
const float = fc.oneof(
  {
    weight: 40,
    arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }).map((f): Typed => ({ f: String(f) })),
  },
  fc.constantFrom('nan', 'inf', '-inf', '-0.0', '1.0').map((f): Typed => ({ f })),
);
const scalar = fc.oneof(
  { weight: 6, arbitrary: int32 },
  { weight: 3, arbitrary: float },
  bigInt,
  fc.boolean().map((b): Typed => ({ b })),
  fc.string({ maxLength: 4 }).map((s): Typed => ({ s })),
  fc.constant<Typed>({ n: null }),
);
// Long homogeneous lists (the framed case) with now and then one odd element, around MIN_LENGTH 32.
const longList = fc
  .tuple(
    fc.constantFrom('ints', 'floats', 'mixed'),
    fc.integer({ min: 28, max: 90 }),
    fc.oneof(
      { weight: 3, arbitrary: fc.constant([]) },
      fc.array(fc.tuple(fc.nat(), scalar), { maxLength: 2 }),
    ),
    fc.boolean(),
  )
  .chain(([kind, length, odd, tuple]) =>
    fc
      .array(kind === 'ints' ? int32 : kind === 'floats' ? float : fc.oneof(int32, float), {
        minLength: length,
        maxLength: length,
      })
      .map((items): Typed => {
        for (const [at, v] of odd) items[at % length] = v;
        return tuple ? { t: items } : { l: items };
      }),
  );
const value: fc.Arbitrary<Typed> = fc.letrec<{ v: Typed }>((tie) => ({
  v: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    scalar,
    { weight: 3, arbitrary: longList },
    fc.array(tie('v'), { maxLength: 4 }).map((l): Typed => ({ l })),
    fc
      .dictionary(fc.constantFrom('tokens', 'loss_mask', 'a', '0', 'x.y'), tie('v'), { maxKeys: 4 })
      .map((d): Typed => ({ d })),
  ),
})).v;

describe.skipIf(!PYTHON)('converter frames against its JSON path', { timeout: 120_000 }, () => {
  let child: ChildProcessWithoutNullStreams;
  let frames: FrameReader;
  beforeAll(() => {
    child = spawn(PYTHON!, ['-c', ECHO], { env: { ...process.env, PYTHONPATH: SCRIPTS_DIR } });
    frames = new FrameReader(child.stdout);
  });
  afterAll(() => {
    child.stdin.end();
  });

  it('gives the document and the non-finite count the JSON path gives', async () => {
    let framedBlocks = 0;
    await fc.assert(
      fc.asyncProperty(value, async (v) => {
        child.stdin.write(`${JSON.stringify(v)}\n`);
        const frame = await frames.next();
        const { blobs } = FrameHeaderSchema.parse(frame!.header);
        framedBlocks += blobs.length;
        const header = frame!.header as {
          document: unknown;
          json: string;
          non_finite: number;
          json_non_finite: number;
        };
        expect(placeBlocks(header.document, blobs, frame!.body)).toEqual(parseJson(header.json));
        expect(header.non_finite).toBe(header.json_non_finite);
      }),
      { numRuns: 300 },
    );
    // The property is about the binary path: make sure it was taken.
    expect(framedBlocks).toBeGreaterThan(60);
  });
});

describe('FrameReader and blocks', () => {
  const header = (h: object) => Buffer.from(`${JSON.stringify(h)}\n`);
  const ints = Buffer.alloc(12);
  for (const [i, v] of [7, -1, 2 ** 31 - 1].entries()) ints.writeInt32LE(v, i * 4);

  it('reads frames however the stream is cut', async () => {
    const bytes = Buffer.concat([
      header({ ready: true }),
      header({
        document: { t: null },
        blobs: [{ path: ['t'], type: 'i32', offset: 0, count: 3 }],
        bytes: 12,
      }),
      ints,
      header({ ok: false, bytes: 0 }),
    ]);
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 1, max: bytes.length }), { maxLength: 6 }),
        async (cuts) => {
          const at = [...new Set(cuts)].sort((a, b) => a - b);
          const chunks = [0, ...at]
            .map((start, i) => bytes.subarray(start, at[i] ?? bytes.length))
            .filter((c) => c.length);
          const reader = new FrameReader(Readable.from(chunks));
          expect((await reader.next())?.header).toMatchObject({ ready: true });
          const frame = (await reader.next())!;
          const { blobs } = FrameHeaderSchema.parse(frame.header);
          expect(placeBlocks(frame.header.document, blobs, frame.body)).toEqual({ t: [7, -1, 2 ** 31 - 1] });
          expect((await reader.next())?.header).toMatchObject({ ok: false });
          expect(await reader.next()).toBeNull();
        },
      ),
    );
  });

  it('reads a block that is not aligned, and refuses one past the frame or without its null', () => {
    const shifted = Buffer.concat([Buffer.alloc(1), ints]).subarray(1);
    expect(blockNumbers(shifted, { path: [], type: 'i32', offset: 0, count: 3 })).toEqual([
      7,
      -1,
      2 ** 31 - 1,
    ]);
    expect(() => blockNumbers(ints, { path: ['t'], type: 'i32', offset: 4, count: 3 })).toThrow(
      /past the frame/,
    );
    expect(() => placeBlocks({ t: [1] }, [{ path: ['t'], type: 'i32', offset: 0, count: 3 }], ints)).toThrow(
      /no null left at t/,
    );
  });

  it('a stream cut inside a frame is an error', async () => {
    const cut = Buffer.concat([header({ bytes: 12 }), ints.subarray(0, 5)]);
    await expect(new FrameReader(Readable.from([cut])).next()).rejects.toThrow(
      /7 bytes short of a 12-byte frame/,
    );
  });
});
