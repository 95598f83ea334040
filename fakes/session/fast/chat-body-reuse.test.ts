import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { faithfulJsonDumps } from '../../../common/python-json/faithful-dumps.ts';
import { pythonJsonLoadsBytes } from '../../../common/python-json/loads.ts';
import { isJsonObject } from '../../../common/python-json/values.ts';
import { ChatBodyReuse } from './chat-body-reuse.ts';

/**
 * The reusing parse against the whole parse (`pythonJsonLoadsBytes(raw, { keepFloats: true })`, the
 * oracle, never the code under test): random sequences of bodies per session, interleaved over three
 * sessions, as an agent re-sends its history (growing, branching back, edited, shortened) and as
 * clients get it wrong (duplicate or escaped `messages` keys, broken tails, invalid UTF-8, other
 * encodings). Every load gives the same value or the same error; each case kind is counted and required.
 */

type Outcome = { ok: true; text: string } | { ok: false; error: string };

// As common/python-json/fast-path.test.ts: every difference shows (-0, NaN, key order, floats kept as floats,
// lone surrogates), plus the error's class and its full message (positions included).
function outcome(run: () => unknown): Outcome {
  try {
    const v = run();
    return {
      ok: true,
      text: `${faithfulJsonDumps(v)}|${Object.getPrototypeOf(v ?? 0) === Object.prototype}`,
    };
  } catch (error) {
    return { ok: false, error: `${(error as Error).constructor.name}: ${(error as Error).message}` };
  }
}

const wholeParse = (raw: Buffer) => pythonJsonLoadsBytes(raw, { keepFloats: true });

interface Piece {
  readonly bytes: Buffer;
  readonly cases: readonly string[];
}
const piece = (text: string | Buffer, ...cases: string[]): Piece => ({
  bytes: typeof text === 'string' ? Buffer.from(text, 'utf8') : text,
  cases,
});

// Content text as it stands between the quotes (escapes written out).
const contentUnit: fc.Arbitrary<Piece> = fc.oneof(
  fc
    .constantFrom('a', 'hello world', ' ', '\\"', '\\\\', '\\n', '[', ']', '{', '}', ',', ':', '1.0')
    .map((t) => piece(t)),
  fc.constantFrom('é', '😀', '中', '\u2028').map((t) => piece(t, 'raw-non-ascii')),
  fc.constantFrom('\\ud800', '\\uDC00', '\\uD83D\\uDE00').map((t) => piece(t, 'surrogate-escape')),
  // An encoded lone surrogate: CPython's `surrogatepass` decodes it.
  fc.constant(piece(Buffer.from([0xed, 0xa0, 0x80]), 'encoded-surrogate')),
);
const extraField: fc.Arbitrary<Piece> = fc.constantFrom(
  piece('"reward": 1.0', 'float'),
  piece('"z": [1, 2.5e3, -0, 1E+2]', 'float'),
  piece('"n": 123456789012345678901234567890', 'big-int'),
  piece('"x": NaN', 'nan-infinity'),
  piece('"y": -Infinity', 'nan-infinity'),
  piece('"tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": "{\\"a\\": 1}"}}]'),
  piece('"role": "tool"', 'duplicate-inner-key'),
);
const sepArb = fc.constantFrom(', ', ',', ',\n  ', ' ,\t');
const objectMessage: fc.Arbitrary<Piece> = fc
  .tuple(
    fc.constantFrom('user', 'tool', 'assistant'),
    fc.array(contentUnit, { maxLength: 6 }),
    fc.array(extraField, { maxLength: 2 }),
    sepArb,
  )
  .map(([role, units, extras, sep]) => {
    const parts = [
      Buffer.from(`{"role": "${role}"${sep}"content": "`),
      ...units.map((u) => u.bytes),
      Buffer.from('"'),
      ...extras.flatMap((e) => [Buffer.from(sep), e.bytes]),
      Buffer.from('}'),
    ];
    return { bytes: Buffer.concat(parts), cases: [...units, ...extras].flatMap((p) => p.cases) };
  });
