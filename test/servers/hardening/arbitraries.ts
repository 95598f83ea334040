import fc from 'fast-check';
import { wildJsonValue, wildString } from '../../helpers/text-arbitraries.ts';

/**
 * Malformed-request generators for the bad-input suite. Every body carries the class the oracle needs
 * (how CPython's `json.loads(bytes)` would see it), decided by construction, not by running a parser.
 */

type BodyClass =
  /** No bytes at all (Miles reads it as `{}`). */
  | 'empty'
  /** Valid UTF-8 that is not JSON: it starts with `}`, so CPython fails at char 0. */
  | 'not-json'
  /** Bytes that do not decode as UTF-8 (CPython raises UnicodeDecodeError, not JSONDecodeError). */
  | 'invalid-utf8'
  /** JSON whose top level is not an object (list, string, number, bool, null). */
  | 'json-scalar'
  /** A JSON object: random keys, or the route's own keys with wrong types or missing. */
  | 'json-object'
  /** Larger than the server's body limit. */
  | 'huge';

export interface GeneratedBody {
  readonly kind: BodyClass;
  readonly bytes: Uint8Array;
  /** The parsed object, for `json-object` bodies. */
  readonly object?: Record<string, unknown>;
}

const utf8 = (text: string) => new Uint8Array(Buffer.from(text, 'utf8'));

/** Byte sequences no UTF-8 decoder accepts, `surrogatepass` included. */
const INVALID_UTF8: readonly number[][] = [
  [0xff],
  [0x80],
  [0xc0, 0x80],
  [0xe0, 0x80, 0x80],
  [0xf4, 0x90, 0x80, 0x80],
  [0xed, 0xa0],
  [0xfe, 0xfe],
];

/** Any JSON value, with strings that exercise escapes, non-BMP characters and lone surrogates. */
const jsonValue = wildJsonValue({ maxDepth: 3 });

/** Values of the wrong type for almost any field. */
const wrongType = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  wildString({ maxLength: 20 }),
  fc.array(wildJsonValue({ maxDepth: 1 }), { maxLength: 3 }),
  fc.dictionary(wildString({ maxLength: 5 }), wildJsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
);

/** An object built from the route's own keys, each present or not, each of the right type or not. */
function objectOf(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<Record<string, unknown>> {
  const entries = Object.fromEntries(
    Object.entries(fields).map(([key, right]) => [key, fc.oneof({ weight: 2, arbitrary: right }, wrongType)]),
  );
  return fc.record(entries, { requiredKeys: [] }) as fc.Arbitrary<Record<string, unknown>>;
}

export function bodies(options: {
  /** Keys the route reads, with arbitraries of their right types. */
  readonly fields: Record<string, fc.Arbitrary<unknown>>;
  /** The server's body limit in bytes (huge bodies exceed it by up to half). */
  readonly limit: number;
}): fc.Arbitrary<GeneratedBody> {
  const object = fc.oneof(objectOf(options.fields), fc.dictionary(wildString({ maxLength: 8 }), jsonValue));
  return fc.oneof(
    fc.constant<GeneratedBody>({ kind: 'empty', bytes: new Uint8Array() }),
    wildString({ maxLength: 200 }).map((s) => ({ kind: 'not-json' as const, bytes: utf8(`}${s}`) })),
    fc.tuple(object, fc.constantFrom(...INVALID_UTF8)).map(([o, bad]) => {
      const text = JSON.stringify({ ...o, x: '@@' });
      const at = text.lastIndexOf('@@');
      const bytes = Buffer.concat([
        Buffer.from(text.slice(0, at)),
        Buffer.from(bad),
        Buffer.from(text.slice(at + 2)),
      ]);
      return { kind: 'invalid-utf8' as const, bytes: new Uint8Array(bytes) };
    }),
    jsonValue
      .filter((v) => typeof v !== 'object' || v === null || Array.isArray(v))
      .map((v) => ({ kind: 'json-scalar' as const, bytes: utf8(JSON.stringify(v)) })),
    {
      weight: 4,
      arbitrary: object.map((o) => ({
        kind: 'json-object' as const,
        bytes: utf8(JSON.stringify(o)),
        object: o,
      })),
    },
    fc.integer({ min: options.limit + 1, max: Math.floor(options.limit * 1.5) }).map((size) => {
      const head = '{"messages": [{"role": "user", "content": "';
      const tail = '"}]}';
      return {
        kind: 'huge' as const,
        bytes: utf8(head + 'x'.repeat(size - head.length - tail.length) + tail),
      };
    }),
  );
}

/** Methods Node's parser passes to the handler (standard and WebDAV) and ones it rejects itself. */
const KNOWN_METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND'];
export const PARSER_REJECTED_METHODS = ['get', 'FOO', 'G ET'];

export function methods(preferred: string): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(preferred) },
    { weight: 3, arbitrary: fc.constantFrom(...KNOWN_METHODS) },
    { weight: 1, arbitrary: fc.constantFrom(...PARSER_REJECTED_METHODS, 'CONNECT') },
  );
}

/** Path segments that upset routers: traversal, encodings, NULs, invalid escapes, very long. */
export const oddSegment = fc.oneof(
  fc.constantFrom(
    '..',
    '.',
    '%2e%2e',
    '%2E%2E%2F',
    '%00',
    '%ff',
    '%zz',
    '%',
    '%C3%BC',
    '~',
    '',
    'a'.repeat(600),
  ),
  fc.stringMatching(/^[A-Za-z0-9._~!$&'()*+,;=:@-]{1,12}$/),
);

/** A path under `prefix` with 1–4 odd segments and, sometimes, a query. */
export function oddPath(prefix: string): fc.Arbitrary<string> {
  return fc
    .tuple(
      fc.array(oddSegment, { minLength: 1, maxLength: 4 }),
      fc.option(fc.stringMatching(/^[A-Za-z0-9=&%]{0,16}$/), { nil: undefined }),
    )
    .map(([segments, query]) => `${prefix}/${segments.join('/')}${query === undefined ? '' : `?${query}`}`);
}
