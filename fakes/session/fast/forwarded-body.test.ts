import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pythonJsonDumps } from '../../../common/python-json/dumps.ts';
import { pythonJsonLoads } from '../../../common/python-json/loads.ts';
import { PythonFloat } from '../../../common/python-json/values.ts';
import { pythonJson } from '../../../test/helpers/python-oracle.ts';
import { TokenSnapshot } from '../token-snapshot.ts';
import { forwardedBodyBytes } from './forwarded-body.ts';
import { installPromptIds } from './prompt-ids-getter.ts';

const forwardedBodyJson = (body: Record<string, unknown>): string =>
  forwardedBodyBytes(body).toString('utf8');

// Texts with what a writer could get wrong: separators inside strings, escapes, non-ASCII, DEL, a lone
// surrogate (ensure_ascii writes it escaped), line separators.
const text = fc
  .array(
    fc.constantFrom('a', ', ', ': ', '\n', '"', '\\', ' ', 'é', '😀', '\u007f', '\u2028', '\ud800', '{}'),
    {
      maxLength: 5,
    },
  )
  .map((parts) => parts.join(''));
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small' },
    text,
    fc.integer({ min: -(2 ** 40), max: 2 ** 40 }),
    fc.constantFrom(0.5, 1e-7, 1e16, -0),
    fc.constantFrom(1, 2.5, 0).map((v) => new PythonFloat(v)),
    fc.constantFrom(null, true, false),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(text, tie('value'), { maxKeys: 3 }),
  ),
}));
const message = fc.oneof(
  { weight: 4, arbitrary: fc.record({ role: fc.constantFrom('user', 'tool'), content: text }) },
  { weight: 2, arbitrary: fc.dictionary(text, value, { maxKeys: 4 }) },
  // Not a message object: the writer must not care.
  { weight: 1, arbitrary: value },
);
// A tool output of 1–20 KB (the kept list bytes grow in steps of a quarter plus 4 KB).
const longMessage = fc
  .tuple(text, fc.integer({ min: 200, max: 4000 }))
  .map(([t, n]) => ({ role: 'tool', content: `${t}output `.repeat(n).slice(0, n * 5) }));
const extras = fc.dictionary(
  fc.constantFrom('model', 'temperature', 'logprobs', 'input_ids', 'tools', 'é', 'messages '),
  value,
  { maxKeys: 3 },
);
interface Conversation {
  readonly turns: unknown[][];
  readonly extras: Record<string, unknown>;
  readonly ids: number[];
  readonly messagesFirst: boolean;
}

/** A conversation of several requests, each re-sending the earlier messages as the same objects. */
const conversation: fc.Arbitrary<Conversation> = fc.record({
  turns: fc.array(fc.array(message, { maxLength: 3 }), { minLength: 1, maxLength: 4 }),
  extras,
  ids: fc.array(fc.nat({ max: 200_000 }), { maxLength: 6 }),
  messagesFirst: fc.boolean(),
});

function bodies({ turns, extras, ids, messagesFirst }: Conversation): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  const history: unknown[] = [];
  for (const turn of turns) {
    // bounded-spread: a generated turn of at most 3 messages
    history.push(...turn);
    const messages = [...history];
    const body: Record<string, unknown> = messagesFirst ? { messages, ...extras } : { ...extras, messages };
    body.input_ids = ids;
    out.push(body);
  }
  return out;
}

