import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pythonJsonDumps } from '../../common/python-json.ts';
import { promptIdsFromSnapshot, promptSource, shareEarlierMessages } from './record.ts';
import { TokenSnapshot } from './token-snapshot.ts';

/** The records' memory savings must not change a byte of what GET /sessions/{id} prints. */

const text = fc.string({ maxLength: 20 });
const message = fc.oneof(
  fc.record({ role: fc.constantFrom('user', 'assistant', 'tool'), content: text }),
  fc.record({ content: text, role: fc.constantFrom('user', 'assistant') }),
  fc.record({
    role: fc.constant('assistant'),
    content: fc.constant(null),
    tool_calls: fc.array(fc.record({ id: text })),
  }),
);

describe('promptIdsFromSnapshot', () => {
  it('prints the same request, input_ids in the same key position, read from the snapshot', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 200_000 }), { maxLength: 30 }),
        fc.array(fc.nat({ max: 200_000 }), { maxLength: 10 }),
        fc.nat({ max: 30 }),
        (prompt, completion, shared) => {
          const request: Record<string, unknown> = {
            model: 'm',
            messages: [],
            input_ids: [...prompt],
            logprobs: true,
          };
          const before = pythonJsonDumps(request);
          // The snapshot shares its first ids with a parent's, as a node's does.
          const parent = TokenSnapshot.of(prompt.slice(0, shared));
          promptIdsFromSnapshot(request, TokenSnapshot.of(prompt.concat(completion), parent), prompt.length);
          expect(pythonJsonDumps(request)).toBe(before);
          expect(JSON.stringify(request)).toBe(JSON.stringify({ ...request }));
          expect(Object.keys(request)).toEqual(['model', 'messages', 'input_ids', 'logprobs']);
          expect(Object.getOwnPropertyDescriptor(request, 'input_ids')?.get).toBeTypeOf('function');
          const source = promptSource(request);
          expect(source?.length).toBe(prompt.length);
          expect(source?.snapshot.slice(0, source.length)).toEqual(request.input_ids);
        },
      ),
    );
  });
});

describe('promptSource', () => {
  it('is null for a plain input_ids, one the getter was not installed on, or one replaced afterwards', () => {
    const plain: Record<string, unknown> = { input_ids: [1, 2] };
    expect(promptSource(plain)).toBeNull();
    // A length that does not match leaves the plain value (no getter).
    promptIdsFromSnapshot(plain, TokenSnapshot.of([1, 2, 3]), 3);
    expect(promptSource(plain)).toBeNull();
    const replaced: Record<string, unknown> = { input_ids: [1, 2] };
    promptIdsFromSnapshot(replaced, TokenSnapshot.of([1, 2, 3]), 2);
    expect(promptSource(replaced)).not.toBeNull();
    Object.defineProperty(replaced, 'input_ids', { get: () => [9], enumerable: true, configurable: true });
    expect(promptSource(replaced)).toBeNull();
  });
});

describe('shareEarlierMessages', () => {
  it('keeps what the messages print and shares exactly the equal ones (same JSON, same key order)', () => {
    fc.assert(
      fc.property(
        fc.array(message, { maxLength: 6 }),
        fc.array(message, { maxLength: 6 }),
        fc.boolean(),
        (a, b, extend) => {
          // Half the cases re-send the earlier history (parsed again, so equal but not the same objects).
          const earlier = a;
          const sent: unknown[] = extend ? [...(JSON.parse(JSON.stringify(a)) as unknown[]), ...b] : b;
          const before = pythonJsonDumps(sent);
          shareEarlierMessages(sent, earlier);
          expect(pythonJsonDumps(sent)).toBe(before);
          sent.forEach((m, i) => {
            const same = i < earlier.length && JSON.stringify(m) === JSON.stringify(earlier[i]);
            expect(m === earlier[i]).toBe(same);
          });
        },
      ),
    );
  });

  it('does not share a message whose keys come in another order', () => {
    const earlier = [{ role: 'user', content: 'x' }];
    const sent: unknown[] = [{ content: 'x', role: 'user' }];
    shareEarlierMessages(sent, earlier);
    expect(sent[0]).not.toBe(earlier[0]);
  });
});
