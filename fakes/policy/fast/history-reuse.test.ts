import { createHash } from 'node:crypto';
import { runInNewContext } from 'node:vm';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { pythonJsonDumps } from '../../../common/python-json/dumps.ts';
import { ROUTING_KEY_HEADER } from '../../../contracts/policy-headers.ts';
import { canonicalJson, MESSAGE_HEAD_CHARS } from '../../../contracts/request-digest.ts';
import { createPolicy, type PolicyRequestLike } from '../handlers.ts';
import { PolicyRequestLog } from '../request-log.ts';
import { HistoryReuse } from './history-reuse.ts';
import { splitInputIds } from './input-ids-body.ts';

/**
 * Sequences of chat bodies per routing key, as a session server sends them and otherwise, read with
 * the reuse and against oracles that never reuse: `JSON.parse` of the whole text (the value), the
 * uncached split (`splitInputIds`: whether the body is the layout at all), `canonicalJson` hashed whole
 * (the digest); and a policy served the same bodies through `json()` only (every answer and log field).
 */

const utf8 = new TextDecoder('utf-8');
const sha = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

// Text that stresses the byte reuse: what the layout's keys look like, quotes, escapes, non-ASCII,
// astral characters and a lone surrogate (written as an escape by both writers).
const contentText = fc
  .array(
    fc.constantFrom(
      'a',
      'b',
      ' ',
      'é',
      '😀',
      '\ud800',
      '"',
      '\\',
      ', "input_ids": [',
      '"messages": [',
      ']}',
      '1, 2',
    ),
    { maxLength: 5 },
  )
  .map((parts) => parts.join(''));
const message = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({ role: fc.constantFrom('user', 'assistant', 'system'), content: contentText }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      role: fc.constant('assistant'),
      content: contentText,
      reasoning_content: fc.option(contentText),
      tool_calls: fc.constant(null),
    }),
  },
  // Keys JSON.parse makes own properties of, in another order, and not an object at all.
  {
    weight: 1,
    arbitrary: fc.record({ content: contentText, __proto__: fc.integer(), role: fc.constant('user') }),
  },
  { weight: 1, arbitrary: fc.oneof(contentText, fc.integer(), fc.constant(null)) },
);

type Writer = 'python' | 'python-utf8' | 'stringify' | 'duplicate-key';
/** A message's text as a writer spells it (a duplicate key: JSON.parse keeps the last one). */
function messageText(value: unknown, writer: Writer): string {
  if (writer === 'stringify') return JSON.stringify(value);
  if (writer === 'python-utf8') return pythonJsonDumps(value, { ensureAscii: false });
  if (writer === 'duplicate-key' && typeof value === 'object' && value !== null) {
    const text = pythonJsonDumps(value);
    return text.length > 2 ? `{"content": "first", ${text.slice(1)}` : text;
  }
  return pythonJsonDumps(value);
}

interface Sent {
  readonly text: string;
  /** What goes before it in the list (a comma with any whitespace; '' for the first). */
  readonly separator: string;
}

interface Session {
  messages: Sent[];
  ids: number[];
  /** The members before and after `messages`, as text. */
  before: string[];
  after: string[];
}

const KINDS = [
  'grow',
  'resend',
  'branch',
  'edit-same-length',
  'edit-other-length',
  'assistant-changed',
  'remove',
  'ids-grow',
  'ids-edit',
  'ids-digit',
  'duplicate-messages-after',
  'duplicate-messages-before',
  'escaped-messages-key',
  'reorder',
  'whitespace',
  'number-grows',
  'ids-trailing-comma',
  'messages-trailing-comma',
  'foreign',
] as const;
type Kind = (typeof KINDS)[number];

const separator = fc.oneof(
  { weight: 6, arbitrary: fc.constant(', ') },
  { weight: 1, arbitrary: fc.constantFrom(',', ' ,\n  ', ',\t') },
);
const step = fc.record({
  // Growing histories most (the normal case), every other case often enough to be counted.
  kind: fc.oneof(
    { weight: 10, arbitrary: fc.constant<Kind>('grow') },
    { weight: 2, arbitrary: fc.constant<Kind>('resend') },
    { weight: 16, arbitrary: fc.constantFrom(...KINDS) },
  ),
  key: fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom('s1', 's2') },
    { weight: 1, arbitrary: fc.constantFrom('s3', null) },
  ),
  added: fc.array(
    fc.tuple(
      message,
      fc.constantFrom<Writer>('python', 'python', 'python-utf8', 'stringify', 'duplicate-key'),
      separator,
    ),
    {
      minLength: 1,
      maxLength: 3,
    },
  ),
  ids: fc.array(fc.integer({ min: -50, max: 150_000 }), { minLength: 1, maxLength: 6 }),
  pick: fc.nat(),
  digit: fc.integer({ min: 0, max: 9 }),
  foreign: fc.constantFrom(
    'trailing-space',
    'ids-not-last',
    'cut',
    'float-id',
    'bom',
    'stringify-layout',
    'only-ids',
    'empty-ids',
  ),
});
type Step = typeof step extends fc.Arbitrary<infer T> ? T : never;

