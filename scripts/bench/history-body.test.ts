import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HistoryBody } from './history-body.ts';

describe('HistoryBody', () => {
  it('gives the bytes of JSON.stringify({ messages }) after every push', () => {
    const message = fc.record({
      role: fc.constantFrom('system', 'user', 'assistant'),
      content: fc.oneof(
        fc.string({ unit: 'grapheme' }),
        fc.string({ unit: fc.constantFrom('"', '\\', '\n', 'é', '\ud800') }),
        fc.constant(null),
        // Long enough to outgrow the buffer's first 64 KB within a few turns.
        fc
          .tuple(fc.constantFrom('x', 'é', '😀'), fc.integer({ min: 1000, max: 30_000 }))
          .map(([c, n]) => c.repeat(n)),
      ),
    });
    fc.assert(
      fc.property(fc.array(fc.array(message, { maxLength: 3 }), { maxLength: 6 }), (turns) => {
        const body = new HistoryBody();
        const history: unknown[] = [];
        expect(body.bytes().equals(Buffer.from(JSON.stringify({ messages: history })))).toBe(true);
        for (const added of turns) {
          for (const message of added) {
            body.push(message);
            history.push(message);
          }
          // A view taken now stays the same bytes until the next push.
          const view = body.bytes();
          expect(view.toString('utf8')).toBe(JSON.stringify({ messages: history }));
          expect(body.bytes().equals(Buffer.from(JSON.stringify({ messages: history })))).toBe(true);
          expect(view.equals(body.bytes())).toBe(true);
        }
      }),
    );
  });
});
