/**
 * Values stored by operations and returned to clients are plain JSON. Versions in the store are
 * shared between many snapshots, so they are deep-frozen: an operation that wants to change a value
 * it read must copy it (a mutation throws, which becomes the op's deterministic failed result).
 */
export type JsonValue =
  null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/**
 * Returns `value` as deep-frozen JSON, or throws a TypeError naming the path that is not JSON.
 * A value this function produced before (one read from the store, say) is returned as it is; anything
 * else is copied and frozen. As in JSON.stringify, `undefined` object fields are dropped and
 * `undefined` array elements (and holes) become null.
 */
export function toFrozenJson(value: unknown, path = 'value'): JsonValue {
  if (typeof value !== 'object' || value === null) return checkPrimitive(value, path);
  if (Object.prototype.hasOwnProperty.call(value, PRODUCED)) return value as JsonValue;
  if (Array.isArray(value)) {
    const out: JsonValue[] = new Array<JsonValue>(value.length);
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      out[i] = v === undefined ? null : toFrozenJson(v, `${path}[${i}]`);
    }
    return seal(out);
  }
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null)
    throw new TypeError(`${path} is not a plain object`);
  const out: { [key: string]: JsonValue } = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === undefined) continue;
    const frozen = toFrozenJson(v, `${path}.${k}`);
    // `__proto__` must become an own property, not the prototype.
    if (k === '__proto__') Object.defineProperty(out, k, { value: frozen, enumerable: true });
    else out[k] = frozen;
  }
  return seal(out);
}

/**
 * Freezes, in place, a JSON value this process alone holds and that was checked as JSON where it
 * was made: what a structured clone delivers from a worker whose op values went through
 * `toFrozenJson` there. Costs a walk and no copy (toFrozenJson would copy it all again). Anything
 * else must go through `toFrozenJson`.
 */
export function adoptFrozenJson(value: JsonValue): JsonValue {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v !== 'object' || v === null || Object.isFrozen(v)) continue;
    if (Array.isArray(v)) for (let i = 0; i < v.length; i++) stack.push(v[i]);
    else for (const k in v) stack.push((v as Record<string, unknown>)[k]);
    seal(v);
  }
  return value;
}

/**
 * Marks values this module built (non-enumerable, so invisible to JSON and to copies), so they are
 * never copied twice. A brand rather than a WeakSet: a WeakSet of every stored value burdens the GC.
 */
const PRODUCED = Symbol('creek.frozenJson');

function seal<T extends object>(v: T): T {
  Object.defineProperty(v, PRODUCED, { value: true });
  return Object.freeze(v);
}

function checkPrimitive(value: unknown, path: string): JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`${path} is not a finite number`);
    return value;
  }
  throw new TypeError(`${path} is not JSON (${typeof value})`);
}

/** Structural equality of JSON values (object key order does not matter). */
export function jsonEqual(a: JsonValue | undefined, b: JsonValue | undefined): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return false;
  if (typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ak = Object.keys(a);
  if (ak.length !== Object.keys(b).length) return false;
  for (const k of ak) {
    if (!Object.prototype.hasOwnProperty.call(b, k) || !jsonEqual(a[k], b[k])) return false;
  }
  return true;
}

/** A canonical string form (sorted object keys), for digests and for map keys in checkers. */
export function canonicalJson(v: JsonValue | undefined): string {
  if (v === undefined) return 'undefined';
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  const keys = Object.keys(v).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(v[k])}`).join(',')}}`;
}