const message: fc.Arbitrary<Piece> = fc.oneof(
  { weight: 8, arbitrary: objectMessage },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom('42', '"just text"', 'null', '[1, 2]', '1.5')
      .map((t) => piece(t, 'scalar-message')),
  },
);

/** How a session's client writes its bodies. */
interface Style {
  /** Where `messages` stands among the members: first, between, last. */
  readonly order: 0 | 1 | 2;
  readonly sep: string;
  readonly colon: string;
  readonly lead: string;
  readonly inner: string;
  /** Every body of the session encoded so (mostly plain UTF-8). */
  readonly encoding: 'utf-8' | Encoding;
}
const styleArb: fc.Arbitrary<Style> = fc.record({
  order: fc.constantFrom(0, 1, 2) as fc.Arbitrary<0 | 1 | 2>,
  sep: sepArb,
  colon: fc.constantFrom(': ', ':', ' : '),
  lead: fc.constantFrom('', ' ', '\n'),
  inner: fc.constantFrom('', ' ', '\n'),
  encoding: fc.oneof(
    { weight: 6, arbitrary: fc.constant('utf-8' as const) },
    { weight: 1, arbitrary: fc.constantFrom<Encoding>('utf-8-sig', 'utf-16-le', 'utf-32-be') },
  ),
});

type OneOff =
  | { readonly kind: 'dup-key'; readonly where: 'before' | 'after' }
  | { readonly kind: 'escaped-key'; readonly where: 'own' | 'after' }
  | { readonly kind: 'trailing-comma' }
  | { readonly kind: 'missing-comma' }
  | { readonly kind: 'not-a-list' }
  | { readonly kind: 'no-messages' };

/** A body: the members around the array of `messages`, in the style's order and spacing. */
function writeBody(history: readonly Piece[], style: Style, oneOff?: OneOff): Buffer {
  const { sep, colon } = style;
  const items = history.map((m) => m.bytes);
  const joined: Buffer[] = [];
  for (const [i, b] of items.entries()) {
    if (i > 0) joined.push(Buffer.from(sep));
    joined.push(b);
  }
  if (oneOff?.kind === 'trailing-comma') joined.push(Buffer.from(sep));
  const array = Buffer.concat([Buffer.from(`[${style.inner}`), ...joined, Buffer.from(`${style.inner}]`)]);
  const key = oneOff?.kind === 'escaped-key' && oneOff.where === 'own' ? '"m\\u0065ssages"' : '"messages"';
  let messages = Buffer.concat([Buffer.from(`${key}${colon}`), array]);
  if (oneOff?.kind === 'not-a-list') messages = Buffer.from(`"messages"${colon}{"role": "user"}`);
  const other = Buffer.from(`"messages"${colon}[{"role": "user", "content": "other"}]`);
  const members = [Buffer.from(`"model"${colon}"m"`), Buffer.from(`"temperature"${colon}1.0`)];
  if (oneOff?.kind !== 'no-messages') members.splice(style.order, 0, messages);
  if (oneOff?.kind === 'dup-key') members.splice(oneOff.where === 'before' ? 0 : members.length, 0, other);
  // As many messages as the history, other ones: only the key tells which array Python keeps.
  if (oneOff?.kind === 'escaped-key' && oneOff.where === 'after')
    members.push(
      Buffer.from(`"m\\u0065ssages"${colon}[${history.map(() => '{"content": "escaped"}').join(sep)}]`),
    );
  const body: Buffer[] = [Buffer.from(`${style.lead}{`)];
  for (const [i, m] of members.entries()) {
    if (i > 0) body.push(Buffer.from(sep));
    body.push(m);
  }
  body.push(Buffer.from(`}${style.lead}`));
  return Buffer.concat(body);
}

