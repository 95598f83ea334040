import { describe, expect, it } from 'vitest';
import { pythonJsonDumps, starletteJson } from './dumps.ts';
import { PythonJsonDecodeError } from './faithful-loads.ts';
import { pythonJsonLoads } from './loads.ts';
import {
  isJsonObject,
  PythonFloat,
  pythonFloatRepr,
  pythonRepr,
  pythonTruthy,
  pythonTypeName,
  unwrapPythonFloat,
} from './values.ts';

describe('pythonJsonLoads', () => {
  it.each([
    ['', 'Expecting value: line 1 column 1 (char 0)'],
    ['{', 'Expecting property name enclosed in double quotes: line 1 column 2 (char 1)'],
    ['{"a":1,}', 'Expecting property name enclosed in double quotes: line 1 column 8 (char 7)'],
    ['[1,]', 'Expecting value: line 1 column 4 (char 3)'],
    ['{"a" 1}', "Expecting ':' delimiter: line 1 column 6 (char 5)"],
    ['[1 2]', "Expecting ',' delimiter: line 1 column 4 (char 3)"],
    ['"abc', 'Unterminated string starting at: line 1 column 1 (char 0)'],
    ['{"a":1} x', 'Extra data: line 1 column 9 (char 8)'],
    ['"a\\qb"', 'Invalid \\escape: line 1 column 3 (char 2)'],
    ['"a\nb"', 'Invalid control character at: line 1 column 3 (char 2)'],
    ['\n\n  [1,\n x]', 'Expecting value: line 4 column 2 (char 9)'],
    ['"\\u12"', 'Invalid \\uXXXX escape: line 1 column 3 (char 2)'],
    ['"é" x', 'Extra data: line 1 column 5 (char 4)'],
  ])('rejects %j with CPython text', (doc, message) => {
    expect(() => pythonJsonLoads(doc)).toThrow(PythonJsonDecodeError);
    expect(() => pythonJsonLoads(doc)).toThrow(message);
  });

  it('accepts what CPython accepts: NaN, Infinity, duplicate keys (last wins)', () => {
    expect(pythonJsonLoads('[NaN, Infinity, -Infinity]')).toEqual([Number.NaN, Infinity, -Infinity]);
    expect(pythonJsonLoads('{"a": 1, "a": 2}')).toEqual({ a: 2 });
    expect(pythonJsonLoads(' {"__proto__": {"x": 1}} ')).toHaveProperty('__proto__', { x: 1 });
  });
});

describe('pythonJsonDumps', () => {
  it('writes json.dumps defaults: spaced separators, ASCII escapes, repr floats, NaN', () => {
    const value = { a: [1, 2.5, 'é', null, true, 1e-5, 1.5e17, 1e16, 0.1, -0, Number.NaN] };
    expect(pythonJsonDumps(value)).toBe(
      '{"a": [1, 2.5, "\\u00e9", null, true, 1e-05, 1.5e+17, 1e+16, 0.1, -0.0, NaN]}',
    );
  });

  it('sorts keys by code point when asked', () => {
    expect(pythonJsonDumps({ name: 'run', arguments: '{"cmd": "ls"}' }, { sortKeys: true })).toBe(
      '{"arguments": "{\\"cmd\\": \\"ls\\"}", "name": "run"}',
    );
  });

  it('renders compact Starlette JSON and refuses NaN there', () => {
    expect(starletteJson({ error: 'é x' })).toBe('{"error":"é x"}');
    expect(() => starletteJson({ x: Number.NaN })).toThrow(RangeError);
  });

  it('round-trips through the loader', () => {
    const value = { s: 'a"b\\c\n\t\u0001 é 😀', n: [0, -1, 3.25, 1e-7], o: { z: null, y: false } };
    expect(pythonJsonLoads(pythonJsonDumps(value))).toEqual(value);
    expect(pythonJsonLoads(starletteJson(value))).toEqual(value);
  });
});

describe('python helpers', () => {
  it('repr quotes like Python', () => {
    expect(pythonRepr("it's")).toBe('"it\'s"');
    expect(pythonRepr('a"b')).toBe("'a\"b'");
    expect(pythonRepr('x\ty')).toBe("'x\\ty'");
    expect(pythonRepr(['assistant', null, true, 1.5])).toBe("['assistant', None, True, 1.5]");
    expect(pythonRepr({ role: 'user' })).toBe("{'role': 'user'}");
  });

  it('float repr switches to exponents where Python does', () => {
    expect(pythonFloatRepr(1e-4)).toBe('0.0001');
    expect(pythonFloatRepr(1e-5)).toBe('1e-05');
    expect(pythonFloatRepr(123456789012345.6)).toBe('123456789012345.6');
    expect(pythonFloatRepr(2.5e16)).toBe('2.5e+16');
    expect(pythonFloatRepr(-0.125)).toBe('-0.125');
  });

  it('truthiness follows Python', () => {
    expect([null, 0, '', [], {}, false].some(pythonTruthy)).toBe(false);
    expect([1, 'x', [0], { a: 1 }, true].every(pythonTruthy)).toBe(true);
  });
});

// Python's own behaviour, as `python3 -c 'import json; print(json.dumps(json.loads(DOC)))'` prints it:
// a float literal stays a float (`1.0`, `0.0`, `1e+16`), an int stays an int.
describe('Python floats (keepFloats, PythonFloat)', () => {
  const roundTrip = (doc: string) =>
    pythonJsonDumps(pythonJsonLoads(doc, { keepFloats: true }), { separators: [',', ':'] });

  it('writes float literals back as Python floats and ints as ints', () => {
    expect(roundTrip('{"a":1.0,"b":0.0,"c":2,"d":-0.0,"e":1e16,"f":1.5e-5,"g":[3.25,1E2]}')).toBe(
      '{"a":1.0,"b":0.0,"c":2,"d":-0.0,"e":1e+16,"f":1.5e-05,"g":[3.25,100.0]}',
    );
    expect(roundTrip('NaN')).toBe('NaN');
    expect(pythonJsonLoads('1.0')).toBe(1);
  });

  it('is a float, not a dict, to the Python helpers', () => {
    const one = new PythonFloat(1);
    expect(isJsonObject(one)).toBe(false);
    expect(pythonTypeName(one)).toBe('float');
    expect(pythonRepr(one)).toBe('1.0');
    expect(pythonTruthy(new PythonFloat(0))).toBe(false);
    expect(pythonTruthy(new PythonFloat(Number.NaN))).toBe(true);
    expect(JSON.stringify({ one })).toBe('{"one":1}');
    expect(unwrapPythonFloat(one)).toBe(1);
  });
});
