import { describe, expect, it } from 'vitest';
import type { WireSample } from '../../contracts/wire-sample.ts';
import { titoFamily } from '../tokenizer/tito.ts';
import {
  AssemblyError,
  buildLeafMaterial,
  computeTurnSamples,
  mergeRules,
  mergeTurnSamples,
  truncateByTotalTokens,
} from './assembly.ts';
import type { SessionRecord } from './record.ts';
import { addTurn } from './testing/build-tree.ts';
import { turnWireSample } from './testing/turn-wire-sample.ts';
import { SessionTree } from './tree.ts';
import { toTurnSample } from './values/turn-tokens.ts';

/**
 * The edges of per-leaf assembly (radixark/miles@31f1ca96 miles/rollout/session/v2/utils.py
 * `build_leaf_material`, samples/merge.py) that the golden cases in assembly.test.ts do not reach:
 * statuses per finish reason, the lifecycle segment, malformed records, the exact trim message, the
 * max_seq_len boundary, merging masks that are null and replay tensors that stop the fold.
 */

const family = titoFamily('default');
const decode = (ids: readonly number[]) => ids.join(',');

const turn = turnWireSample;

function record(response: Record<string, unknown>, request: Record<string, unknown> = { input_ids: [1, 2] }) {
  return {
    timestamp: 10,
    request_timestamp: 9.5,
    method: 'POST',
    path: '/v1/chat/completions',
    request,
    response,
    status_code: 200,
  } as SessionRecord;
}

const thrown = (fn: () => unknown): Error => {
  try {
    fn();
  } catch (error) {
    return error as Error;
  }
  throw new Error('did not throw');
};

describe('one turn’s sample', () => {
  it.each([
    ['stop', 'completed'],
    ['tool_calls', 'completed'],
    ['length', 'truncated'],
    ['abort', 'aborted'],
    ['something else', 'pending'],
  ])('finish_reason %s gives status %s', (finish, status) => {
    const tree = new SessionTree();
    const leaf = addTurn(tree, null, { prompt: [1, 2], output: [10, 11], finish });
    expect(computeTurnSamples([leaf.record], leaf.tokens.toArray(), 0, decode)[0]!.status).toBe(status);
  });

  it('reads latency, cache counts and weight version from meta_info, defaulting what is absent', () => {
    const choice = (meta: Record<string, unknown>) => ({
      choices: [{ finish_reason: 'stop', meta_info: { output_token_logprobs: [[-0.5, 7]], ...meta } }],
    });
    const [timed] = computeTurnSamples(
      [record(choice({ e2e_latency: 2.5, cached_tokens: 1, prompt_tokens: 2, weight_version: 'w9' }))],
      [1, 2, 7],
      0,
      decode,
    );
    expect(timed).toMatchObject({
      tokens: [1, 2, 7],
      response: '7',
      weight_versions: ['w9'],
      prefix_cache_info: { cached_tokens: 1, total_prompt_tokens: 2 },
      metadata: { lifecycle: { t0: 7.5, t1: 10, turn: 1, req_ts: 9.5 } },
    });
    const [bare] = computeTurnSamples(
      [record(choice({ cached_tokens: '3', prompt_tokens: Number.NaN }))],
      [1, 2, 7],
      0,
      decode,
    );
    expect(bare).toMatchObject({
      weight_versions: [],
      prefix_cache_info: { cached_tokens: 0, total_prompt_tokens: 0 },
      metadata: { lifecycle: { t0: null } },
    });
  });

  it('refuses malformed records', () => {
    const pairs = (p: unknown) => ({ choices: [{ meta_info: { output_token_logprobs: p } }] });
    const cases: [Record<string, unknown>, Record<string, unknown> | undefined, string, string][] = [
      [{ choices: [] }, undefined, 'TypeError', 'record without choices[0]'],
      [pairs('x'), undefined, 'TypeError', 'output_token_logprobs is not a list'],
      [pairs([3]), undefined, 'TypeError', 'output_token_logprobs entry is not a pair'],
      [
        pairs([[-0.5, 7]]),
        { messages: [] },
        'AssemblyError',
        'input_ids not found in request — the session server should populate it',
      ],
    ];
    for (const [response, request, name, message] of cases) {
      const error = thrown(() => computeTurnSamples([record(response, request)], [7], 0, decode));
      expect({ name: error.name, message: error.message }).toEqual({ name, message });
    }
  });

  it('re-decodes the response of a trimmed turn', () => {
    const tree = new SessionTree();
    const n0 = addTurn(tree, null, { prompt: [1, 2, 3], output: [10, 99] });
    const n1 = addTurn(tree, n0, { prompt: [1, 2, 3, 10, 4], output: [20] });
    const turns = computeTurnSamples([n0.record, n1.record], n1.tokens.toArray(), 1, decode);
    expect(turns.map((t) => [t.response, t.response_length, t.loss_mask, t.rollout_log_probs])).toEqual([
      ['10', 1, [1], [-0.1]],
      ['20', 1, [1], [-0.2]],
    ]);
  });

  // The f-string of radixark/miles@31f1ca96 miles/rollout/session/samples/merge.py L73-78 (cursor is the
  // prompt length there: accumulated[cursor:cursor+3] starts at the turn's first output position).
  it('words a trim above the allowance exactly as Miles does, last turn or not', () => {
    const tree = new SessionTree();
    const n0 = addTurn(tree, null, { prompt: [1, 2, 3], output: [7, 10, 98, 99] });
    const n1 = addTurn(tree, n0, { prompt: [1, 2, 3, 7, 10, 4, 5, 6], output: [20] });
    expect(
      thrown(() => computeTurnSamples([n0.record, n1.record], n1.tokens.toArray(), 1, decode)).message,
    ).toBe(
      'trim_count 2 exceeds allowed=1 (is_last=False, max_trim_tokens=1); output_ids[-3:]=[10, 98, 99], accumulated[cursor:cursor+3]=[7, 10, 4]',
    );
    const last = thrown(() => computeTurnSamples([n0.record], [1, 2, 3, 7, 10, 98], 5, decode));
    expect(last).toBeInstanceOf(AssemblyError);
    expect(last.message).toBe(
      'trim_count 1 exceeds allowed=0 (is_last=True, max_trim_tokens=5); output_ids[-3:]=[10, 98, 99], accumulated[cursor:cursor+3]=[7, 10, 98]',
    );
  });
});

