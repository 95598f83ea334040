import { describe, expect, it } from 'vitest';
import { encodeSamples } from '../../fakes/session/wire/codec.ts';
import { compareRecords, maskText } from './compare.ts';
import type { Exchange, ExchangeRecord } from './exchanges.ts';

const text = (s: string) => new Uint8Array(Buffer.from(s, 'utf8'));
const json = (step: string, body: string, status = 200): Exchange => ({
  step,
  status,
  contentType: 'application/json',
  body: text(body),
});
const record = (sessionId: string, exchanges: Exchange[]): ExchangeRecord => ({ sessionId, exchanges });

describe('conformance masking', () => {
  it('masks the session id and clocks by name, and nothing else', () => {
    const masked = maskText(
      '{"session_id":"abc","records":[{"timestamp":1796094247.8608978,"request_timestamp":null,"x":1.5}],"t0":null,"created":17,"err":"session not found: session_id=abc"}',
      'abc',
    );
    expect(masked.text).toBe(
      '{"session_id":"<session-id>","records":[{"timestamp":"<clock>","request_timestamp":null,"x":1.5}],"t0":null,"created":"<masked>","err":"session not found: session_id=<session-id>"}',
    );
    expect(masked.intClocks).toEqual([]);
  });

  it('reports a clock written as an integer (a Python float never is)', () => {
    expect(maskText('{"committed_at":1796094247}', 'x').intClocks).toEqual(['committed_at=1796094247']);
    expect(maskText('{"committed_at":1.796e9}', 'x').intClocks).toEqual([]);
  });
});

describe('conformance comparison', () => {
  it('reports an exchange where one server called the policy and the other did not', () => {
    const counted = (n: number | undefined): Exchange => ({
      ...json('chat', '{"error":"x"}', 500),
      ...(n === undefined ? {} : { upstreamCalls: n }),
    });
    expect(compareRecords(record('a', [counted(0)]), record('b', [counted(1)]))).toEqual([
      { step: 'chat', what: 'upstream calls', fake: '0', miles: '1' },
    ]);
    expect(compareRecords(record('a', [counted(1)]), record('b', [counted(1)]))).toEqual([]);
    expect(compareRecords(record('a', [counted(undefined)]), record('b', [counted(undefined)]))).toEqual([]);
  });

  const reply = (reward: unknown, response: string) =>
    encodeSamples({
      samples: [
        {
          tokens: [1, 3, 1001],
          response,
          response_length: 1,
          loss_mask: [1],
          rollout_log_probs: [-0.5],
          rollout_routed_experts: null,
          rollout_indexer_topk: null,
          status: 'completed',
          weight_versions: [],
          prefix_cache_info: { cached_tokens: 0, total_prompt_tokens: 0 },
          metadata: { leaf: { node_id: 0 } },
          reward,
        },
      ],
      sessionMetadata: { tree: { nodes: [], leaves: [] } },
      emptyReason: null,
    });
  const samples = (body: Uint8Array): Exchange => ({
    step: 'samples',
    status: 200,
    contentType: 'application/octet-stream',
    body,
  });

  it('agrees on answers that differ only in masked values', () => {
    const fake = record('aaa', [json('create', '{"session_id":"aaa"}'), json('get', '{"timestamp":1.25}')]);
    const miles = record('bbb', [json('create', '{"session_id":"bbb"}'), json('get', '{"timestamp":2.5}')]);
    expect(compareRecords(fake, miles)).toEqual([]);
  });

  it('lists status, content-type, body and samples differences by step', () => {
    const fake = record('0123456789abcdef0123456789abcdef', [
      json('turn 0', '{"error":"x"}', 400),
      { ...json('turn 1', 'Internal Server Error', 500), contentType: 'text/plain; charset=utf-8' },
      samples(reply(1, 'a b')),
    ]);
    const miles = record('fedcba9876543210fedcba9876543210', [
      json('turn 0', '{"error":"y"}', 400),
      json('turn 1', 'Internal Server Error', 500),
      samples(reply(2, 'ab')),
    ]);
    const differences = compareRecords(fake, miles);
    expect(differences.map((d) => `${d.step}: ${d.what}`)).toEqual([
      'turn 0: body',
      'turn 1: content-type',
      'samples: samples meta',
    ]);
    expect(compareRecords(record('a', [samples(reply(1, 'x'))]), record('b', []))).toEqual([
      { step: 'all', what: 'exchanges', fake: '1', miles: '0' },
    ]);
  });
});
