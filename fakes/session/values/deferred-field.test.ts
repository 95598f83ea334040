import { describe, expect, it } from 'vitest';
import {
  deferredSource,
  defineDeferred,
  pickKeepingDeferred,
  spreadKeepingDeferred,
} from './deferred-field.ts';

// The oracle is the plain object the deferred one stands for: same keys in the same order, same values
// on every read, writes and assignments behaving as on a data property.

function deferredObject() {
  let builds = 0;
  const source = { ids: [1, 2, 3] };
  const o: Record<string, unknown> = { a: 1, ids: null, z: 'last' };
  defineDeferred(o, 'ids', source, (s) => {
    builds += 1;
    return s.ids.slice();
  });
  return { o, source, builds: () => builds };
}

describe('defineDeferred', () => {
  it('reads as the built value, in the key position, built once and then a plain data property', () => {
    const { o, source, builds } = deferredObject();
    expect(Object.keys(o)).toEqual(['a', 'ids', 'z']);
    expect(deferredSource(o, 'ids')).toBe(source);
    expect(builds()).toBe(0);
    const first = o.ids as number[];
    expect(first).toEqual([1, 2, 3]);
    expect(o.ids).toBe(first);
    expect(builds()).toBe(1);
    (o.ids as number[])[0] = 9;
    expect(o.ids).toEqual([9, 2, 3]);
    expect(deferredSource(o, 'ids')).toBeUndefined();
    expect(Object.getOwnPropertyDescriptor(o, 'ids')).toMatchObject({ writable: true, enumerable: true });
    expect(JSON.stringify(o)).toBe('{"a":1,"ids":[9,2,3],"z":"last"}');
  });

  it('takes an assignment without building, and is no longer deferred', () => {
    const { o, builds } = deferredObject();
    o.ids = [7];
    expect(o.ids).toEqual([7]);
    expect(builds()).toBe(0);
    expect(deferredSource(o, 'ids')).toBeUndefined();
    expect(Object.keys(o)).toEqual(['a', 'ids', 'z']);
  });

  it('still reads (built each time) and refuses assignment on a frozen object, as a frozen data property does', () => {
    const { o, builds } = deferredObject();
    Object.freeze(o);
    expect(o.ids).toEqual([1, 2, 3]);
    expect(o.ids).toEqual([1, 2, 3]);
    expect(builds()).toBe(2);
    expect(() => {
      o.ids = [7];
    }).toThrow(TypeError);
    expect(JSON.stringify(o)).toBe('{"a":1,"ids":[1,2,3],"z":"last"}');
  });

  it('is built by a spread, as a plain read would be', () => {
    const { o } = deferredObject();
    const copy = { ...o };
    expect(copy).toEqual({ a: 1, ids: [1, 2, 3], z: 'last' });
    expect(deferredSource(copy, 'ids')).toBeUndefined();
  });
});

describe('spreadKeepingDeferred / pickKeepingDeferred', () => {
  it('give the spread and the picked entries, the deferred property still deferred and settling on the copy', () => {
    const { o, source, builds } = deferredObject();
    const extra = { b: 2, a: 'replaced', ['__proto__']: 'own' };
    const spread = spreadKeepingDeferred(o, extra, pickKeepingDeferred(o, ['ids']));
    expect(Object.keys(spread)).toEqual(['a', 'ids', 'z', 'b', '__proto__']);
    expect(deferredSource(spread, 'ids')).toBe(source);
    expect(Object.getPrototypeOf(spread)).toBe(Object.prototype);
    expect(builds()).toBe(0);
    expect(spread).toEqual({ a: 'replaced', ids: [1, 2, 3], z: 'last', b: 2, ['__proto__']: 'own' });
    expect(deferredSource(spread, 'ids')).toBeUndefined();
    // The original is still deferred: the copy's read settled on the copy.
    expect(deferredSource(o, 'ids')).toBe(source);
  });

  it('copies symbol keys and skips non-enumerable ones, as a spread does', () => {
    const tag = Symbol('tag');
    const o = Object.defineProperty({ a: 1, [tag]: 'sym' }, 'hidden', { value: 2, enumerable: false });
    const spread = spreadKeepingDeferred(o);
    expect(Reflect.ownKeys(spread)).toEqual(Reflect.ownKeys({ ...o }));
    expect(spread[tag as unknown as string]).toBe('sym');
  });

  it('copies a value read from a getter that is not deferred', () => {
    const o = Object.defineProperty({}, 'g', { get: () => [5], enumerable: true });
    const spread = spreadKeepingDeferred(o);
    expect(Object.getOwnPropertyDescriptor(spread, 'g')).toMatchObject({ value: [5], writable: true });
  });
});
