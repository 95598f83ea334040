import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { titoFamily } from '../tokenizer/tito.ts';
import { HttpFailure } from './errors.ts';
import { assertPretokenizedPrefix, positionForRequest, preparePretokenized, SessionState } from './state.ts';
import { addTurn } from './testing/build-tree.ts';
import { TokenSnapshot } from './token-snapshot.ts';

describe('session state', () => {
  it('refuses a prompt that does not extend the stored snapshot (500 JSON), allowing the trim', () => {
    const failure = (() => {
      try {
        assertPretokenizedPrefix([1, 2, 3, 9], [1, 2, 4, 9, 10], 0, [{ role: 'user' }], {
          role: 'assistant',
        });
      } catch (error) {
        return error as HttpFailure;
      }
      return null;
    })();
    expect(failure).toBeInstanceOf(HttpFailure);
    expect(failure!.status).toBe(500);
    expect(JSON.parse(failure!.body).error).toBe(
      "pretokenized prefix mismatch: stored 4 tokens (checking first 4, allowing 0 trailing) are not a prefix of prompt_token_ids + completion_token_ids (5 tokens), first mismatch at index 2, matched 2/4 prefix tokens\nrequest_messages=[{'role': 'user'}]\nassistant_message={'role': 'assistant'}",
    );
    expect(() => assertPretokenizedPrefix([1, 2, 3, 9], [1, 2, 3, 8, 10], 1, [], {})).not.toThrow();
  });

  it('checks a stored TokenSnapshot exactly as the plain array it holds (same verdict, same message)', () => {
    const outcome = (run: () => void) => {
      try {
        run();
        return null;
      } catch (error) {
        return (error as HttpFailure).body;
      }
    };
    const ids = fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 12 });
    fc.assert(
      fc.property(ids, ids, ids, fc.nat({ max: 4 }), (shared, storedTail, all, trim) => {
        const stored = [...shared, ...storedTail];
        // The stored snapshot shares its first ids with a parent's, as a node's does.
        const snapshot = TokenSnapshot.of(stored, TokenSnapshot.of(shared));
        const probe = [...shared, ...all];
        expect(outcome(() => assertPretokenizedPrefix(snapshot, probe, trim, [], {}))).toBe(
          outcome(() => assertPretokenizedPrefix(stored, probe, trim, [], {})),
        );
      }),
    );
  });

  it('moves the view on positioning and renders new roots without role gating', () => {
    const state = new SessionState('s');
    const family = titoFamily('default');
    const root = addTurn(state.tree, null, {
      prompt: [1, 2, 3],
      output: [10, 5],
      messages: [{ role: 'user', content: 'u' }],
    });
    const messages = [...root.deltaMessages, { role: 'tool', content: 't' }];
    expect(positionForRequest(state, messages)).toBe(root);
    expect(state.activeLeaf).toBe(root);
    expect(preparePretokenized(family, root, messages, {}).slice(0, 5)).toEqual([1, 2, 3, 10, 5]);
    expect(positionForRequest(state, [{ role: 'developer', content: 'x' }])).toBeNull();
    expect(state.activeLeaf).toBeNull();
    expect(preparePretokenized(family, null, [{ role: 'developer', content: 'x' }], {})[0]).toBe(6);
  });
});
