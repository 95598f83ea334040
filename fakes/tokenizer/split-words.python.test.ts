import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { expect, it } from 'vitest';
import { splitWords } from './toy-tokenizer.ts';

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
  const expected = JSON.parse(
    execFileSync(
      '/usr/bin/python3',
      ['-c', 'import json,sys; print(json.dumps([t.split() for t in json.load(sys.stdin)]))'],
      {
        input: JSON.stringify(texts),
        encoding: 'utf8',
        maxBuffer: 1 << 24,
      },
    ),
  ) as string[][];
  expect(texts.map(splitWords)).toEqual(expected);
});
