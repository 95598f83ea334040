import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decodeSamples, encodeSamples } from './codec.ts';
import { decodeSafetensors } from './safetensors.ts';

// Samples payloads written by Miles' own `encode_samples` (radixark/miles@31f1ca96
// miles/rollout/session/samples/codec.py), see fixtures/miles-oracle/codec/provenance.json for how the
// container was written. Regenerate with scripts/oracles/oracle_vectors.py.
const DIR = new URL('../../../fixtures/miles-oracle/codec/', import.meta.url);
const FILES = readdirSync(DIR).filter((f) => f.endsWith('.safetensors'));

describe("samples wire against Miles' own payloads", () => {
  it('has the fixtures the provenance lists', () => {
    const provenance = JSON.parse(readFileSync(new URL('provenance.json', DIR), 'utf8')) as {
      files: Array<{ file: string; bytes: number }>;
    };
    expect(provenance.files.map((f) => f.file).sort()).toEqual([...FILES].sort());
    for (const f of provenance.files) expect(readFileSync(new URL(f.file, DIR)).length).toBe(f.bytes);
  });

  it.each(FILES)('%s decodes and re-encodes to the same bytes', (file) => {
    const bytes = new Uint8Array(readFileSync(new URL(file, DIR)));
    const reply = decodeSamples(bytes, { keepFloats: true });
    expect(Buffer.from(encodeSamples(reply)).equals(Buffer.from(bytes))).toBe(true);
  });

  it('decodes the values Miles wrote', () => {
    const read = (file: string) => decodeSamples(new Uint8Array(readFileSync(new URL(file, DIR))));
    const merged = read('merged-compaction-leaf.safetensors');
    expect(merged.samples).toHaveLength(1);
    expect(merged.samples[0]).toMatchObject({
      response_length: 8,
      loss_mask: [1, 1, 1, 0, 0, 0, 0, 1],
      rollout_log_probs: [-0.1, -0.25, 0, 0, 0, 0, -1.5, -0],
      status: 'completed',
      reward: 1,
      prefix_cache_info: { cached_tokens: 4, total_prompt_tokens: 14 },
    });
    const replayed = read('null-tensors-and-replay-tensors.safetensors').samples[0]!;
    expect(replayed.loss_mask).toBeNull();
    expect(replayed.rollout_log_probs).toBeNull();
    expect(replayed.rollout_routed_experts).toEqual({ shape: [3, 2], data: [1, 2, 3, 4, 5, -6] });
    expect(replayed.rollout_indexer_topk).toEqual({ shape: [0, 4], data: [] });
    const empty = read('empty-no-records.safetensors');
    expect(empty).toMatchObject({ samples: [], emptyReason: 'no_records' });
    const many = read('twelve-samples-name-order.safetensors');
    expect(many.samples.map((s) => s.response)).toEqual(Array.from({ length: 12 }, (_, i) => `w${i}`));
  });

  it("lays tensors out in the reference library's order: larger dtype first, then by name", () => {
    const bytes = new Uint8Array(readFileSync(new URL('twelve-samples-name-order.safetensors', DIR)));
    const names = [...decodeSafetensors(bytes).keys()];
    const layout = JSON.parse(
      Buffer.from(bytes.subarray(8, 8 + Number(Buffer.from(bytes).readBigUInt64LE(0)))).toString('utf8'),
    ) as Record<string, { data_offsets: [number, number] }>;
    const byOffset = Object.entries(layout)
      .sort((a, b) => a[1].data_offsets[0] - b[1].data_offsets[0])
      .map(([n]) => n);
    expect(byOffset).toEqual(Object.keys(layout));
    expect(byOffset.slice(0, 3)).toEqual(['tokens.0', 'tokens.1', 'tokens.10']);
    expect(byOffset.indexOf('rollout_log_probs.0')).toBeGreaterThan(byOffset.indexOf('tokens.9'));
    expect(byOffset.indexOf('_samples_meta')).toBeLessThan(byOffset.indexOf('loss_mask.0'));
    expect(new Set(names)).toEqual(new Set(byOffset));
  });
});
