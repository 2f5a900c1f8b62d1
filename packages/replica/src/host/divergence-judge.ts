import type { FinalDigest } from '../core/final-digests.js';

/**
 * A replica's digests of its finalized state at consecutive committed positions, as one replica
 * sends them to another (DivergenceMessage `digests`): position `from`, `from + 1`, …
 */
export interface DigestRun {
  readonly from: number;
  readonly digests: readonly string[];
}

/** The run of digests a replica keeps (FinalDigests.entries), as it sends them. */
export function runOf(entries: readonly FinalDigest[]): DigestRun {
  return { from: entries[0]?.position ?? 0, digests: entries.map((e) => e.digest) };
}

/** The digest of `run` at `position`, or undefined outside it. */
export function digestAt(run: DigestRun, position: number): string | undefined {
  return run.digests[position - run.from];
}

/** The last position of `run` (from - 1 when it is empty). */
export function lastOf(run: DigestRun): number {
  return run.from + run.digests.length - 1;
}

/**
 * The first committed position at which two replicas' finalized states differ, from the
 * positions both kept; null when they agree on all of them. `exact`: they agree at the position
 * before it, so the op there is the first whose effects differ; otherwise the difference may be
 * older than what both kept ("at or before").
 */
export function firstDifference(
  a: DigestRun,
  b: DigestRun,
): { readonly position: number; readonly exact: boolean } | null {
  const from = Math.max(a.from, b.from);
  const to = Math.min(lastOf(a), lastOf(b));
  for (let p = from; p <= to; p++)
    if (digestAt(a, p) !== digestAt(b, p)) return { position: p, exact: p > from };
  return null;
}

/**
 * Which side of a divergence a replica is on, from every member's digest at the first position
 * where they differ:
 * - `majority`: a majority of the members (itself included) holds its digest: its state is the
 *   one the cluster agrees on, and it goes on serving;
 * - `minority`: a majority holds another digest: its state is wrong, and it serves no stable
 *   answer;
 * - `undecided`: no digest is known to be held by a majority (a tie, or members not heard from
 *   yet): nobody can tell which state is right, and it serves no stable answer either.
 */
export type DivergenceSide = 'majority' | 'minority' | 'undecided';

/**
 * The side of replica `self` (DivergenceSide), given each member's digest at the position
 * (undefined: not known). Only members count: a majority is more than half of them.
 */
export function sideOf(
  self: number,
  members: readonly number[],
  digestOf: (replica: number) => string | undefined,
): DivergenceSide {
  const majority = Math.floor(members.length / 2) + 1;
  const counts = new Map<string, number>();
  for (const m of members) {
    const d = digestOf(m);
    if (d !== undefined) counts.set(d, (counts.get(d) ?? 0) + 1);
  }
  const own = digestOf(self);
  // Its own state there not known yet (it has not finalized the position, or no longer keeps it).
  if (own === undefined) return 'undecided';
  if ((counts.get(own) ?? 0) >= majority) return 'majority';
  for (const n of counts.values()) if (n >= majority) return 'minority';
  return 'undecided';
}