describe('forwardedBodyBytes', () => {
  it('writes pythonJsonDumps(body) byte for byte, first and re-sent messages alike', () => {
    fc.assert(
      fc.property(conversation, (c) => {
        for (const body of bodies(c)) {
          const expected = pythonJsonDumps(body);
          expect(forwardedBodyJson(body)).toBe(expected);
          // Again, with every message's text now cached.
          expect(forwardedBodyJson(body)).toBe(expected);
        }
      }),
    );
  });

  it('writes lists that re-send, branch from and re-spell an earlier list of the same first message', () => {
    // Each list: an earlier list's first objects by reference (its first one always, so the same cache
    // entry), then entries that are equal copies, numbers (`0` after `-0`), or new messages.
    const step = fc.record({
      from: fc.nat(),
      keep: fc.nat({ max: 6 }),
      tail: fc.array(
        fc.oneof(
          { weight: 3, arbitrary: message.map((m) => ({ kind: 'new' as const, m })) },
          { weight: 2, arbitrary: fc.nat().map((at) => ({ kind: 'copy' as const, at })) },
          { weight: 1, arbitrary: fc.constantFrom(0, -0, 'x').map((m) => ({ kind: 'new' as const, m })) },
          // Long enough that a list outgrows the bytes kept for its first message while re-sending them.
          { weight: 1, arbitrary: longMessage.map((m) => ({ kind: 'new' as const, m })) },
        ),
        { maxLength: 4 },
      ),
    });
    let reSent = 0;
    fc.assert(
      fc.property(
        fc.record({ role: fc.constant('system'), content: text }),
        fc.array(step, { maxLength: 8 }),
        (system, steps) => {
          const lists: unknown[][] = [[system]];
          for (const { from, keep, tail } of steps) {
            const earlier = lists[from % lists.length]!;
            const list = earlier.slice(0, Math.max(1, Math.min(keep, earlier.length)));
            if (list.length > 1) reSent += 1;
            for (const entry of tail) {
              if (entry.kind === 'new') list.push(entry.m);
              else list.push(structuredClone(earlier[entry.at % earlier.length]));
            }
            lists.push(list);
            const body = { model: 'm', messages: list };
            expect(forwardedBodyJson(body)).toBe(pythonJsonDumps(body));
          }
        },
      ),
      { numRuns: 300 },
    );
    expect(reSent).toBeGreaterThan(100);
  });

  it('writes a history re-sent past a thousand messages (the kept message ends outgrow their first room)', () => {
    const history: unknown[] = [{ role: 'system', content: 'sys' }];
    for (let step = 0; step < 13; step += 1) {
      for (let k = 0; k < 100; k += 1) history.push({ role: 'tool', content: `out ${step}.${k}` });
      const body = { model: 'm', messages: history.slice() };
      expect(forwardedBodyJson(body)).toBe(pythonJsonDumps(body));
    }
    // Then a branch back to an early prefix: its end is one the kept ends held before they grew.
    const branch = { model: 'm', messages: [...history.slice(0, 500), { role: 'user', content: 'again' }] };
    expect(forwardedBodyJson(branch)).toBe(pythonJsonDumps(branch));
  });

  it('writes an `input_ids` prompt getter (prompt-ids-getter.ts) from its snapshot as pythonJsonDumps reads it', () => {
    // Mostly 32-bit ids (typed-array pieces, their digits cached), sometimes what a plain tail keeps.
    const tokenId = fc.oneof(
      { weight: 12, arbitrary: fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 }) },
      { weight: 1, arbitrary: fc.constantFrom(-0, 0.5, 2 ** 31, 2 ** 53, 1e21, Number.NaN) },
    );
    const steps = fc.array(fc.tuple(fc.nat({ max: 40 }), fc.array(tokenId, { maxLength: 20 })), {
      minLength: 1,
      maxLength: 6,
    });
    fc.assert(
      fc.property(
        steps,
        fc.nat({ max: 40 }),
        fc.array(tokenId, { maxLength: 8 }),
        extras,
        fc.nat({ max: 2 }),
        (chain, keep, more, extra, where) => {
          // A chain of node snapshots, then a prompt extending the last one (the chat route's).
          let ids: number[] = [];
          let node: TokenSnapshot | null = null;
          for (const [kept, added] of chain) {
            ids = ids.slice(0, kept).concat(added);
            node = TokenSnapshot.of(ids, node);
          }
          const prompt = TokenSnapshot.extend(node!, keep, more);
          const body: Record<string, unknown> =
            where === 0
              ? { input_ids: 0, ...extra }
              : { ...extra, messages: [{ role: 'user', content: 'é' }] };
          installPromptIds(body, prompt, prompt.length);
          if (where === 2) body.last = true;
          // pythonJsonDumps reads the getter: the plain array, written by the general writer.
          const expected = pythonJsonDumps(body);
          expect(forwardedBodyJson(body)).toBe(expected);
          // Again, with the pieces' digits now cached.
          expect(forwardedBodyJson(body)).toBe(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('writes `messages` that is not a list, or absent, as the writer does', () => {
    for (const body of [{ messages: 'x' }, { messages: { a: [1] } }, { model: 'm' }, {}, { messages: [] }]) {
      expect(forwardedBodyJson(body)).toBe(pythonJsonDumps(body));
    }
  });

  it('gives CPython’s json.dumps bytes for the body json.loads reads from the same text', () => {
    const texts = fc
      .sample(conversation, { numRuns: 150, seed: 31 })
      .flatMap((c) => bodies(c))
      // The client's text as CPython reads it (floats spelt as floats, surrogates escaped).
      .map((body) => pythonJsonDumps(body));
    const expected = pythonJson<string[]>(
      'import json,sys\nprint(json.dumps([json.dumps(json.loads(t)) for t in json.load(sys.stdin)]))',
      texts,
    );
    // Parsed twice, as two requests carry the same history: the second write reuses the first's texts.
    const first = texts.map((t) => pythonJsonLoads(t, { keepFloats: true }) as Record<string, unknown>);
    expect(first.map(forwardedBodyJson)).toEqual(expected);
    expect(first.map(forwardedBodyJson)).toEqual(expected);
    expect(texts.length).toBeGreaterThan(150);
  });
});
