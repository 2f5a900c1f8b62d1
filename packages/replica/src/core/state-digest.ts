import { canonicalJson, type JsonValue } from '@creek/app';

/**
 * A fixed-size digest of a replica's state (key → value), equal on replicas that hold the same
 * state, kept up to date key by key: /status shows it instead of the state itself (which it once
 * did, as canonical JSON, to anyone: every value, and megabytes per request on a large store).
 *
 * It is a multiset hash: the sum, lane by lane modulo 2^32, of a 128-bit hash of each
 * `key = value` pair. A sum does not depend on the order the pairs were added in, and a pair is
 * replaced by subtracting its old hash and adding the new one, so a change costs one hash of the
 * changed pair, never a pass over the state. It detects divergence; it is not a MAC (the hash is
 * not cryptographic, and the core stays free of Node modules so that it also runs in browsers).
 */
export class StateDigest {
  private readonly lanes = new Uint32Array(4);
  /** The hash each present key contributes now (about 100 bytes a key). */
  private readonly contributions = new Map<string, Uint32Array>();

  /** The digest of a whole state, computed from scratch (checkers compare it with a kept one). */
  static of(state: Iterable<readonly [string, JsonValue]>): string {
    const d = new StateDigest();
    for (const [key, value] of state) d.set(key, value);
    return d.hex();
  }

  /** Sets the value of `key` (undefined: the key is absent). */
  set(key: string, value: JsonValue | undefined): void {
    const old = this.contributions.get(key);
    if (old !== undefined) {
      for (let i = 0; i < 4; i++) this.lanes[i] = this.lanes[i]! - old[i]!;
      this.contributions.delete(key);
    }
    if (value === undefined) return;
    const h = pairHash(key, value);
    for (let i = 0; i < 4; i++) this.lanes[i] = this.lanes[i]! + h[i]!;
    this.contributions.set(key, h);
  }

  /** 32 hex digits. */
  hex(): string {
    return lanesHex(this.lanes);
  }
}

/**
 * A StateDigest without its memory of each key's hash: the same sum, kept by a caller that knows
 * the value a key had before it changed (`replace`), so it costs no memory per key. The digest
 * of the finalized state (final-digests.ts) is kept so: finalizing a write finds the key's previous
 * final version right before it in the version chain.
 */
export class DigestSum {
  /** The sum, lane by lane (read it, never change it: `lane`). */
  private readonly lanes = new Uint32Array(4);
  /** Where each pair's hash is made: it runs on every finalized write, so it allocates nothing. */
  private static readonly scratch = new Uint32Array(4);

  /** The sum over a whole state (`StateDigest.of` gives the same hex). */
  static of(state: Iterable<readonly [string, JsonValue]>): DigestSum {
    const d = new DigestSum();
    for (const [key, value] of state) d.replace(key, undefined, value);
    return d;
  }

  /** `key` held `before` and now holds `after` (undefined: absent). */
  replace(key: string, before: JsonValue | undefined, after: JsonValue | undefined): void {
    const h = DigestSum.scratch;
    if (before !== undefined) this.subtract(hash128Into(pairText(key, before), h));
    if (after !== undefined) this.add(hash128Into(pairText(key, after), h));
  }

  /** A pair whose hash (pairHash) is known joins the sum. */
  add(h: PairHash): void {
    for (let i = 0; i < 4; i++) this.lanes[i] = this.lanes[i]! + h[i]!;
  }

  /** A pair whose hash (pairHash) is known leaves the sum. */
  subtract(h: PairHash): void {
    for (let i = 0; i < 4; i++) this.lanes[i] = this.lanes[i]! - h[i]!;
  }

  /** Lane `i` (0 to 3) of the sum now. */
  lane(i: number): number {
    return this.lanes[i]!;
  }

  /** 32 hex digits. */
  hex(): string {
    return lanesHex(this.lanes);
  }
}

/** What one `key = value` pair of a digest hashes. */
function pairText(key: string, value: JsonValue): string {
  return `${JSON.stringify(key)}=${canonicalJson(value)}`;
}

/** The hash one `key = value` pair adds to a digest: four 32-bit lanes. */
export type PairHash = Uint32Array;

/**
 * The hash one `key = value` pair adds to a digest. Where a pair is hashed does not matter (the
 * same on every thread and replica), so an execution worker hashes the values it writes and the
 * main thread, which keeps the digest, need not (ExecutionResult.pairHashes).
 */
export function pairHash(key: string, value: JsonValue): PairHash {
  return hash128Into(pairText(key, value), new Uint32Array(4));
}

/**
 * The pair hashes of `writes`, four lanes each in one array (a delete's are zero): what a worker
 * sends with its results, one buffer however many writes.
 */
export function pairHashesOf(
  writes: readonly (readonly [string, JsonValue | undefined])[],
): Uint32Array {
  const out = new Uint32Array(writes.length * 4);
  for (let i = 0; i < writes.length; i++) {
    const [key, value] = writes[i]!;
    if (value !== undefined) hash128Into(pairText(key, value), out.subarray(i * 4, i * 4 + 4));
  }
  return out;
}

/** Four lanes as 32 hex digits. */
export function lanesHex(lanes: Iterable<number>): string {
  let out = '';
  for (const lane of lanes) out += lane.toString(16).padStart(8, '0');
  return out;
}

/**
 * 128 bits of a string, as four 32-bit lanes: four FNV-style multiply–xor passes over its UTF-16
 * code units with distinct odd multipliers, then MurmurHash3's lane mixing and finalizer, so every
 * output bit depends on every input unit.
 */
function hash128Into(s: string, out: Uint32Array): Uint32Array {
  let h1 = 0x811c9dc5;
  let h2 = 0x9e3779b9;
  let h3 = 0x85ebca6b;
  let h4 = 0xc2b2ae35;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    h3 = Math.imul(h3 ^ c, 0x27d4eb2f);
    h4 = Math.imul(h4 ^ c, 0x165667b1);
  }
  h1 ^= s.length;
  h2 ^= s.length;
  h3 ^= s.length;
  h4 ^= s.length;
  h1 = (h1 + h2 + h3 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  h1 = fmix32(h1);
  h2 = fmix32(h2);
  h3 = fmix32(h3);
  h4 = fmix32(h4);
  h1 = (h1 + h2 + h3 + h4) | 0;
  h2 = (h2 + h1) | 0;
  h3 = (h3 + h1) | 0;
  h4 = (h4 + h1) | 0;
  out[0] = h1;
  out[1] = h2;
  out[2] = h3;
  out[3] = h4;
  return out;
}

/** 128 bits of a string as 32 hex digits (the hash of StateDigest; not cryptographic). */
export function hashHex(s: string): string {
  return lanesHex(hash128Into(s, new Uint32Array(4)));
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