type Encoding = 'utf-8-sig' | 'utf-16-le' | 'utf-16-be' | 'utf-16-bom' | 'utf-32-be';
function encode(body: Buffer, encoding: Encoding): Buffer {
  if (encoding === 'utf-8-sig') return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), body]);
  const le = Buffer.from(body.toString('utf8'), 'utf16le');
  if (encoding === 'utf-16-le') return le;
  if (encoding === 'utf-16-bom') return Buffer.concat([Buffer.from([0xff, 0xfe]), le]);
  const be = Buffer.from(le).swap16();
  if (encoding === 'utf-16-be') return be;
  // UTF-32-BE: each UTF-16 unit widened (a lone surrogate then fails as CPython's codec fails).
  const out = Buffer.alloc(be.length * 2);
  for (let i = 0; i < be.length; i += 2) be.copy(out, i * 2 + 2, i, i + 2);
  return out;
}

/** One step of the sequence; `pick` chooses positions, `session` the session it goes to. */
const stepArb = fc.record({
  session: fc.nat(2),
  kind: fc.constantFrom(
    'grow',
    'grow',
    'grow',
    'grow',
    'resend',
    'branch',
    'edit-same-length',
    'edit-other-length',
    'remove',
    'restyle',
    'one-off',
    'one-off',
    'one-off',
    'broken-tail',
    'invalid-utf8-tail',
    'invalid-utf8-prefix',
    'encoding',
    'encoding',
  ),
  pick: fc.nat(),
  more: fc.array(message, { minLength: 1, maxLength: 3 }),
  style: styleArb,
  oneOff: fc.constantFrom<OneOff>(
    { kind: 'dup-key', where: 'before' },
    { kind: 'dup-key', where: 'after' },
    { kind: 'escaped-key', where: 'own' },
    { kind: 'escaped-key', where: 'after' },
    { kind: 'trailing-comma' },
    { kind: 'missing-comma' },
    { kind: 'not-a-list' },
    { kind: 'no-messages' },
  ),
  encoding: fc.constantFrom<Encoding>('utf-8-sig', 'utf-16-le', 'utf-16-be', 'utf-16-bom', 'utf-32-be'),
  junk: fc.constantFrom('"', ',', '}', ']', 'x', '\\', '{'),
  share: fc.boolean(),
});
type Step = typeof stepArb extends fc.Arbitrary<infer T> ? T : never;

interface Session {
  history: Piece[];
  style: Style;
  readonly reuse: ChatBodyReuse;
  /** The last body was the history as is, in plain UTF-8, and parsed: all of it is kept. */
  plain: boolean;
}

/** Steps whose body is the session's history as is. */
const PLAIN = new Set([
  'grow',
  'resend',
  'branch',
  'edit-same-length',
  'edit-other-length',
  'remove',
  'restyle',
]);

/** A copy that is the same JSON (same keys in the same order; a `PythonFloat` kept as itself). */
function sameJsonCopy(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sameJsonCopy);
  if (isJsonObject(v) && Object.getPrototypeOf(v) === Object.prototype) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) {
      if (k === '__proto__')
        Object.defineProperty(out, k, {
          value: sameJsonCopy(x),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      else out[k] = sameJsonCopy(x);
    }
    return out;
  }
  return v;
}

/** The body one step sends (and the session's history after it), with the cases it makes. */
function bodyOf(s: Session, step: Step, cases: string[]): Buffer {
  const body = utf8BodyOf(s, step, cases);
  const encoding = step.kind === 'encoding' ? step.encoding : s.style.encoding;
  if (encoding === 'utf-8') return body;
  cases.push(encoding);
  return encode(body, encoding);
}

