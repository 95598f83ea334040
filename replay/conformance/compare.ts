import { parseJson } from '../../common/python-json/loads.ts';
import { decodeSafetensors, type Tensor } from '../../fakes/session/wire/safetensors.ts';
import type { Exchange, ExchangeRecord } from './exchanges.ts';

/**
 * Compares two servers' answers to the same trace, exchange by exchange: status, content type, and the
 * body byte for byte once the values Miles does not make deterministic are masked by name:
 * - the session id (uuid4) wherever it appears;
 * - clocks: `timestamp`, `request_timestamp`, `committed_at`, and the lifecycle's `t0`, `t1`, `req_ts`,
 *   `prev_t1` (each must still be written as a Python float on both sides);
 * - the policy's `created` (its own clock) and the server's `session_server_instance_id` (uuid4).
 * A samples reply (safetensors) is compared tensor by tensor in layout order (name, dtype, shape,
 * values), and its `_samples_meta` JSON as masked text.
 */

const MASKED_CLOCK_KEYS = ['timestamp', 'request_timestamp', 'committed_at', 't0', 't1', 'req_ts', 'prev_t1'];
const MASKED_OTHER_KEYS = ['created', 'session_server_instance_id'];

export interface Difference {
  readonly step: string;
  /** `status`, `content-type`, `body`, `tensor <name>`, `tensors`, `exchanges`. */
  readonly what: string;
  readonly fake: string;
  readonly miles: string;
}

const NUMBER = String.raw`-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?`;
const maskPattern = (keys: readonly string[]) =>
  new RegExp(`"(${keys.join('|')})":(${NUMBER}|null|"(?:[^"\\\\]|\\\\.)*")`, 'g');
const CLOCKS = maskPattern(MASKED_CLOCK_KEYS);
const OTHERS = maskPattern(MASKED_OTHER_KEYS);

/** The masked text, plus the clock values that were not written as Python floats. */
export function maskText(text: string, sessionId: string): { text: string; intClocks: string[] } {
  const intClocks: string[] = [];
  const masked = text
    .replaceAll(sessionId, '<session-id>')
    .replace(CLOCKS, (_all, key: string, value: string) => {
      if (value !== 'null' && !/[.eE]/.test(value)) intClocks.push(`${key}=${value}`);
      return `"${key}":${value === 'null' ? 'null' : '"<clock>"'}`;
    })
    .replace(OTHERS, (_all, key: string) => `"${key}":"<masked>"`);
  return { text: masked, intClocks };
}

/** Shortens a text around its first difference from `other`, for a readable report. */
function around(text: string, other: string, width = 120): string {
  let i = 0;
  while (i < text.length && i < other.length && text[i] === other[i]) i += 1;
  const start = Math.max(0, i - width / 2);
  return `${start > 0 ? '…' : ''}${text.slice(start, start + width)}${start + width < text.length ? '…' : ''}`;
}

const utf8 = (bytes: Uint8Array) => Buffer.from(bytes).toString('utf8');

function compareTexts(step: string, what: string, fake: string, miles: string, out: Difference[]): void {
  if (fake !== miles) out.push({ step, what, fake: around(fake, miles), miles: around(miles, fake) });
}

function describeTensor(t: Tensor): string {
  return `${t.dtype}[${t.shape.join(',')}] ${JSON.stringify(t.data)}`;
}

function compareSamplesReply(
  step: string,
  fake: Uint8Array,
  miles: Uint8Array,
  ids: { fake: string; miles: string },
  out: Difference[],
): void {
  const a = decodeSafetensors(fake);
  const b = decodeSafetensors(miles);
  const layout = (bytes: Uint8Array) => {
    const headerLength = Number(Buffer.from(bytes).readBigUInt64LE(0));
    return Object.keys(parseJson(utf8(bytes.subarray(8, 8 + headerLength))) as object);
  };
  compareTexts(step, 'tensors', layout(fake).join(' '), layout(miles).join(' '), out);
  for (const [name, tensor] of a) {
    const other = b.get(name);
    if (other === undefined) continue;
    if (name === '_samples_meta') {
      const fakeMeta = maskText(utf8(Uint8Array.from(tensor.data)), ids.fake);
      const milesMeta = maskText(utf8(Uint8Array.from(other.data)), ids.miles);
      compareTexts(step, 'samples meta', fakeMeta.text, milesMeta.text, out);
      compareClocks(step, fakeMeta.intClocks, milesMeta.intClocks, out);
      continue;
    }
    compareTexts(step, `tensor ${name}`, describeTensor(tensor), describeTensor(other), out);
  }
}

function compareClocks(step: string, fake: string[], miles: string[], out: Difference[]): void {
  if (fake.length > 0 || miles.length > 0) {
    out.push({ step, what: 'clock written as an integer', fake: fake.join(' '), miles: miles.join(' ') });
  }
}

function compareExchange(
  fake: Exchange,
  miles: Exchange,
  ids: { fake: string; miles: string },
  out: Difference[],
): void {
  const step = fake.step;
  if (fake.status !== miles.status) {
    out.push({ step, what: 'status', fake: String(fake.status), miles: String(miles.status) });
  }
  if (fake.upstreamCalls !== miles.upstreamCalls) {
    const [a, b] = [fake.upstreamCalls, miles.upstreamCalls].map((n) => String(n ?? 'not counted'));
    out.push({ step, what: 'upstream calls', fake: a as string, miles: b as string });
  }
  compareTexts(step, 'content-type', fake.contentType, miles.contentType, out);
  if (
    fake.status === 200 &&
    miles.status === 200 &&
    fake.contentType === 'application/octet-stream' &&
    miles.contentType === 'application/octet-stream'
  ) {
    compareSamplesReply(step, fake.body, miles.body, ids, out);
    return;
  }
  const a = maskText(utf8(fake.body), ids.fake);
  const b = maskText(utf8(miles.body), ids.miles);
  compareTexts(step, 'body', a.text, b.text, out);
  compareClocks(step, a.intClocks, b.intClocks, out);
}

/** Every difference between the two records, in exchange order. */
export function compareRecords(fake: ExchangeRecord, miles: ExchangeRecord): Difference[] {
  const out: Difference[] = [];
  const ids = { fake: fake.sessionId, miles: miles.sessionId };
  if (fake.exchanges.length !== miles.exchanges.length) {
    out.push({
      step: 'all',
      what: 'exchanges',
      fake: String(fake.exchanges.length),
      miles: String(miles.exchanges.length),
    });
  }
  fake.exchanges.forEach((exchange, k) => {
    const other = miles.exchanges[k];
    if (other !== undefined) compareExchange(exchange, other, ids, out);
  });
  return out;
}
