import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { WireSample } from '../../contracts/wire-sample.ts';
import { titoFamily } from '../tokenizer/tito.ts';
import { AssemblyError, buildLeafMaterial, computeTurnSamples, mergeTurnSamples } from './assembly.ts';
import { addTurn } from './testing/build-tree.ts';
import { turnWireSample } from './testing/turn-wire-sample.ts';
import { SessionTree } from './tree.ts';

// Fixtures from Miles' tests/fast/router/test_session_samples_op_v2.py and
// tests/fast/rollout/session/test_samples.py (radixark/miles@31f1ca96).
const family = titoFamily('default');
const decode = (ids: readonly number[]) => ids.join(',');

function goldenTree() {
  const tree = new SessionTree();
  const n0 = addTurn(tree, null, {
    prompt: [1, 2, 3],
    output: [10, 11],
    logprobs: [-0.125, -0.25],
    weightVersion: 'w1',
    cachedTokens: 2,
    promptTokens: 3,
  });
  addTurn(tree, n0, {
    prompt: [1, 2, 3, 10, 11, 20, 21],
    output: [30, 31],
    logprobs: [-0.5, -1.0],
    weightVersion: 'w2',
    cachedTokens: 3,
    promptTokens: 7,
  });
  return tree;
}

describe('per-leaf assembly', () => {
  it('merges two turns into the golden sample', () => {
    const [sample] = buildLeafMaterial(goldenTree(), family, null);
    expect(sample).toMatchObject({
      tokens: [1, 2, 3, 10, 11, 20, 21, 30, 31],
      response_length: 6,
      loss_mask: [1, 1, 0, 0, 1, 1],
      rollout_log_probs: [-0.125, -0.25, 0, 0, -0.5, -1.0],
      status: 'completed',
      weight_versions: ['w1', 'w2'],
      prefix_cache_info: { cached_tokens: 5, total_prompt_tokens: 10 },
      rollout_routed_experts: null,
      reward: null,
    });
    expect(Object.keys(sample!.metadata)).toEqual([
      'lifecycle',
      'accumulated_token_ids',
      'leaf',
      'tito_session_mismatch',
    ]);
    expect(sample!.metadata.leaf).toEqual({
      node_id: 1,
      parent: 0,
      path_node_ids: [0, 1],
      response_id: 'r1',
    });
    expect(sample!.metadata.lifecycle).toEqual([
      { t0: null, t1: 1, turn: 1, req_ts: 0.5 },
      { t0: null, t1: 2, turn: 2, req_ts: 1.5, prev_t1: 1 },
    ]);
  });

  it('cuts to max_seq_len=8 at a turn boundary and marks the sample truncated', () => {
    const [sample] = buildLeafMaterial(goldenTree(), family, 8);
    expect(sample).toMatchObject({
      tokens: [1, 2, 3, 10, 11, 20, 21, 30],
      loss_mask: [1, 1, 0, 0, 1],
      rollout_log_probs: [-0.125, -0.25, 0, 0, -0.5],
      status: 'truncated',
    });
  });

  it('drops a leaf whose first turn cannot keep one output token', () => {
    expect(buildLeafMaterial(goldenTree(), family, 3)).toEqual([]);
    expect(buildLeafMaterial(goldenTree(), family, 4)).toHaveLength(1);
  });

  it('keeps the previous turn status when a whole later turn is dropped', () => {
    const [sample] = buildLeafMaterial(goldenTree(), family, 6);
    expect(sample).toMatchObject({ tokens: [1, 2, 3, 10, 11], status: 'completed', response_length: 2 });
  });

  it('stops merging at a non-completed mid-path turn', () => {
    const tree = new SessionTree();
    const cut = addTurn(tree, null, { prompt: [1, 2, 3], output: [10, 11], finish: 'abort' });
    addTurn(tree, cut, { prompt: [1, 2, 3, 10, 11, 20], output: [30, 5] });
    const [sample] = buildLeafMaterial(tree, family, null);
    expect(sample!.tokens).toEqual(cut.tokens.toArray());
    expect(sample!.status).toBe('aborted');
  });
});