function utf8BodyOf(s: Session, step: Step, cases: string[]): Buffer {
  const n = s.history.length;
  const at = n === 0 ? 0 : step.pick % n;
  const grown = () => [...s.history, ...step.more];
  switch (step.kind) {
    case 'grow':
      s.history = grown();
      break;
    case 'resend':
      cases.push('resend');
      break;
    case 'branch':
      cases.push('branch-back');
      s.history = [...s.history.slice(0, step.pick % (n + 1)), ...step.more.slice(0, step.pick % 3)];
      break;
    case 'edit-same-length': {
      if (n === 0) break;
      const bytes = Buffer.from(s.history[at]!.bytes);
      const letters = [...bytes.keys()].filter((i) => bytes[i]! >= 0x61 && bytes[i]! <= 0x7a);
      if (letters.length === 0) break;
      const i = letters[step.pick % letters.length]!;
      // Another letter: in a key or a text, a changed message; in `null` or `NaN`-like words, broken JSON.
      bytes[i] = bytes[i] === 0x7a ? 0x61 : bytes[i]! + 1;
      cases.push('edit-same-length');
      s.history = s.history.map((m, k) => (k === at ? { bytes, cases: m.cases } : m));
      break;
    }
    case 'edit-other-length':
      if (n === 0) break;
      cases.push('edit-other-length');
      s.history = s.history.map((m, k) => (k === at ? (step.more[0] as Piece) : m));
      break;
    case 'remove':
      if (n === 0) break;
      cases.push('remove');
      s.history = s.history.filter((_, k) => k !== at);
      break;
    case 'restyle':
      cases.push('restyle');
      s.style = step.style;
      s.history = grown();
      break;
    case 'one-off': {
      cases.push(`${step.oneOff.kind}${'where' in step.oneOff ? `-${step.oneOff.where}` : ''}`);
      // Half of them right after the re-sent history (nothing new before what is wrong).
      const sent = step.pick % 2 === 0 ? grown() : s.history;
      if (step.oneOff.kind === 'missing-comma' && n > 0) {
        // The next message glued to the last re-sent one: `[…, {…}{…}]` or `[…, 42"just text"]`.
        const glued = piece(Buffer.concat([s.history[n - 1]!.bytes, step.more[0]!.bytes]));
        return writeBody([...s.history.slice(0, -1), glued], s.style);
      }
      return writeBody(sent, s.style, step.oneOff);
    }
    case 'broken-tail': {
      // Cut or spoiled after the re-sent bytes: the error must be the whole parse's, positions included.
      const body = writeBody(grown(), s.style);
      const from = writeBody(s.history, s.style).length - s.style.lead.length - 1;
      const cut = from + (step.pick % Math.max(1, body.length - from));
      cases.push('broken-tail');
      return step.pick % 2 === 0
        ? body.subarray(0, cut)
        : Buffer.concat([body.subarray(0, cut), Buffer.from(step.junk), body.subarray(cut)]);
    }
    case 'invalid-utf8-tail': {
      cases.push('invalid-utf8-tail');
      const bad = piece(
        Buffer.concat([
          Buffer.from('{"role": "user", "content": "x'),
          Buffer.from([0xff]),
          Buffer.from('"}'),
        ]),
      );
      return writeBody([...s.history, bad], s.style);
    }
    case 'invalid-utf8-prefix': {
      if (n === 0) break;
      cases.push('invalid-utf8-prefix');
      const bad = piece(
        Buffer.concat([
          Buffer.from('{"role": "user", "content": "'),
          Buffer.from([0xc3, 0x28]),
          Buffer.from('"}'),
        ]),
      );
      return writeBody(
        s.history.map((m, k) => (k === at ? bad : m)),
        s.style,
      );
    }
    case 'encoding':
      s.history = grown();
      break;
  }
  return writeBody(s.history, s.style);
}

