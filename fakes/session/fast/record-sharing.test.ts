import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pythonJsonDumps } from '../../../common/python-json/dumps.ts';
import { PythonFloat } from '../../../common/python-json/values.ts';
import { messageTrie } from '../compose.ts';
import { buildForest, forestCase, parseMessage } from '../testing/near-miss-forest.ts';
import { TokenSnapshot } from '../token-snapshot.ts';
import { milesAttachWalk, pathMessages } from '../tree.ts';
import { takeEqualStored } from './attach-hints.ts';
import { installPromptIds, promptIdsFromSnapshot, promptSource } from './prompt-ids-getter.ts';
import { shareStoredMessages } from './shared-messages.ts';

/** The records' memory savings must not change a byte of what GET /sessions/{id} prints. */

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
        },
      ),
    );
  });
});

describe('installPromptIds', () => {
  it('reads as the plain prompt would, and hands over to the committed snapshot as a plain value does', () => {
    fc.assert(
      fc.property(
        fc.array(fc.nat({ max: 200_000 }), { maxLength: 30 }),
        fc.nat({ max: 30 }),
        fc.array(fc.nat({ max: 200_000 }), { maxLength: 10 }),
        fc.boolean(),
        fc.integer({ min: -1, max: 1 }),
        (ids, keep, more, present, lengthOff) => {
          // The chat route's prompt: the first `keep` ids of a parent's snapshot, then its own.
          const parent = TokenSnapshot.of(ids);
          const prompt = TokenSnapshot.extend(parent, keep, more);
          const plainIds = prompt.toArray();
          const plain: Record<string, unknown> = present ? { input_ids: 0, model: 'm' } : { model: 'm' };
          const lazy: Record<string, unknown> = present ? { input_ids: 0, model: 'm' } : { model: 'm' };
          plain.input_ids = plainIds;
          installPromptIds(lazy, prompt, prompt.length);
          expect(pythonJsonDumps(lazy)).toBe(pythonJsonDumps(plain));
          expect(Object.keys(lazy)).toEqual(Object.keys(plain));
          // The commit: the node's snapshot (prompt + completion) replaces it only at the prompt's length.
          const node = TokenSnapshot.of(plainIds.concat([7, 8]), parent);
          const length = plainIds.length + lengthOff;
          promptIdsFromSnapshot(plain, node, length);
          promptIdsFromSnapshot(lazy, node, length);
          expect(pythonJsonDumps(lazy)).toBe(pythonJsonDumps(plain));
          expect(promptSource(lazy)?.snapshot).toBe(lengthOff === 0 ? node : prompt);
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

function holdsFloat(v: unknown): boolean {
  if (v instanceof PythonFloat) return true;
  if (typeof v !== 'object' || v === null) return false;
  return Object.values(v).some(holdsFloat);
}

describe('shareStoredMessages', () => {
  it('keeps what the messages print and shares exactly the equal ones (same JSON, same key order)', () => {
    let shared = 0;
    let kept = 0;
    fc.assert(
      fc.property(forestCase, fc.nat(), (forest, pick) => {
        const { nodes } = buildForest(forest);
        const node = nodes[pick % nodes.length]!;
        const stored = pathMessages(node);
        for (const texts of forest.requests) {
          // Parsed again, as each request is: equal messages are not the same objects.
          const sent = texts.map(parseMessage);
          const before = pythonJsonDumps(sent);
          shareStoredMessages(sent, node);
          expect(pythonJsonDumps(sent)).toBe(before);
          sent.forEach((m, i) => {
            // Equal text in the same key order, floats excepted (a PythonFloat is shared only as itself).
            const same =
              i < stored.length && pythonJsonDumps(m) === pythonJsonDumps(stored[i]) && !holdsFloat(m);
            expect(m === stored[i]).toBe(same);
            if (same) shared += 1;
            else kept += 1;
          });
        }
      }),
      { numRuns: 200 },
    );
    expect(shared).toBeGreaterThan(200);
    expect(kept).toBeGreaterThan(200);
  });

  it("with the trie search's hints (attach-hints.ts), shares exactly what it shares comparing every message", () => {
    let hinted = 0;
    fc.assert(
      fc.property(forestCase, (forest) => {
        const { tree } = buildForest(forest, messageTrie());
        for (const texts of forest.requests) {
          const compared = texts.map(parseMessage);
          const plainFound = milesAttachWalk(tree, compared);
          shareStoredMessages(compared, plainFound.node);
          const sent = texts.map(parseMessage);
          const found = tree.findAttachPoint(sent);
          expect(found).toEqual(plainFound);
          expect(found.node).toBe(plainFound.node);
          // What the trie left for sharedRecordMemory (record-sharing.ts takes the same hints).
          const equalStored = takeEqualStored(sent) ?? [];
          // Taken once: the array searched again later gets that search's hints, never these.
          expect(takeEqualStored(sent)).toBeUndefined();
          shareStoredMessages(sent, found.node, equalStored);
          // Same objects at the same places: the stored ones where comparing shared, else each its own.
          const stored = new Set(pathMessages(found.node));
          sent.forEach((m, i) => {
            expect(stored.has(m)).toBe(stored.has(compared[i]));
            if (stored.has(m)) expect(m).toBe(compared[i]);
            if (equalStored[i] === m) hinted += 1;
          });
        }
      }),
      { numRuns: 200 },
    );
    expect(hinted).toBeGreaterThan(200);
  });

  it('does not share a message whose keys come in another order, nor a float with an int', () => {
    const { nodes } = buildForest({
      nodes: [
        { parent: -1, delta: ['{"role": "user", "content": "x"}', '{"role": "user", "content": [1]}'] },
      ],
      requests: [],
    });
    const sent: unknown[] = [
      { content: 'x', role: 'user' },
      parseMessage('{"role": "user", "content": [1.0]}'),
    ];
    shareStoredMessages(sent, nodes[0]!);
    expect(sent[0]).not.toBe(nodes[0]!.deltaMessages[0]);
    expect(sent[1]).not.toBe(nodes[0]!.deltaMessages[1]);
  });

  it('shares nothing for a new root', () => {
    const sent: unknown[] = [{ role: 'user', content: 'x' }];
    const copy = sent[0];
    shareStoredMessages(sent, null);
    expect(sent[0]).toBe(copy);
  });
});
