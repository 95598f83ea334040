/**
 * A property whose value is built the first time it is read: an enumerable accessor in the property's
 * own place (key order unchanged) that, on first read, replaces itself with a plain writable data
 * property holding the built value, so from then on the object behaves exactly as if the value had
 * been there all along (reads give the same array, writes go into it, assignment replaces it). Until
 * then, a writer that knows the source (the samples wire codec) can take it instead of the value:
 * `deferredSource`. The samples op uses it for the per-token fields of the samples it hands to the
 * picker and postprocessor hooks, which rarely read them (docs/performance.md "Catalogue").
 */

const sources = new WeakMap<object, unknown>();

export function defineDeferred<S>(
  target: object,
  key: string,
  source: S,
  build: (source: S) => unknown,
): void {
  // False when `on` was frozen or sealed since (its accessor can no longer become a data property).
  const settle = (on: object, value: unknown) =>
    Reflect.defineProperty(on, key, { value, writable: true, enumerable: true, configurable: true });
  // `this`, not `target`: a copy of the accessor (a spread that keeps it) settles on the copy.
  function get(this: object): unknown {
    const value = build(source);
    settle(this, value);
    return value;
  }
  function set(this: object, value: unknown): void {
    // As assigning a frozen object's data property does in strict code.
    if (!settle(this, value)) throw new TypeError(`Cannot assign to read only property '${key}' of object`);
  }
  sources.set(get, source);
  Object.defineProperty(target, key, { get, set, enumerable: true, configurable: true });
}

/** The source of `target[key]` while it is still deferred (never read nor assigned); otherwise undefined. */
export function deferredSource(target: object, key: string): unknown {
  const get = Object.getOwnPropertyDescriptor(target, key)?.get;
  return get === undefined ? undefined : sources.get(get);
}

/**
 * `{ ...a, ...b, ... }` (own enumerable keys in order, later objects winning in place), except that
 * a deferred property is copied as deferred instead of being read.
 */
export function spreadKeepingDeferred(...objects: readonly object[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const o of objects) {
    // What a spread copies: own enumerable keys, strings in order, then symbols.
    for (const key of Reflect.ownKeys(o)) {
      if (Object.prototype.propertyIsEnumerable.call(o, key)) copyProperty(out, o, key);
    }
  }
  return out;
}

/** `to[key] = from[key]` as a spread defines it, a deferred property copied as deferred. */
function copyProperty(to: object, from: object, key: string | symbol): void {
  const descriptor = Object.getOwnPropertyDescriptor(from, key);
  const get = descriptor?.get;
  const set = descriptor?.set;
  Object.defineProperty(
    to,
    key,
    get !== undefined && set !== undefined && sources.has(get)
      ? { get, set, enumerable: true, configurable: true }
      : {
          value: Reflect.get(from, key),
          writable: true,
          enumerable: true,
          configurable: true,
        },
  );
}

/** `Object.fromEntries(keys.map((k) => [k, o[k]]))`, except that a deferred property is copied as deferred. */
export function pickKeepingDeferred(o: object, keys: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of keys) copyProperty(out, o, key);
  return out;
}