describe('ChatBodyReuse.load', () => {
  it('gives the whole parse’s value or error for every body of interleaved sessions', () => {
    const seen = new Map<string, number>();
    const count = (c: string) => seen.set(c, (seen.get(c) ?? 0) + 1);
    fc.assert(
      fc.property(
        fc.array(styleArb, { minLength: 3, maxLength: 3 }),
        fc.array(stepArb, { minLength: 1, maxLength: 16 }),
        (styles, steps) => {
          const sessions: Session[] = styles.map((style) => ({
            history: [],
            style,
            reuse: new ChatBodyReuse(),
            plain: false,
          }));
          let previous = -1;
          for (const step of steps) {
            const s = sessions[step.session]!;
            const cases: string[] = [];
            if (previous !== -1 && previous !== step.session) cases.push('interleaved');
            previous = step.session;
            const raw = bodyOf(s, step, cases);
            for (const m of s.history) for (const c of m.cases) cases.push(c);
            const kept = s.reuse.keptMessages;
            const expected = outcome(() => wholeParse(raw));
            let value: unknown;
            const got = outcome(() => {
              value = s.reuse.load(raw);
              return value;
            });
            expect(got).toEqual(expected);
            const reused = s.reuse.lastReused;
            const plain = PLAIN.has(step.kind) && s.style.encoding === 'utf-8' && expected.ok;
            if (plain && isJsonObject(value) && Array.isArray(value.messages)) {
              // Everything located is kept, and a grown or re-sent history reuses all that was kept.
              expect(s.reuse.keptMessages).toBe(value.messages.length);
              if (s.plain && (step.kind === 'grow' || step.kind === 'resend')) {
                expect(reused).toBe(kept);
                cases.push('reuse-count-checked');
              }
            }
            s.plain = plain;
            if (reused > 0) cases.push(reused < kept ? 'reused-part' : 'reused-all');
            if (kept > 0 && reused === 0) cases.push('parsed-whole-after-kept');
            if (kept > 0 && !expected.ok) cases.push('error-with-kept');
            // Phase 1 then hands some messages the equal stored objects (shared-messages.ts shareStoredMessages).
            if (step.share && isJsonObject(value) && Array.isArray(value.messages)) {
              const list = value.messages;
              list.forEach((m, i) => {
                if (i % 2 === 0) list[i] = sameJsonCopy(m);
              });
              cases.push('shared');
            }
            // A guard is tested only where something was kept to reuse.
            for (const c of new Set(cases)) {
              count(c);
              if (kept > 0) count(`${c}@kept`);
            }
          }
        },
      ),
      { numRuns: 500 },
    );
    const required = [
      'interleaved',
      'resend',
      'branch-back',
      'edit-same-length',
      'edit-other-length',
      'remove',
      'restyle',
      'dup-key-before',
      'dup-key-after',
      'escaped-key-own',
      'escaped-key-after',
      'trailing-comma',
      'not-a-list',
      'no-messages',
      'broken-tail',
      'invalid-utf8-tail',
      'invalid-utf8-prefix',
      'utf-8-sig',
      'utf-16-le',
      'utf-16-be',
      'utf-16-bom',
      'utf-32-be',
      'raw-non-ascii',
      'surrogate-escape',
      'encoded-surrogate',
      'float',
      'big-int',
      'nan-infinity',
      'duplicate-inner-key',
      'scalar-message',
      'reused-all',
      'reused-part',
      'reuse-count-checked',
      'missing-comma',
      'parsed-whole-after-kept',
      'error-with-kept',
      'shared',
    ];
    // Where a body starts with the kept bytes, each guard has something to refuse.
    const requiredKept = [
      'resend',
      'branch-back',
      'edit-same-length',
      'edit-other-length',
      'remove',
      'restyle',
      'dup-key-after',
      'escaped-key-after',
      'trailing-comma',
      'missing-comma',
      'broken-tail',
      'invalid-utf8-tail',
      'invalid-utf8-prefix',
      'utf-8-sig',
      'utf-16-le',
      'utf-32-be',
      'interleaved',
      'shared',
    ].map((c) => `${c}@kept`);
    for (const c of required) expect(seen.get(c) ?? 0, c).toBeGreaterThanOrEqual(10);
    for (const c of requiredKept) expect(seen.get(c) ?? 0, c).toBeGreaterThanOrEqual(5);
  });
});

