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
          expect(body.bytes().toString('utf8')).toBe(JSON.stringify({ messages: history }));
          expect(body.bytes().equals(Buffer.from(JSON.stringify({ messages: history })))).toBe(true);
        }
      }),
    );
  });
});
