import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type PolicyLogEntry, PolicyRequestLog } from './request-log.ts';

/** The indexed log against the plain definition: a bounded list, oldest out first, lookups by scanning it. */
function entry(n: number, responseId: string | null, routingKey: string | null): PolicyLogEntry {
  return {
    at: n,
    method: 'POST',
    path: '/v1/chat/completions',
    routingKey,
    messageCount: 0,
    messagesDigest: '',
    lastMessageHead: '',
    inputIdsLength: null,
    inputIdsDigest: null,
    responseId,
    status: responseId === null ? 400 : 200,
    finishReason: null,
    directive: null,
    traceTurn: null,
  };
}

const ids = fc.option(fc.constantFrom('r1', 'r2', 'r3', 'resp-0'), { nil: null });
const keys = fc.option(fc.constantFrom('s1', 's2', 's3'), { nil: null });

describe('PolicyRequestLog', () => {
  it('answers as a scan of the last `limit` entries would, through adds, evictions and clears', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.array(
          fc.oneof(
            { weight: 12, arbitrary: fc.tuple(ids, keys) },
            { weight: 1, arbitrary: fc.constant('clear' as const) },
          ),
          {
            maxLength: 40,
          },
        ),
        (limit, ops) => {
          const log = new PolicyRequestLog(limit);
          let all: PolicyLogEntry[] = [];
          let dropped = 0;
          ops.forEach((op, n) => {
            if (op === 'clear') {
              log.clear();
              all = [];
              dropped = 0;
              return;
            }
            const e = entry(n, op[0], op[1]);
            log.add(e);
            all.push(e);
            if (all.length > limit) {
              all.shift();
              dropped += 1;
            }
            expect(log.entries()).toEqual(all);
            expect(log.size).toBe(all.length);
            expect(log.droppedCount).toBe(dropped);
            for (const id of ['r1', 'r2', 'r3', 'resp-0'])
              expect(log.byResponseId(id)).toBe(all.find((x) => x.responseId === id));
            for (const key of ['s1', 's2', 's3'])
              expect(log.byRoutingKey(key)).toEqual(all.filter((x) => x.routingKey === key));
          });
        },
      ),
      { numRuns: 200 },
    );
  });
});