describe('truncation and the fold', () => {
  function golden() {
    const tree = new SessionTree();
    const n0 = addTurn(tree, null, { prompt: [1, 2, 3], output: [10, 11] });
    const n1 = addTurn(tree, n0, { prompt: [1, 2, 3, 10, 11, 20, 21], output: [30, 31] });
    return computeTurnSamples([n0.record, n1.record], n1.tokens.toArray(), 0, decode);
  }

  it('keeps a turn that exactly fills max_seq_len untouched', () => {
    const kept = truncateByTotalTokens(golden(), 5, decode);
    expect(kept.map((t) => [t.tokens, t.status])).toEqual([[[1, 2, 3, 10, 11], 'completed']]);
    const all = truncateByTotalTokens(golden(), 9, decode);
    expect(all.map((t) => t.status)).toEqual(['completed', 'completed']);
  });

  it('refuses an empty fold and samples that do not extend each other', () => {
    const error = thrown(() => mergeTurnSamples([], decode));
    expect([error.name, error.message]).toEqual(['AssemblyError', 'cannot merge an empty list of samples']);
    const same = turn({ tokens: [1, 2, 3], response_length: 1 });
    expect(() => mergeTurnSamples([same, { ...same }], decode)).toThrow('obs_len must be > 0, got -1');
    const shorter = turn({ tokens: [1, 2], response_length: 1 });
    expect(() => mergeTurnSamples([same, shorter], decode)).toThrow('b.tokens must start with a.tokens');
  });

  it('refuses, with Sample.validate’s texts, a turn whose lengths disagree (radixark/miles@31f1ca96 miles/utils/types.py)', () => {
    const a = turn({ tokens: [1, 2, 10], response_length: 1 });
    const b = turn({ tokens: [1, 2, 10, 5, 20, 21], response_length: 2 });
    const refusal = (x: WireSample, y: WireSample) => thrown(() => mergeTurnSamples([x, y], decode)).message;
    expect(refusal(a, { ...b, loss_mask: [1] })).toBe('loss_mask length (1) != response_length (2)');
    expect(refusal({ ...a, rollout_log_probs: [0, 0] }, b)).toBe(
      'rollout_log_probs length (2) != response_length (1)',
    );
    expect(refusal({ ...a, response_length: 4, loss_mask: null, rollout_log_probs: null }, b)).toBe(
      'tokens length (3) must be >= response_length (4)',
    );
    // `a` is checked before `b`, and both before the prefix check.
    expect(refusal({ ...a, loss_mask: [] }, { ...b, tokens: [9], loss_mask: [] })).toBe(
      'loss_mask length (0) != response_length (1)',
    );
    const negative = { ...a, response_length: -1, loss_mask: null, rollout_log_probs: null };
    expect(refusal(negative, b)).toBe('response_length must be >= 0, got -1');
    // A turn that is all response (no prompt) is valid: tokens as long as response_length.
    const promptless = turn({ tokens: [10], response_length: 1 });
    expect(
      mergeTurnSamples([promptless, turn({ tokens: [10, 5, 20], response_length: 1 })], decode),
    ).toMatchObject({
      tokens: [10, 5, 20],
      loss_mask: [1, 0, 1],
    });
  });

  it('refuses, as _merge_sample_pair does, a pair whose later turn lacks a replay tensor (the fold stops before it)', () => {
    const experts = { shape: [1], data: [3] };
    const a = toTurnSample(turn({ tokens: [1, 10], response_length: 1, rollout_indexer_topk: experts }));
    const b = toTurnSample(turn({ tokens: [1, 10, 5, 20], response_length: 1 }));
    expect(thrown(() => mergeRules.checkPair(a, b))).toMatchObject({
      name: 'AssemblyError',
      message: 'cannot merge: a has rollout_indexer_topk but b does not',
    });
  });

  it('refuses a replay tensor that shrinks from one turn to the next', () => {
    const a = turn({
      tokens: [1, 10],
      response_length: 1,
      rollout_routed_experts: { shape: [2], data: [3, 4] },
    });
    const b = turn({
      tokens: [1, 10, 5, 20],
      response_length: 1,
      rollout_routed_experts: { shape: [1], data: [3] },
    });
    expect(thrown(() => mergeTurnSamples([a, b], decode))).toMatchObject({
      name: 'AssemblyError',
      message: '',
    });
  });

  it('treats a null mask as all ones and null log-probs as zeros', () => {
    const a = turn({ tokens: [1, 2, 10], response_length: 1, loss_mask: null, rollout_log_probs: null });
    const b = turn({
      tokens: [1, 2, 10, 5, 20, 21],
      response_length: 2,
      loss_mask: null,
      rollout_log_probs: null,
    });
    expect(mergeTurnSamples([a, b], decode)).toMatchObject({
      response_length: 4,
      loss_mask: [1, 0, 1, 1],
      rollout_log_probs: [0, 0, 0, 0],
    });
  });

  it('flattens lifecycle segments over three turns and starts from none', () => {
    const seg = (k: number) => ({ lifecycle: { turn: k } });
    const a = turn({ tokens: [1, 10], response_length: 1, metadata: seg(1) });
    const b = turn({ tokens: [1, 10, 5, 20], response_length: 1, metadata: seg(2) });
    const c = turn({ tokens: [1, 10, 5, 20, 6, 30], response_length: 1, metadata: seg(3) });
    expect(mergeTurnSamples([a, b, c], decode).metadata.lifecycle).toEqual([
      { turn: 1 },
      { turn: 2 },
      { turn: 3 },
    ]);
    const plain = mergeTurnSamples(
      [
        { ...a, metadata: {} },
        { ...b, metadata: {} },
      ],
      decode,
    );
    expect(plain.metadata.lifecycle).toEqual([]);
  });

  it('stops the fold where the next turn lacks a replay tensor the accumulator has', () => {
    const experts = { shape: [1], data: [3] };
    const a = turn({ tokens: [1, 10], response_length: 1 });
    const b = turn({ tokens: [1, 10, 5, 20], response_length: 1 });
    for (const field of ['rollout_routed_experts', 'rollout_indexer_topk'] as const) {
      const stopped = mergeTurnSamples([{ ...a, [field]: experts }, b], decode);
      expect(stopped.tokens).toEqual([1, 10]);
      const both = mergeTurnSamples(
        [
          { ...a, [field]: experts },
          { ...b, [field]: experts },
        ],
        decode,
      );
      expect(both.tokens).toEqual([1, 10, 5, 20]);
      const gained = mergeTurnSamples([a, { ...b, [field]: experts }], decode);
      expect(gained).toMatchObject({ tokens: [1, 10, 5, 20], [field]: experts });
    }
  });
});

