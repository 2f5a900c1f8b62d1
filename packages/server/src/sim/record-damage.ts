import type { Prng } from './prng.js';

/**
 * What a damaged record reads back as (SimConfig.storageFaults 'corrupt' and 'torn'): a copy with
 * one bit of one field flipped (a digit of a number, a letter of a string, a flag). Its checksum
 * no longer matches, which is how a replica that checks finds it; one that does not (the planted
 * bug `ignore-checksums`) reads a record that still makes sense and is wrong: another op id, key,
 * ballot or value. Fields of class instances (a causal context) are left whole, as a replica
 * could not read one back at all; a record with no field to flip reads back as it was.
 */
export function flipBit<R>(record: R, prng: Prng): R {
  const leaves: (string | number)[][] = [];
  collect(record, [], leaves);
  if (leaves.length === 0) return record;
  return flipAt(record, prng.pick(leaves), prng.int(0, 4), prng.next()) as R;
}

/** The paths to every number, string and boolean inside plain objects and arrays. */
function collect(value: unknown, path: (string | number)[], out: (string | number)[][]): void {
  if (typeof value === 'boolean' || (typeof value === 'string' && value.length > 0)) out.push(path);
  else if (typeof value === 'number' && Number.isSafeInteger(value)) out.push(path);
  else if (Array.isArray(value)) value.forEach((v, i) => collect(v, [...path, i], out));
  else if (isPlain(value))
    for (const [k, v] of Object.entries(value)) collect(v, [...path, k], out);
}

function isPlain(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * A copy of `value` with bit `bit` of the leaf at `path` flipped (of a string's character at
 * `where`, a fraction of its length); what is off the path is shared.
 */
function flipAt(
  value: unknown,
  path: readonly (string | number)[],
  bit: number,
  where: number,
): unknown {
  if (path.length === 0) return flipLeaf(value, bit, where);
  const [head, ...rest] = path;
  const copy = (
    Array.isArray(value) ? [...(value as unknown[])] : { ...(value as Record<string, unknown>) }
  ) as Record<string | number, unknown>;
  copy[head!] = flipAt((value as Record<string | number, unknown>)[head!], rest, bit, where);
  return Object.isFrozen(value) ? Object.freeze(copy) : copy;
}

function flipLeaf(leaf: unknown, bit: number, where: number): unknown {
  if (typeof leaf === 'boolean') return !leaf;
  if (typeof leaf === 'number') {
    // Bit `bit` of its magnitude, so that a large integer (a timestamp) stays exact.
    const step = 2 ** bit;
    const set = Math.floor(Math.abs(leaf) / step) % 2 === 1;
    return leaf + Math.sign(leaf || 1) * (set ? -step : step);
  }
  const s = leaf as string;
  const at = Math.floor(where * s.length);
  return s.slice(0, at) + String.fromCharCode(s.charCodeAt(at) ^ (1 << bit)) + s.slice(at + 1);
}
