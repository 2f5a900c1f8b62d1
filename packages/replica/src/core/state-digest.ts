import type { JsonValue } from '@creek/app';
import { hashPairInto, hashTextInto } from './pair-hash.js';

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
    if (before !== undefined) this.subtract(hashPairInto(key, before, h));
    if (after !== undefined) this.add(hashPairInto(key, after, h));
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

/** The hash one `key = value` pair adds to a digest: four 32-bit lanes. */
export type PairHash = Uint32Array;

/**
 * The hash one `key = value` pair adds to a digest. Where a pair is hashed does not matter (the
 * same on every thread and replica), so an execution worker hashes the values it writes and the
 * main thread, which keeps the digest, need not (ExecutionResult.pairHashes).
 */
export function pairHash(key: string, value: JsonValue): PairHash {
  return hashPairInto(key, value, new Uint32Array(4));
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
    if (value !== undefined) hashPairInto(key, value, out.subarray(i * 4, i * 4 + 4));
  }
  return out;
}

/** Four lanes as 32 hex digits. */
export function lanesHex(lanes: Iterable<number>): string {
  let out = '';
  for (const lane of lanes) out += lane.toString(16).padStart(8, '0');
  return out;
}

/** 128 bits of a string as 32 hex digits (the hash of StateDigest; not cryptographic). */
export function hashHex(s: string): string {
  return lanesHex(hashTextInto(s, new Uint32Array(4)));
}