describe('a leaf’s sample', () => {
  it('names its parent by seq, decodes with the family, and copies the leaf snapshot', () => {
    const tree = new SessionTree();
    const n0 = addTurn(tree, null, { prompt: [1, 2, 3], output: [10, 11] });
    const n1 = addTurn(tree, n0, { prompt: [1, 2, 3, 10, 11, 20], output: [30] });
    const n2 = addTurn(tree, n1, { prompt: [1, 2, 3, 10, 11, 20, 30, 40], output: [50] });
    const [sample] = buildLeafMaterial(tree, family, null);
    expect(sample!.metadata.leaf).toEqual({
      node_id: 2,
      parent: 1,
      path_node_ids: [0, 1, 2],
      response_id: 'r2',
    });
    const text = family.tokenizer.decode;
    expect(sample!.response).toBe(text([10, 11]) + text([20]) + text([30]) + text([40]) + text([50]));
    const snapshot = sample!.metadata.accumulated_token_ids as number[];
    expect(snapshot).toEqual(n2.tokens.toArray());
    snapshot.push(0);
    expect(n2.tokens.toArray()).toHaveLength(9);
  });

  it('carries tito_session_mismatch only when there is something to compare', () => {
    const tree = new SessionTree();
    addTurn(tree, null, { prompt: [], output: [] });
    const [empty] = buildLeafMaterial(tree, family, null);
    expect(Object.keys(empty!.metadata)).toEqual(['lifecycle', 'accumulated_token_ids', 'leaf']);
  });
});
