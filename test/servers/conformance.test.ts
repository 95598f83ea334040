import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSessionTrace } from '../../contracts/trace.ts';
import { VECTORS_MILES_PROFILE } from '../../replay/conformance/bundled-vectors.ts';
import { replayTraceFresh } from '../../replay/trace/replay.ts';
import { VECTOR_DIRS, VECTORS_DIR } from './vectors.ts';

// The vectors Miles' own v2 code produced (fixtures/conformance/README.md). The fake adopts the vectors'
// toy tokenizer, so tokens and masks compare one to one; only wall-clock fields are left out. They were made
// by 31f1ca96 (fixtures/conformance/PROVENANCE.md), so the fake runs under that profile.
const dir = VECTORS_DIR;

const traceFiles =
  dir === undefined
    ? []
    : readdirSync(dir)
        .filter((f) => /^trace-\d+\.json$/.test(f))
        .sort();

function withoutWallClock(tree: { nodes: Array<Record<string, unknown>>; leaves: unknown[] }) {
  return { ...tree, nodes: tree.nodes.map(({ committed_at: _t, ...node }) => node) };
}

describe('conformance with Miles v2 (fixtures/conformance/session-v2)', () => {
  it('finds the vectors', () => {
    expect(dir, `no conformance vectors under ${VECTOR_DIRS.join(' or ')}`).toBeDefined();
    expect(traceFiles.length).toBeGreaterThanOrEqual(40);
  });

  it.each(traceFiles)('%s agrees with its expected file', async (file) => {
    const trace = parseSessionTrace(JSON.parse(readFileSync(join(dir!, file), 'utf8')), file);
    const expected = JSON.parse(readFileSync(join(dir!, file.replace(/\.json$/, '.expected.json')), 'utf8'));
    const { result } = await replayTraceFresh(trace, { milesProfile: VECTORS_MILES_PROFILE });
    expect(result.turns).toEqual(expected.turns);
    expect(withoutWallClock(result.tree)).toEqual(withoutWallClock(expected.tree));
    expect(result.samples).toEqual(expected.samples);
    expect(result.empty_reason).toEqual(expected.empty_reason);
    expect(result.samples_error?.status).toEqual(expected.samples_error?.status);
  });
});
