import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson, messagesDigest, tokenIdsDigest } from '../../contracts/request-digest.ts';
import type { PolicyRequest } from '../model/rollout.ts';
import { isResend } from './request-join.ts';

/** A log entry as the replay reads it (replay/driver/rollout.ts): digests and lengths only. */
function logged(messages: readonly unknown[], ids: readonly number[] | null): PolicyRequest {
  return {
    response_id: 'r',
    messages_digest: messagesDigest(messages),
    last_message_head: '',
    input_ids_length: ids === null ? null : ids.length,
    input_ids_digest: ids === null ? null : tokenIdsDigest(ids),
    output_ids: null,
  };
}

const message = fc.dictionary(
  fc.constantFrom('role', 'content', 'name', 'tool_call_id', 'reasoning_content'),
  fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)),
  { noNullPrototype: true },
);
const messages = fc.array(message, { maxLength: 4 });
const ids = fc.option(fc.array(fc.integer({ min: 0, max: 200_000 }), { maxLength: 30 }), { nil: null });

/** Rebuilds each object with its keys in reverse order: the same message, spelled differently. */
function respelled(list: readonly Record<string, unknown>[]): Record<string, unknown>[] {
  return list.map((m) => Object.fromEntries(Object.entries(m).reverse()));
}

describe('isResend on digests', () => {
  it('agrees with comparing the arrays themselves (ids when both have them, else messages)', () => {
    fc.assert(
      fc.property(messages, ids, messages, ids, fc.boolean(), (ma, ia, mb, ib, same) => {
        // Half the cases compare a request with a copy of itself, respelled: those must be re-sends.
        const [m2, i2] = same ? [respelled(ma), ia === null ? null : [...ia]] : [mb, ib];
        const oracle = ia !== null && i2 !== null ? isDeepStrictEqual(ia, i2) : isDeepStrictEqual(ma, m2);
        expect(isResend(logged(ma, ia), logged(m2, i2))).toBe(oracle);
      }),
    );
  });

  it('tells a changed token apart from a true re-send', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 200_000 }), { minLength: 1, maxLength: 40 }),
        fc.nat(),
        fc.integer({ min: 1, max: 1000 }),
        (prompt, at, delta) => {
          const changed = [...prompt];
          const i = at % prompt.length;
          changed[i] = changed[i]! + delta;
          const msgs = [{ role: 'user', content: 'same text' }];
          expect(isResend(logged(msgs, prompt), logged(msgs, [...prompt]))).toBe(true);
          expect(isResend(logged(msgs, prompt), logged(msgs, changed))).toBe(false);
          // One id more or fewer is a different prompt too.
          expect(isResend(logged(msgs, prompt), logged(msgs, prompt.slice(1)))).toBe(false);
        },
      ),
    );
  });

  it('tells a changed message apart from a true re-send when the log has no ids', () => {
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 1, maxLength: 6 }), fc.nat(), (texts, at) => {
        const msgs = texts.map((content, i) => ({ role: i % 2 ? 'assistant' : 'user', content }));
        const changed = msgs.map((m, i) => (i === at % msgs.length ? { ...m, content: `${m.content}x` } : m));
        expect(isResend(logged(msgs, null), logged(respelled(msgs), null))).toBe(true);
        expect(isResend(logged(msgs, null), logged(changed, null))).toBe(false);
        expect(isResend(logged(msgs, null), logged(msgs.slice(1), null))).toBe(false);
      }),
    );
  });
});

describe('messagesDigest', () => {
  it('is the sha256 of the whole canonical JSON, though fed a message at a time', () => {
    fc.assert(
      fc.property(messages, (list) => {
        const whole = createHash('sha256').update(canonicalJson(list), 'utf8').digest('hex');
        expect(messagesDigest(list)).toBe(whole);
      }),
    );
  });
});
