import type { JsonValue } from '@creek/app';
import type { OpId } from './op-id.js';
import { DigestSum, lanesHex, pairHash, type PairHash } from './state-digest.js';

/**
 * How many committed positions a replica keeps the digest of (the last ones it finalized): the
 * window in which replicas that disagree can name the first op whose effects differed. Replicas
 * compare digests every anti-entropy round (50 ms), so a divergence is caught a few hundred ops
 * after the op that caused it on a loaded cluster; a replica catching up on thousands of ops
 * compares late, and may only be able to say "at or before" (host/divergence.ts).
 */
export const FINAL_DIGESTS_KEPT = 4096;

/** The digest of the finalized state right after the op at a committed position. */
export interface FinalDigest {
  /** Committed ops up to and including this one (the first op's is 1). */
  readonly position: number;
  /** The op finalized at this position; null for the state a replica started from. */
  readonly id: OpId | null;
  readonly op: string | null;
  /** StateDigest's 32 hex digits of the state after it. */
  readonly digest: string;
}

/**
 * A FinalDigest as the ring keeps it: the sum's four lanes, written out as hex only when asked
 * (a claim every 50 ms, a divergence), not for every op finalized.
 */
class KeptDigest implements FinalDigest {
  private hex: string | null = null;
  private readonly lanes: readonly [number, number, number, number];

  constructor(
    readonly position: number,
    readonly id: OpId | null,
    readonly op: string | null,
    sum: DigestSum,
  ) {
    this.lanes = [sum.lane(0), sum.lane(1), sum.lane(2), sum.lane(3)];
  }

  get digest(): string {
    return (this.hex ??= lanesHex(this.lanes));
  }
}

/**
 * A key's value as finalizing sees it: a version of the store (or a test's stand-in), which keeps
 * its pair hash once it is known, so the hash made when it became final serves again when a later
 * write replaces it.
 */
export interface FinalPair {
  readonly key: string;
  /** undefined: the key is absent (a delete). */
  readonly value: JsonValue | undefined;
  pairHash?: PairHash;
}

/** What finalizing a write changed in the finalized state (VersionStore.finalize tells it). */
export interface FinalChanges {
  /** `after` is final now; `before` was the key's final version until now (null: none). */
  changed(before: FinalPair | null, after: FinalPair): void;
}

/** A pair's hash, made once. */
function hashOf(p: FinalPair, value: JsonValue): PairHash {
  return (p.pairHash ??= pairHash(p.key, value));
}

/**
 * The digest of the replica's finalized state — committed ops executed at their final position,
 * the same state on every replica at the same position when ops are deterministic — after each of
 * the last FINAL_DIGESTS_KEPT positions, with the op finalized there. Replicas compare these to
 * catch a nondeterministic op (host/divergence.ts): unlike the /status digest, which includes
 * tentative writes, two replicas' digests at one position must be equal.
 *
 * Kept as finalization goes: the hash of each written value is added and that of the value it
 * replaced taken away (DigestSum), each hash made once and kept on its version (FinalPair), or
 * made by the worker that ran the write; a checkpoint or a state transfer starts it again from the state it
 * installs (`restart`).
 */
export class FinalDigests implements FinalChanges {
  private sum = new DigestSum();
  /** A ring of the last `kept` positions' digests: position p at `(p - first + start) % kept`. */
  private ring: FinalDigest[] = [];
  private start = 0;

  constructor(private readonly kept = FINAL_DIGESTS_KEPT) {
    if (!Number.isInteger(kept) || kept < 2) throw new Error('kept must be an integer ≥ 2');
    this.ring.push(new KeptDigest(0, null, null, this.sum));
  }

  /** Starts again from a state installed at `position` (a checkpoint, a peer's state). */
  restart(position: number, state: Iterable<readonly [string, JsonValue]>): void {
    this.sum = DigestSum.of(state);
    this.ring = [new KeptDigest(position, null, null, this.sum)];
    this.start = 0;
  }

  changed(before: FinalPair | null, after: FinalPair): void {
    if (before !== null && before.value !== undefined)
      this.sum.subtract(hashOf(before, before.value));
    if (after.value !== undefined) this.sum.add(hashOf(after, after.value));
  }

  /** The op at `position` is final, and `changed` was told each of its writes. */
  finalized(position: number, id: OpId, op: string): void {
    const last = this.latest().position;
    if (position !== last + 1) throw new Error(`final digests: position ${position} after ${last}`);
    const entry = new KeptDigest(position, id, op, this.sum);
    if (this.ring.length < this.kept) this.ring.push(entry);
    else {
      this.ring[this.start] = entry;
      this.start = (this.start + 1) % this.kept;
    }
  }

  /** The newest finalized position's digest. */
  latest(): FinalDigest {
    const n = this.ring.length;
    return this.ring[(this.start + n - 1) % n]!;
  }

  /** The oldest position still kept. */
  oldest(): FinalDigest {
    return this.ring[this.start]!;
  }

  /** The digest at `position`, if it is kept. */
  at(position: number): FinalDigest | undefined {
    const first = this.oldest().position;
    if (position < first || position > this.latest().position) return undefined;
    return this.ring[(this.start + position - first) % this.ring.length];
  }

  /** Every kept digest, oldest first. */
  entries(): FinalDigest[] {
    return [...this.ring.slice(this.start), ...this.ring.slice(0, this.start)];
  }
}