const MEMBERS = ['"model": "toy-policy"', '"logprobs": true', '"max_tokens": 9', '"temperature": 1.0'];

function append<T>(list: T[], items: readonly T[]): void {
  for (const item of items) list.push(item);
}

function newSession(): Session {
  return { messages: [], ids: [], before: [], after: [MEMBERS[0]!, MEMBERS[1]!] };
}

function bodyText(s: Session, options: { open?: string; close?: string; extra?: string } = {}): string {
  const list = `${options.open ?? '['}${s.messages.map((m, i) => (i === 0 ? m.text : `${m.separator}${m.text}`)).join('')}${options.close ?? ']'}`;
  const members = [...s.before, `"messages": ${list}`, ...s.after];
  if (options.extra !== undefined) members.push(options.extra);
  const ids = `"input_ids": [${s.ids.join(', ')}]`;
  return `{${members.join(', ')}, ${ids}}`;
}

/** Applies a step to the session and gives the body it sends. */
function play(s: Session, st: Step): Buffer {
  const added = st.added.map(([value, writer, sep]) => ({
    text: messageText(value, writer),
    separator: sep,
  }));
  const at = s.messages.length === 0 ? 0 : st.pick % s.messages.length;
  switch (st.kind as Kind) {
    case 'grow':
      append(s.messages, added);
      append(s.ids, st.ids);
      break;
    case 'resend':
      break;
    case 'branch':
      s.messages = s.messages.slice(0, at);
      s.ids = s.ids.slice(0, st.pick % (s.ids.length + 1));
      s.messages.push(added[0]!);
      break;
    case 'edit-same-length': {
      // One character of a message's text for another of the same byte length (`a` <-> `b`).
      const m = s.messages[at];
      if (m !== undefined) {
        const i = m.text.search(/[ab]/);
        const text =
          i < 0 ? m.text : `${m.text.slice(0, i)}${m.text[i] === 'a' ? 'b' : 'a'}${m.text.slice(i + 1)}`;
        s.messages[at] = { ...m, text };
      }
      s.messages.push(added[0]!);
      break;
    }
    case 'edit-other-length':
      if (s.messages.length > 0) s.messages[at] = { ...added[0]!, separator: s.messages[at]!.separator };
      break;
    case 'assistant-changed': {
      const last = s.messages.findLastIndex((m) => m.text.includes('"assistant"'));
      const text = pythonJsonDumps({ role: 'assistant', content: `changed ${st.pick}` });
      if (last >= 0) s.messages[last] = { ...s.messages[last]!, text };
      else s.messages.push({ text, separator: ', ' });
      break;
    }
    case 'remove':
      s.messages.splice(at, 1);
      break;
    case 'ids-grow':
      append(s.ids, st.ids);
      append(s.messages, added);
      break;
    case 'ids-edit':
      if (s.ids.length > 0) s.ids[st.pick % s.ids.length] = st.ids[0]!;
      break;
    case 'ids-digit': {
      // The last id gains a digit: `1, 23` is not a prefix of `1, 234`.
      const last = s.ids.at(-1);
      if (last !== undefined && Math.abs(last) < 10_000_000) s.ids[s.ids.length - 1] = last * 10 + st.digit;
      else s.ids.push(st.digit);
      // Sometimes more ids after it, so the run is longer than the previous one by more than `, `.
      if (st.pick % 2 === 0) append(s.ids, st.ids);
      break;
    }
    case 'duplicate-messages-after':
      append(s.messages, added);
      return Buffer.from(bodyText(s, { extra: `"messages": [${added[0]!.text}]` }), 'utf8');
    case 'duplicate-messages-before':
      s.before = [`"messages": [${added[0]!.text}]`];
      break;
    case 'escaped-messages-key':
      append(s.messages, added);
      return Buffer.from(bodyText(s, { extra: `"messag\\u0065s": [${added[0]!.text}]` }), 'utf8');
    case 'reorder':
      // `messages` first, or after other members, or with more of them.
      s.before = st.pick % 2 === 0 ? [] : [MEMBERS[st.pick % MEMBERS.length]!];
      s.after = MEMBERS.slice(0, st.pick % MEMBERS.length);
      break;
    case 'number-grows': {
      // A list that ends in a number, which then gains a digit (`7` is not the element `71`).
      const last = s.messages.at(-1);
      if (last !== undefined && /^-?[1-9][0-9]{0,6}$/.test(last.text))
        s.messages[s.messages.length - 1] = { ...last, text: `${last.text}${st.digit}` };
      else s.messages.push({ text: String(st.pick % 1000), separator: ', ' });
      break;
    }
    case 'whitespace':
      append(s.messages, added);
      return Buffer.from(bodyText(s, { open: '[\n ', close: ' \n]' }), 'utf8');
    case 'ids-trailing-comma':
      // Sent once: `[1, 2, ]` is not JSON, though `1, 2` was the previous run.
      return Buffer.from(bodyText(s).replace(/\]\}$/, ', ]}'), 'utf8');
    case 'messages-trailing-comma':
      return Buffer.from(bodyText(s, { close: ', ]' }), 'utf8');
    case 'foreign':
      return foreignBody(s, st);
  }
  return Buffer.from(bodyText(s), 'utf8');
}

