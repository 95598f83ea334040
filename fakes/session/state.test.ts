import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TITO_MODELS, titoFamily } from '../tokenizer/tito.ts';
import { HttpFailure } from './errors.ts';
import { assertPretokenizedPrefix, positionForRequest, preparePrompt, SessionState } from './state.ts';
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
    expect(preparePrompt(family, root, messages, {}).slice(0, 5)).toEqual([1, 2, 3, 10, 5]);
    expect(positionForRequest(state, [{ role: 'developer', content: 'x' }])).toBeNull();
    expect(state.activeLeaf).toBeNull();
    expect(preparePrompt(family, null, [{ role: 'developer', content: 'x' }], {}).slice(0, 1)[0]).toBe(6);
  });

  it('builds a child prompt as mergeTokens(the whole snapshot, suffix) does, for every family', () => {
    // Mostly the glm47 openers (7, 8) and small ids, so snapshots often end on what a junction drops.
    const tokenId = fc.oneof(fc.constantFrom(7, 8, 1, 2), fc.integer({ min: 0, max: 300 }), fc.constant(-0));
    const turns = fc.array(
      fc.tuple(fc.array(tokenId, { maxLength: 6 }), fc.array(tokenId, { minLength: 1, maxLength: 4 })),
      { minLength: 1, maxLength: 4 },
    );
    const message = fc.record({
      role: fc.constantFrom('user', 'tool', 'assistant', 'system'),
      content: fc.constantFrom('', 'ls -la', 'w1 w2 w3', 'é x'),
    });
    fc.assert(
      fc.property(
        fc.constantFrom(...TITO_MODELS),
        turns,
        fc.array(message, { minLength: 1, maxLength: 3 }),
        fc.constantFrom({}, { enable_thinking: false }),
        (model, specs, suffix, kwargs) => {
          const family = titoFamily(model);
          const state = new SessionState('s');
          let node = null as ReturnType<typeof addTurn> | null;
          let prompt: number[] = [];
          for (const [more, output] of specs) {
            prompt = [...(node?.tokens.toArray() ?? prompt), ...more];
            node = addTurn(state.tree, node, { prompt, output, messages: [{ role: 'user', content: 'u' }] });
          }
          const attach = node!;
          const messages = [...Array.from({ length: attach.depth }, () => ({})), ...suffix];
          const expected = family.mergeTokens(attach.tokens.toArray(), suffix, kwargs);
          const got = preparePrompt(family, attach, messages, kwargs).toArray();
          expect(got.length).toBe(expected.length);
          // A loop, not `every`: a hole left in the built array must count as a difference.
          for (let i = 0; i < expected.length; i++)
            expect(Object.is(got[i], expected[i]), `at ${i}`).toBe(true);
        },
      ),
      { numRuns: 300 },
    );
  });
});
