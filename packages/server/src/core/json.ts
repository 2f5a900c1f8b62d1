/**
 * Values stored by operations and returned to clients are plain JSON. Versions in the store are
 * shared between many snapshots, so they are deep-frozen: an operation that wants to change a value
 * it read must copy it (a mutation throws, which becomes the op's deterministic failed result).
 */
export type JsonValue =
  null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Returns a deep-frozen copy of `value`, or throws a TypeError naming the path that is not JSON. */
export function toFrozenJson(value: unknown, path = 'value'): JsonValue {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new TypeError(`${path} is not a finite number`);
    return value;
  }
  if (Array.isArray(value)) {
    if (Object.isFrozen(value) && producedHere.has(value)) return value as JsonValue;
    const out = value.map((v, i) => toFrozenJson(v, `${path}[${i}]`));
    return markFrozen(out);
  }
  if (typeof value === 'object') {
    if (Object.isFrozen(value) && producedHere.has(value)) return value as JsonValue;
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) {
      throw new TypeError(`${path} is not a plain object`);
    }
    const out: { [key: string]: JsonValue } = {};
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined) continue; // as JSON.stringify does
      out[k] = toFrozenJson(v, `${path}.${k}`);
    }
    return markFrozen(out);
  }
  throw new TypeError(`${path} is not JSON (${typeof value})`);
}

// Values this module produced are already checked and frozen: passing them back (an op writing a
// value it read) costs nothing.
const producedHere = new WeakSet<object>();
function markFrozen<T extends object>(v: T): T {
  Object.freeze(v);
  producedHere.add(v);
  return v;
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