/** A body that is not the session server's layout (or not JSON), sent once. */
function foreignBody(s: Session, st: Step): Buffer {
  const text = bodyText(s);
  switch (st.foreign) {
    case 'trailing-space':
      return Buffer.from(`${text} `, 'utf8');
    case 'ids-not-last':
      return Buffer.from(`${text.slice(0, -1)}, "n": [1]}`, 'utf8');
    case 'cut': {
      const bytes = Buffer.from(text, 'utf8');
      return bytes.subarray(0, st.pick % bytes.length);
    }
    case 'float-id':
      return Buffer.from(text.replace(/\]\}$/, ', 1.5]}'), 'utf8');
    case 'bom':
      return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, 'utf8')]);
    case 'stringify-layout':
      return Buffer.from(text.replace(', "input_ids": [', ',"input_ids":['), 'utf8');
    case 'only-ids':
      return Buffer.from(`{"input_ids": [${s.ids.join(', ')}]}`, 'utf8');
    default:
      return Buffer.from(`${text.slice(0, text.lastIndexOf('"input_ids"'))}"input_ids": []}`, 'utf8');
  }
}

// The oracle's JSON.parse runs in a context of its own: V8 can misread an escaped key through a hidden
// class an earlier parse left (common/native-json-keys.ts), and files before this one in the same worker
// (vitest.config.ts `isolate: false`) parse plenty.
const oracleParse = runInNewContext('(text) => JSON.parse(text)') as (
  text: string,
) => Record<string, unknown>;

function parseWhole(bytes: Uint8Array): { ok: true; value: Record<string, unknown> } | { ok: false } {
  try {
    return { ok: true, value: oracleParse(utf8.decode(bytes)) };
  } catch {
    return { ok: false };
  }
}

function headOf(messages: readonly unknown[]): string {
  const last = messages.at(-1);
  const content =
    typeof last === 'object' && last !== null ? (last as { content?: unknown }).content : undefined;
  return typeof content === 'string' ? content.slice(0, MESSAGE_HEAD_CHARS) : '';
}

function policyRequest(bytes: Buffer, key: string | null, direct: boolean): PolicyRequestLike {
  const headers = new Map<string, string>(key === null ? [] : [[ROUTING_KEY_HEADER, key]]);
  return {
    method: 'POST',
    url: 'http://policy.test/v1/chat/completions',
    headers: { get: (name) => headers.get(name.toLowerCase()) ?? null },
    text: async () => utf8.decode(bytes),
    ...(direct ? { bodyBytes: () => bytes } : {}),
  };
}

