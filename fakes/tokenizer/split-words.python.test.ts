import fc from 'fast-check';
import { expect, it } from 'vitest';
import { pythonJson } from '../../test/helpers/python-oracle.ts';
import { splitWords, ToyTokenizer, wordCrc32 } from './toy-tokenizer.ts';

// Python's whitespace for str.split(), JS-only whitespace (\ufeff, \u180e), surrogates, words.
const piece = fc.constantFrom(
  ' ',
  '  ',
  '\t',
  '\n',
  '\v',
  '\f',
  '\r',
  '\x1c',
  '\x1d',
  '\x1e',
  '\x1f',
  '\x85',
  '\xa0',
  '\u1680',
  '\u2000',
  '\u200a',
  '\u2028',
  '\u2029',
  '\u202f',
  '\u205f',
  '\u3000',
  '\ufeff',
  '\u180e',
  '\u200b',
  '\x00',
  '\ud800',
  '\udc00',
  '😀',
  'a',
  'word',
  'é',
  '{"k":',
);

it("splitWords is CPython's str.split() on generated texts", () => {
  const texts = fc.sample(
    fc.array(piece, { maxLength: 24 }).map((parts) => parts.join('')),
    {
      numRuns: 400,
      seed: 20261201,
    },
  );
  texts.push('', ' ', 'a b', '\ud83d\ude00\u3000\ud83d');
  const expected = pythonJson<string[][]>(
    'import json,sys; print(json.dumps([t.split() for t in json.load(sys.stdin)]))',
    texts,
  );
  expect(texts.map(splitWords)).toEqual(expected);
});

it("wordCrc32 is Python's zlib.crc32 of the UTF-8 bytes (ASCII words hashed in JS, others natively)", () => {
  const words = fc.sample(
    fc.array(piece, { minLength: 1, maxLength: 6 }).map((parts) => parts.join('')),
    {
      numRuns: 300,
      seed: 20261202,
    },
  );
  words.push('', 'a', '\x7f', '\x80', 'w123', '{"keystrokes":', 'é', '\ud800x');
  // CPython encodes a lone surrogate with errors='replace' as '?', zlib.crc32 of Node as U+FFFD: the
  // oracle replaces it with U+FFFD first, as Buffer.from does.
  const expected = pythonJson<number[]>(
    "import json,sys,zlib,re; print(json.dumps([zlib.crc32(re.sub('[\\ud800-\\udfff]', '\\ufffd', w).encode('utf-8')) for w in json.load(sys.stdin)]))",
    words,
  );
  expect(words.map(wordCrc32)).toEqual(expected);
});

it("encodeText's one-pass scan gives Python's word ids of str.split() (1000 + zlib.crc32 % 100000)", () => {
  // The tokenizer's own render path (split, CRC-32 and vocabulary in one scan), not splitWords/wordCrc32.
  const texts = fc.sample(
    fc.array(piece, { maxLength: 40 }).map((parts) => parts.join('')),
    {
      numRuns: 300,
      seed: 20261203,
    },
  );
  texts.push('', '  ', 'a', ' a ', '\x7f \x80', '\ud800x y\udc00', '😀\u3000😀', 'w'.repeat(3000));
  const expected = pythonJson<number[][]>(
    "import json,sys,zlib,re; print(json.dumps([[1000 + zlib.crc32(re.sub('[\\ud800-\\udfff]', '\\ufffd', w).encode('utf-8')) % 100000 for w in t.split()] for t in json.load(sys.stdin)]))",
    texts,
  );
  const tok = new ToyTokenizer();
  expect(texts.map((t) => tok.encodeText(t))).toEqual(expected);
});
