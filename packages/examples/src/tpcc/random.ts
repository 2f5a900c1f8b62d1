/**
 * The random functions TPC-C's input generation and population are written in (§2.1.5, §2.1.6,
 * §4.3.2), over a small seeded generator of our own.
 *
 * Both the client (drawing transaction inputs) and the replicas (populating a load chunk from the
 * seed in its arguments) use it, so it is pure: no Math.random, no clock. The same seed gives the
 * same draws on every machine and every run.
 */

/** Mixes a 32-bit value (the MurmurHash3 finalizer): every input bit moves every output bit. */
function fmix32(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/**
 * SplitMix32: a Weyl sequence (add the golden-ratio constant) passed through fmix32. Tiny, fast,
 * 2^32 period, and good enough for a benchmark's inputs; not for cryptography.
 */
export class Rng {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0;
  }

  /**
   * A generator for one named stream, e.g. `Rng.derive(seed, CUSTOMER, w, d, c)`: each row of the
   * population gets its own stream, so a row's contents do not depend on how the load was chunked.
   */
  static derive(seed: number, ...parts: number[]): Rng {
    let h = fmix32((seed >>> 0) ^ 0x5bd1e995);
    for (const p of parts) h = fmix32((h ^ (p >>> 0)) + 0x9e3779b9);
    return new Rng(h);
  }

  /** A uniform unsigned 32-bit integer. */
  u32(): number {
    this.state = (this.state + 0x9e3779b9) >>> 0;
    return fmix32(this.state);
  }

  /** A number in [0, 1). */
  next(): number {
    return this.u32() / 4_294_967_296;
  }

  /** random(x .. y) of §2.1.5: an integer uniformly distributed in [x, y], inclusive. */
  int(x: number, y: number): number {
    return x + Math.floor(this.next() * (y - x + 1));
  }

  /**
   * NURand(A, x, y) of §2.1.6: `(((random(0, A) | random(x, y)) + C) % (y − x + 1)) + x`. The OR
   * skews the draws towards values with many low bits set: some customers and items are hot.
   */
  nurand(a: number, x: number, y: number, c: number): number {
    return ((((this.int(0, a) | this.int(x, y)) + c) % (y - x + 1)) + x) | 0;
  }

  /** A random a-string (§4.3.2.2): letters and digits, length in [min, max]. */
  aString(min: number, max: number): string {
    return this.chars(ALNUM, this.int(min, max));
  }

  /** A random n-string (§4.3.2.2): digits only, length in [min, max]. */
  nString(min: number, max: number): string {
    return this.chars('0123456789', this.int(min, max));
  }

  /** Upper-case letters only, e.g. a two-letter state. */
  letters(length: number): string {
    return this.chars(LETTERS, length);
  }

  /**
   * An a-string of length [min, max] that, with probability 10 %, holds "ORIGINAL" at a random
   * position (I_DATA and S_DATA, §4.3.3.1): New-Order calls such an item-and-stock pair "brand".
   */
  data(min: number, max: number): string {
    const s = this.aString(min, max);
    if (this.int(1, 100) > 10) return s;
    const at = this.int(0, s.length - ORIGINAL.length);
    return s.slice(0, at) + ORIGINAL + s.slice(at + ORIGINAL.length);
  }

  /** A uniformly random permutation of 1..n (Fisher–Yates). */
  permutation(n: number): number[] {
    const out = Array.from({ length: n }, (_, i) => i + 1);
    for (let i = n - 1; i > 0; i--) {
      const j = this.int(0, i);
      const t = out[i]!;
      out[i] = out[j]!;
      out[j] = t;
    }
    return out;
  }

  private chars(alphabet: string, length: number): string {
    let s = '';
    for (let i = 0; i < length; i++) s += alphabet[this.int(0, alphabet.length - 1)];
    return s;
  }
}

export const ORIGINAL = 'ORIGINAL';

/** The syllables C_LAST is made of (§4.3.2.3). */
const SYLLABLES = ['BAR', 'OUGHT', 'ABLE', 'PRI', 'PRES', 'ESE', 'ANTI', 'CALLY', 'ATION', 'EING'];

/**
 * C_LAST for a number in [0, 999] (§4.3.2.3): the syllables of its three digits, e.g. 371 →
 * "PRICALLYOUGHT". Upper-case letters only, so it is safe inside a key.
 */
export function lastName(n: number): string {
  if (!Number.isInteger(n) || n < 0 || n > 999) throw new RangeError(`lastName(${n}): not 0..999`);
  return SYLLABLES[Math.floor(n / 100)]! + SYLLABLES[Math.floor(n / 10) % 10]! + SYLLABLES[n % 10]!;
}