describe('HistoryReuse', () => {
  it('reads every body of a sequence as the whole text reads, and every answer and log record the same', async () => {
    const kinds = new Map<string, number>();
    const totals = { ids: 0, messages: 0, layout: 0 };
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 20 }), async (steps) => {
        const reuse = new HistoryReuse(2);
        const options = { mode: 'synthetic' as const, clock: () => 1_700_000_000_000, contextLength: 60 };
        const withReuse = createPolicy(options);
        const without = createPolicy(options);
        const sessions = new Map<string | null, Session>();
        for (const st of steps) {
          kinds.set(st.kind, (kinds.get(st.kind) ?? 0) + 1);
          const session = sessions.get(st.key) ?? newSession();
          sessions.set(st.key, session);
          const bytes = play(session, st);

          // The read against the oracles.
          const got = reuse.read(st.key, bytes);
          const uncached = splitInputIds(bytes);
          expect(got === null).toBe(uncached === null);
          if (got !== null) {
            totals.layout += 1;
            const whole = parseWhole(bytes);
            expect(whole.ok).toBe(true);
            const { messages, input_ids: ids, ...rest } = (whole as { value: Record<string, unknown> }).value;
            expect(got.rest).toStrictEqual(rest);
            expect(Object.keys(got.rest)).toEqual(Object.keys(rest));
            expect(Array.from(got.inputIds)).toEqual(ids);
            const list = Array.isArray(messages) ? messages : [];
            expect(got.messages).toEqual({
              count: list.length,
              digest: sha(canonicalJson(list)),
              lastHead: headOf(list),
            });
          }

          // The policy with the reuse against one that parses every body whole.
          const a = await withReuse.chat(policyRequest(bytes, st.key, true));
          const b = await without.chat(policyRequest(bytes, st.key, false));
          expect(a).toStrictEqual(b);
        }
        expect(withReuse.log.entries()).toStrictEqual(without.log.entries());
        totals.ids += reuse.reused.ids;
        totals.messages += reuse.reused.messages;
      }),
      { numRuns: 200 },
    );
    // Every kind was played: 200 runs give about 1,200 steps, 16 in 28 of them drawn evenly from the 20
    // kinds, so about 34 a kind (the fewest of the 20 is 20 to 31 in practice). A bound of 20 failed on
    // about one seed in six; below 8 is more than four standard deviations out for any one kind.
    for (const kind of KINDS) expect(kinds.get(kind) ?? 0, kind).toBeGreaterThanOrEqual(8);
    // The reuse was taken (not only the whole path), on ids and on messages alike.
    expect(totals.ids).toBeGreaterThan(100);
    expect(totals.messages).toBeGreaterThan(100);
    expect(totals.layout).toBeGreaterThan(500);
  }, 60_000);
});

describe('the chat route with a log that keeps the messages', () => {
  it('logs every message of every body (read whole, without the reuse)', async () => {
    const policy = createPolicy({
      mode: 'synthetic',
      log: new PolicyRequestLog(100, { keepMessages: true }),
    });
    const messages: unknown[] = [{ role: 'system', content: 'sys' }];
    const sent: unknown[][] = [];
    for (let turn = 0; turn < 3; turn++) {
      messages.push({ role: 'user', content: `turn ${turn}` });
      sent.push(structuredClone(messages));
      const body = pythonJsonDumps({ messages, model: 'm', input_ids: [1, 2, turn] });
      const answer = await policy.chat(policyRequest(Buffer.from(body, 'utf8'), 'k', true));
      expect(answer.status).toBe(200);
    }
    const entries = policy.log.entries();
    expect(entries.map((e) => e.messages)).toEqual(sent);
    expect(entries.map((e) => e.messageCount)).toEqual([2, 3, 4]);
    expect(entries.map((e) => e.messagesDigest)).toEqual(sent.map((m) => sha(canonicalJson(m))));
  });
});

describe('HistoryReuse ids', () => {
  const body = (ids: readonly number[]) =>
    Buffer.from(pythonJsonDumps({ messages: [{ role: 'user', content: 'x' }], input_ids: ids }));

  it("a read's ids are a view the same key's next read may overwrite, and other keys leave alone", () => {
    const reuse = new HistoryReuse();
    const a = reuse.read('a', body([1, 2, 3]))?.inputIds;
    const b = reuse.read('b', body([7, 8]))?.inputIds;
    expect(Array.from(a ?? [])).toEqual([1, 2, 3]);
    // A continuation appends after them: the earlier view still reads its ids.
    const longer = reuse.read('a', body([1, 2, 3, 4]))?.inputIds;
    expect(Array.from(longer ?? [])).toEqual([1, 2, 3, 4]);
    expect(Array.from(a ?? [])).toEqual([1, 2, 3]);
    // Other ids for the key: read into the same buffer (no copy per read), so the old view changed.
    const other = reuse.read('a', body([9, 9, 9, 9]))?.inputIds;
    expect(Array.from(other ?? [])).toEqual([9, 9, 9, 9]);
    expect(other?.buffer).toBe(longer?.buffer);
    expect(Array.from(a ?? [])).toEqual([9, 9, 9]);
    expect(Array.from(b ?? [])).toEqual([7, 8]);
  });
});
