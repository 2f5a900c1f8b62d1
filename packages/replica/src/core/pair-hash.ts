import type { JsonValue } from '@creek/app';

/**
 * The 128-bit hash of a state digest's `key = value` pair (state-digest.ts), computed while
 * walking the value rather than over a string built first.
 *
 * Why: every finalized write is hashed (the digest of the finalized state), on the main thread
 * when ops run inline and on the execution workers otherwise. Building the pair's text —
 * `JSON.stringify(key) + '=' + canonicalJson(value)`, a string per field and per level, keys
 * sorted — cost three to five times the hashing itself, and on TPC-C rows it was the largest
 * single cost of finalizing. The walk below feeds the hash the very code units that text holds,
 * in the same order, so the result is the same hash bit for bit (replicas of different versions
 * compare digests; packages/server/test/core/pair-hash.test.ts checks it against the text).
 *
 * The hash: four FNV-style multiply–xor passes over the text's UTF-16 code units with distinct
 * odd multipliers, the text's length mixed in, then MurmurHash3's lane mixing and finalizer.
 */

// The hash being computed: one pair at a time, on one thread (a module's state is per thread).
let h1 = 0;
let h2 = 0;
let h3 = 0;
let h4 = 0;
/** Code units fed so far. */
let units = 0;

function start(): void {
  h1 = 0x811c9dc5;
  h2 = 0x9e3779b9;
  h3 = 0x85ebca6b;
  h4 = 0xc2b2ae35;
  units = 0;
}

function unit(c: number): void {
  h1 = Math.imul(h1 ^ c, 0x01000193);
  h2 = Math.imul(h2 ^ c, 0x5bd1e995);
  h3 = Math.imul(h3 ^ c, 0x27d4eb2f);
  h4 = Math.imul(h4 ^ c, 0x165667b1);
  units++;
}

/** Feeds the code units of `s` as they are (in locals: most of a pair's units pass here). */
function text(s: string): void {
  let a = h1;
  let b = h2;
  let c = h3;
  let d = h4;
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    a = Math.imul(a ^ u, 0x01000193);
    b = Math.imul(b ^ u, 0x5bd1e995);
    c = Math.imul(c ^ u, 0x27d4eb2f);
    d = Math.imul(d ^ u, 0x165667b1);
  }
  h1 = a;
  h2 = b;
  h3 = c;
  h4 = d;
  units += s.length;
}

/**
 * Feeds `JSON.stringify(s)`: the string in quotes, as it is when nothing in it needs escaping (no
 * control character, quote, backslash or surrogate: one pass hashes and checks, and the hash so
 * far is kept only if nothing did); else JSON's own escaping, rare enough that building the string
 * is no cost.
 */
function jsonString(s: string): void {
  let a = Math.imul(h1 ^ 0x22, 0x01000193);
  let b = Math.imul(h2 ^ 0x22, 0x5bd1e995);
  let c = Math.imul(h3 ^ 0x22, 0x27d4eb2f);
  let d = Math.imul(h4 ^ 0x22, 0x165667b1);
  for (let i = 0; i < s.length; i++) {
    const u = s.charCodeAt(i);
    if (u < 0x20 || u === 0x22 || u === 0x5c || (u & 0xf800) === 0xd800)
      return text(JSON.stringify(s));
    a = Math.imul(a ^ u, 0x01000193);
    b = Math.imul(b ^ u, 0x5bd1e995);
    c = Math.imul(c ^ u, 0x27d4eb2f);
    d = Math.imul(d ^ u, 0x165667b1);
  }
  h1 = Math.imul(a ^ 0x22, 0x01000193);
  h2 = Math.imul(b ^ 0x22, 0x5bd1e995);
  h3 = Math.imul(c ^ 0x22, 0x27d4eb2f);
  h4 = Math.imul(d ^ 0x22, 0x165667b1);
  units += s.length + 2;
}

/** Feeds `canonicalJson(v)` (@creek/app): sorted object keys, `undefined` as the word. */
function canonical(v: JsonValue | undefined): void {
  if (v === undefined) return text('undefined');
  if (v === null) return text('null');
  switch (typeof v) {
    case 'string':
      return jsonString(v);
    case 'number':
      // JSON.stringify's number text (String's, and `null` where JSON has no number).
      return text(Number.isFinite(v) ? String(v) : 'null');
    case 'boolean':
      return text(v ? 'true' : 'false');
  }
  if (Array.isArray(v)) {
    unit(0x5b); // [
    for (let i = 0; i < v.length; i++) {
      if (i > 0) unit(0x2c); // ,
      // A hole is nothing, as `map(...).join(',')` makes it.
      if (i in v) canonical(v[i] as JsonValue | undefined);
    }
    unit(0x5d); // ]
    return;
  }
  const o = v as { [key: string]: JsonValue | undefined };
  const keys = Object.keys(o);
  // Values an app builds usually list their fields in one fixed order: sort only when needed.
  for (let i = 1; i < keys.length; i++)
    if (keys[i - 1]! > keys[i]!) {
      keys.sort();
      break;
    }
  unit(0x7b); // {
  for (let i = 0; i < keys.length; i++) {
    if (i > 0) unit(0x2c); // ,
    const k = keys[i]!;
    jsonString(k);
    unit(0x3a); // :
    canonical(o[k]);
  }
  unit(0x7d); // }
}

/** Ends the hash into `out`: the length mixed in, the lanes mixed and finalized. */
function finish(out: Uint32Array): Uint32Array {
  let a = h1 ^ units;
  let b = h2 ^ units;
  let c = h3 ^ units;
  let d = h4 ^ units;
  a = (a + b + c + d) | 0;
  b = (b + a) | 0;
  c = (c + a) | 0;
  d = (d + a) | 0;
  a = fmix32(a);
  b = fmix32(b);
  c = fmix32(c);
  d = fmix32(d);
  a = (a + b + c + d) | 0;
  b = (b + a) | 0;
  c = (c + a) | 0;
  d = (d + a) | 0;
  out[0] = a;
  out[1] = b;
  out[2] = c;
  out[3] = d;
  return out;
}

/** The hash of the text `s` into `out` (four 32-bit lanes). */
export function hashTextInto(s: string, out: Uint32Array): Uint32Array {
  start();
  text(s);
  return finish(out);
}

/**
 * The hash of the pair `key = value` into `out`: the hash of the text
 * `JSON.stringify(key) + '=' + canonicalJson(value)`, without making that text.
 */
export function hashPairInto(key: string, value: JsonValue, out: Uint32Array): Uint32Array {
  start();
  jsonString(key);
  unit(0x3d); // =
  canonical(value);
  return finish(out);
}

/** MurmurHash3's 32-bit finalizer (avalanche). */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h;
}
