import { describe, expect, it } from 'vitest';
import { decodeJsonBytes, detectJsonEncoding, PythonUnicodeDecodeError } from './python-bytes.ts';
import { PythonJsonDecodeError } from './python-json/faithful-loads.ts';
import { pythonJsonLoadsBytes } from './python-json/loads.ts';

// Expected values are what CPython 3's `json.loads(bytes)` gives for the same bytes.
const bytes = (...parts: Array<string | number[]>) =>
  Buffer.concat(parts.map((p) => (typeof p === 'string' ? Buffer.from(p, 'latin1') : Buffer.from(p))));

describe('json.loads on bytes (detect_encoding + surrogatepass)', () => {
  it.each([
    ['UTF-8 with a BOM (utf-8-sig)', bytes([0xef, 0xbb, 0xbf], '{"a": 1}'), { a: 1 }],
    ['UTF-8 four-byte character', bytes('{"a":"', [0xf0, 0x9f, 0x98, 0x80], '"}'), { a: '\u{1f600}' }],
    [
      'an encoded lone surrogate (surrogatepass)',
      bytes('{"s": "', [0xed, 0xa0, 0x80], '"}'),
      { s: '\ud800' },
    ],
    ['UTF-16-BE without a BOM', bytes([0], '{', [0], '}'), {}],
    ['UTF-16-LE without a BOM', bytes('{', [0], '}', [0]), {}],
    ['UTF-16 with a BOM', Buffer.from('\ufeff{"k": "é\u{1f600}"}', 'utf16le'), { k: 'é\u{1f600}' }],
    ['UTF-32 with a BOM', bytes([0xff, 0xfe, 0, 0], '[', [0, 0, 0], '1', [0, 0, 0], ']', [0, 0, 0]), [1]],
    ['UTF-32-LE without a BOM', bytes('[', [0, 0, 0], '1', [0, 0, 0], ']', [0, 0, 0]), [1]],
  ])('reads %s', (_name, body, value) => {
    expect(pythonJsonLoadsBytes(body)).toEqual(value);
  });

  it.each([
    ['an invalid start byte', bytes('{"a": "', [0xff], '"}'), 7],
    ['a lone 0xff', bytes([0xff]), 0],
    ['an overlong NUL', bytes([0xc0, 0x80]), 0],
    ['a code point above U+10FFFF', bytes('"', [0xf4, 0x90, 0x80, 0x80], '"'), 1],
    ['an overlong three-byte form', bytes('"', [0xe0, 0x80, 0x80], '"'), 1],
    ['a truncated sequence', bytes('"', [0xed, 0xa0], '"'), 1],
  ])('raises UnicodeDecodeError (not JSONDecodeError) for %s', (_name, body, position) => {
    let caught: unknown;
    try {
      pythonJsonLoadsBytes(body);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PythonUnicodeDecodeError);
    expect(caught).not.toBeInstanceOf(PythonJsonDecodeError);
    expect((caught as PythonUnicodeDecodeError).position).toBe(position);
  });

  it('keeps a second BOM as text, which the parser then rejects', () => {
    expect(() => pythonJsonLoadsBytes(bytes([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf], '[1]'))).toThrow(
      'Expecting value: line 1 column 1 (char 0)',
    );
  });

  it('detects encodings from the first bytes as json.detect_encoding does', () => {
    expect(detectJsonEncoding(bytes('{', [0, 0, 0]))).toBe('utf-32-le');
    expect(detectJsonEncoding(bytes([0, 0, 0], '{'))).toBe('utf-32-be');
    expect(detectJsonEncoding(bytes('{}'))).toBe('utf-8');
    expect(detectJsonEncoding(bytes('{ ', [0]))).toBe('utf-8');
    expect(() => decodeJsonBytes(bytes([0xff, 0xfe], 'a'))).toThrow(PythonUnicodeDecodeError);
  });
});
