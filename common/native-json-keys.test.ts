import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { nativeJsonKeysTrusted } from './native-json-keys.ts';
import { parseJson, pythonJsonLoads } from './python-json/loads.ts';

/**
 * V8's `JSON.parse` misreads an escaped key after an earlier parse left a transition for a key holding a
 * backslash (nodejs/node#63785). `parseJson` and `pythonJsonLoads` must read every key right whatever was
 * parsed before. The oracle is `JSON.stringify` of the value the text was made from: the text is its
 * exact serialization, so a right parse gives back the same keys, in the same order, with the same values.
 */

// Keys at the same place in objects of the same shape: the misread needs an earlier object whose key
// there holds a backslash and a later one whose escaped key's source starts with it.
const POISONED_THEN_READ: ReadonlyArray<[string, unknown]> = [
  ['{"a":1,"\\\\":2}', { a: 1, '"': 2 }],
  ['{"b":1,"\\\\":2}', { b: 1, '\n': 2 }],
  ['{"c":1,"x\\\\":2}', { c: 1, 'x"': 2 }],
  ['[{"":[],"\\\\":null}]', [{ '': [], '"': null }]],
];

describe('object keys the native parser misreads', () => {
  it.each(POISONED_THEN_READ)('after %s, %j keeps its escaped key', (poison, value) => {
    const text = JSON.stringify(value);
    JSON.parse(poison);
    expect(JSON.stringify(parseJson(text))).toBe(text);
    JSON.parse(poison);
    expect(JSON.stringify(pythonJsonLoads(text))).toBe(text);
  });

  it('are read right after any earlier parse (property)', () => {
    // Few characters, so keys and their escapes line up across objects often.
    const key = fc.string({ unit: fc.constantFrom('a', '\\', '"', '\n', 'b'), maxLength: 3 });
    const object = fc.dictionary(key, fc.oneof(fc.integer(), fc.constant(null)), { maxKeys: 4 });
    const shape = fc.oneof(object, fc.array(object, { maxLength: 2 }), fc.record({ x: object }));
    let backslashKeys = 0;
    fc.assert(
      fc.property(fc.array(shape, { minLength: 1, maxLength: 4 }), shape, (earlier, value) => {
        for (const e of earlier) JSON.parse(JSON.stringify(e));
        const text = JSON.stringify(value);
        if (text.includes('\\\\')) backslashKeys += 1;
        expect(JSON.stringify(parseJson(text))).toBe(text);
        expect(JSON.stringify(pythonJsonLoads(text))).toBe(text);
      }),
      { numRuns: 400 },
    );
    expect(backslashKeys).toBeGreaterThan(50);
  });

  it('trusts a text without a backslash, or a value without a key holding one', () => {
    expect(nativeJsonKeysTrusted('{"a":[{"b":1}]}', { a: [{ b: 1 }] })).toBe(true);
    expect(nativeJsonKeysTrusted('{"a":"x\\ny"}', { a: 'x\ny' })).toBe(true);
    expect(nativeJsonKeysTrusted('{"a":[{"\\\\":1}]}', { a: [{ '\\': 1 }] })).toBe(false);
    expect(nativeJsonKeysTrusted('[[{"k":{"\\\\":1}}]]', [[{ k: { '\\': 1 } }]])).toBe(false);
  });
});
