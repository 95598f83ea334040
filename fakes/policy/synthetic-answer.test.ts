import { crc32 } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { ROUTING_KEY_HEADER } from '../../contracts/policy-headers.ts';
import { tokenIdsDigest } from '../../contracts/request-digest.ts';
import { createPolicy, type PolicyRequestLike } from './handlers.ts';
import { syntheticReply } from './synthetic.ts';

/**
 * The synthetic policy's answers through its chat route, turn after turn of sessions that re-send
 * their prompt (so the continued hashes are used), against the expressions the policy used before
 * it continued them: the completion id from `ids.join(',')`, the reply from the CRC-32 of
 * `Int32Array.from(ids)`, the log's `tokenIdsDigest(ids)`.
 */

function request(ids: readonly number[], key: string | null): PolicyRequestLike {
  const headers = new Map<string, string>(key === null ? [] : [[ROUTING_KEY_HEADER, key]]);
  return {
    method: 'POST',
    url: 'http://policy.test/v1/chat/completions',
    headers: { get: (name) => headers.get(name) ?? null },
    text: async () => JSON.stringify({ messages: [{ role: 'user', content: 'x' }], input_ids: [...ids] }),
  };
}

describe('synthetic chat answers over continued prompt hashes', () => {
  it('answer each turn with the id, reply and log digest computed from the whole prompt', async () => {
    const policy = createPolicy({ mode: 'synthetic' });
    const long = Array.from({ length: 5000 }, (_, i) => (i * 7919) % 150_001);
    const turns: Array<[string | null, number[]]> = [
      ['a', long.slice(0, 1000)],
      ['a', long.slice(0, 3000)],
      ['b', long.slice(0, 2000)],
      ['a', long],
      // An earlier id changed: not a continuation.
      ['a', [...long.slice(0, 10), -1, ...long.slice(11)]],
      ['b', long.slice(0, 2000)],
      [null, long.slice(0, 4000)],
      ['a', []],
    ];
    let counter = 0;
    for (const [key, ids] of turns) {
      const reply = await policy.chat(request(ids, key));
      counter += 1;
      const body = reply.body as { id: string; choices: Array<{ message: { content: string } }> };
      const crc = crc32(`${ids.join(',')}#${counter}`);
      expect(body.id).toBe(
        `chatcmpl-${crc.toString(16).padStart(8, '0')}${counter.toString(16).padStart(6, '0')}`,
      );
      const seed = crc32(Buffer.from(Int32Array.from(ids).buffer));
      const expected = syntheticReply(seed, { completionWords: 12, reasoningWords: 0, format: 'json' }, null);
      expect(body.choices[0]?.message.content).toBe(expected.content);
      expect(policy.log.byResponseId(body.id)?.inputIdsDigest).toBe(tokenIdsDigest(ids));
    }
  });
});