describe('trailing-token trim (STOP = 99, max_trim_tokens 1)', () => {
  const STOP = 99;
  function records(accumulatedTail: number[] = [30, STOP]) {
    const tree = new SessionTree();
    const n0 = addTurn(tree, null, { prompt: [1, 2, 3], output: [10, STOP] });
    const n1 = addTurn(tree, n0, { prompt: [1, 2, 3, 10, 4, 5, 6], output: [20, STOP] });
    const n2 = addTurn(tree, n1, { prompt: [1, 2, 3, 10, 4, 5, 6, 20, 7, 8, 9], output: [30, STOP] });
    const accumulated = [1, 2, 3, 10, 4, 5, 6, 20, 7, 8, 9, ...accumulatedTail];
    return { recs: [n0, n1, n2].map((n) => n.record), accumulated };
  }

  it('trims non-last turns to the tokens the next prompt kept', () => {
    const { recs, accumulated } = records();
    const turns = computeTurnSamples(recs, accumulated, 1, decode);
    expect(turns.map((t) => t.response_length)).toEqual([1, 1, 2]);
    expect(turns.map((t) => t.tokens.length)).toEqual([4, 8, 13]);
    const merged = mergeTurnSamples(turns, decode);
    expect(merged.tokens).toEqual(accumulated);
    expect(merged.loss_mask).toEqual([1, 0, 0, 0, 1, 0, 0, 0, 1, 1]);
  });

  it('refuses a trim above the allowance', () => {
    const { recs, accumulated } = records();
    expect(() => computeTurnSamples(recs, accumulated, 0, decode)).toThrow(/^trim_count 1 exceeds allowed=0/);
  });

  it('refuses a trim on the last turn and a snapshot longer than the records', () => {
    const last = records([30, 98]);
    expect(() => computeTurnSamples(last.recs, last.accumulated, 1, decode)).toThrow(AssemblyError);
    const longer = records([30, STOP, 42]);
    expect(() => computeTurnSamples(longer.recs, longer.accumulated, 1, decode)).toThrow(
      'cursor 13 != len(accumulated_token_ids) 14 after processing all 3 records',
    );
  });

  it('refuses a broken chain and an empty observation', () => {
    const tree = new SessionTree();
    const n0 = addTurn(tree, null, { prompt: [1, 2, 3], output: [10, 11] });
    const broken = addTurn(tree, n0, { prompt: [1, 2, 3, 99, 99, 20, 21], output: [30, 31] });
    // Each turn assembled against its own snapshot, so only the merge sees the break.
    const turns = [n0, broken].flatMap((n) => computeTurnSamples([n.record], n.tokens.toArray(), 0, decode));
    expect(() => mergeTurnSamples(turns, decode)).toThrow('b.tokens must start with a.tokens');
    const tree2 = new SessionTree();
    const m0 = addTurn(tree2, null, { prompt: [1, 2, 3], output: [10, 11] });
    const noObs = addTurn(tree2, m0, { prompt: [1, 2, 3, 10, 11], output: [30, 31] });
    const turns2 = computeTurnSamples([m0.record, noObs.record], noObs.tokens.toArray(), 0, decode);
    expect(() => mergeTurnSamples(turns2, decode)).toThrow('obs_len must be > 0, got 0');
  });
});

// What Miles' own `merge_samples` (radixark/miles@31f1ca96 miles/rollout/generate_utils/sample_utils.py)
// returned for these toy turns (scripts/oracles/oracle_vectors.py): `a.response + obs_text + b.response`.
const mergeOracle = JSON.parse(
  readFileSync(new URL('../../fixtures/miles-oracle/merge.json', import.meta.url), 'utf8'),
) as {
  vocabulary: string[];
  cases: Array<{
    name: string;
    turns: Array<{ tokens: number[]; response: string; response_length: number; per_token_lists: boolean }>;
    response: string;
    response_length: number;
    loss_mask: number[];
    rollout_log_probs: number[];
  }>;
};

describe("merged response text and per-token lists, as Miles' merge_samples builds them", () => {
  const toy = titoFamily('default');
  toy.tokenizer.encodeText(mergeOracle.vocabulary.join(' '));
  it.each(mergeOracle.cases)('$name', (c) => {
    const turns: WireSample[] = c.turns.map((t) =>
      turnWireSample({
        tokens: t.tokens,
        response: t.response,
        response_length: t.response_length,
        // A turn without its per-token lists has them filled in by Miles' `_fill_defaults`.
        ...(t.per_token_lists ? {} : { loss_mask: null, rollout_log_probs: null }),
      }),
    );
    const merged = mergeTurnSamples(turns, (ids) => toy.tokenizer.decode(ids));
    expect(merged.response).toBe(c.response);
    expect(merged.response_length).toBe(c.response_length);
    expect(merged.loss_mask).toEqual(c.loss_mask);
    expect(merged.rollout_log_probs).toEqual(c.rollout_log_probs);
  });
});