describe('ChatBodyReuse right after the kept bytes', () => {
  // Each body a guard must refuse, sent right after the body it repeats: what follows the kept
  // messages is the only thing wrong, so a missing guard gives a value where the whole parse does not.
  const utf8Style: fc.Arbitrary<Style> = styleArb.map((style) => ({ ...style, encoding: 'utf-8' }));
  it('gives the whole parse’s value or error for each body that differs only after the kept messages', () => {
    fc.assert(
      fc.property(
        fc.array(message, { minLength: 1, maxLength: 4 }),
        fc.array(message, { minLength: 1, maxLength: 2 }),
        utf8Style,
        fc.constantFrom('"', ',', '}', ']', 'x', '\\', '{', '1', '"x"'),
        (history, more, style, junk) => {
          const kept = writeBody(history, style);
          const glued = piece(Buffer.concat([history[history.length - 1]!.bytes, more[0]!.bytes]));
          // Just past the last message (only the members around the array follow, none of which holds it).
          const last = history[history.length - 1]!.bytes;
          const keptEnd = kept.lastIndexOf(last) + last.length;
          const variants: Array<[string, Buffer]> = [
            ['trailing-comma', writeBody(history, style, { kind: 'trailing-comma' })],
            ['missing-comma', writeBody([...history.slice(0, -1), glued], style)],
            ['dup-key-after', writeBody(history, style, { kind: 'dup-key', where: 'after' })],
            [
              'dup-key-after-grown',
              writeBody([...history, ...more], style, { kind: 'dup-key', where: 'after' }),
            ],
            ['escaped-key-after', writeBody(history, style, { kind: 'escaped-key', where: 'after' })],
            [
              'junk-after-kept',
              Buffer.concat([kept.subarray(0, keptEnd), Buffer.from(junk), kept.subarray(keptEnd)]),
            ],
            ['cut-after-kept', kept.subarray(0, keptEnd + 1 + (junk.length % 3))],
            [
              'invalid-utf8-after-kept',
              Buffer.concat([
                kept.subarray(0, keptEnd),
                Buffer.from(', "\xff"'),
                Buffer.from([0xff]),
                kept.subarray(keptEnd),
              ]),
            ],
            ['resend', kept],
            ['grown', writeBody([...history, ...more], style)],
          ];
          for (const [, body] of variants) {
            const reuse = new ChatBodyReuse();
            reuse.load(kept);
            expect(reuse.keptMessages).toBe(history.length);
            expect(outcome(() => reuse.load(body))).toEqual(outcome(() => wholeParse(body)));
            // And the next body after it, whatever was kept.
            const next = writeBody([...history, ...more], style);
            expect(outcome(() => reuse.load(next))).toEqual(outcome(() => wholeParse(next)));
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('ChatBodyReuse kept bytes', () => {
  it('reuses every kept message of a growing history, across the kept buffer’s growth, and after a branch', () => {
    const reuse = new ChatBodyReuse();
    const history: string[] = [];
    const body = () => Buffer.from(`{"model": "m", "messages": [${history.join(', ')}], "stream": false}`);
    for (let turn = 0; turn < 40; turn += 1) {
      history.push(
        `{"role": "${turn % 2 ? 'assistant' : 'user'}", "content": "turn ${turn} ${'é'.repeat(turn * 7)}"}`,
      );
      const raw = body();
      expect(outcome(() => reuse.load(raw))).toEqual(outcome(() => wholeParse(raw)));
      expect([reuse.lastReused, reuse.keptMessages]).toEqual([turn, turn + 1]);
    }
    // Back to turn 20 with another message: the first 20 reused, the kept ones cut there.
    history.length = 20;
    history.push('{"role": "user", "content": "another"}');
    const raw = body();
    expect(outcome(() => reuse.load(raw))).toEqual(outcome(() => wholeParse(raw)));
    expect([reuse.lastReused, reuse.keptMessages]).toEqual([20, 21]);
    history.push('{"role": "assistant", "content": "next"}');
    const next = body();
    expect(outcome(() => reuse.load(next))).toEqual(outcome(() => wholeParse(next)));
    expect([reuse.lastReused, reuse.keptMessages]).toEqual([21, 22]);
    reuse.release();
    expect(reuse.keptMessages).toBe(0);
  });
});
