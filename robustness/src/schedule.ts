import { Prng } from '@creek/server/sim';

/**
 * The nemesis's schedule, decided by the seed alone: which fault comes when and to whom. Real
 * processes make what follows timing-dependent (which replica leads when a fault starts, which ops
 * are in flight), so a seed reproduces the schedule, not the interleaving.
 */

export const NEMESES = ['kill', 'freeze', 'partition', 'wipe', 'replace'] as const;
export type NemesisKind = (typeof NEMESES)[number];

/** Whom a fault hits: the replica that leads when it starts, or the k-th of the others (ids ascending). */
export type Target =
  { readonly role: 'leader' } | { readonly role: 'follower'; readonly k: number };

export interface Step {
  readonly kind: NemesisKind;
  readonly target: Target;
  /** How long the fault lasts (a kill's or wipe's downtime, a freeze, a partition). */
  readonly faultMs: number;
  /** Quiet time after the cluster is healthy again, before the next fault. */
  readonly quietMs: number;
}

/**
 * Steps for a run of `durationMs`: first every kind once, in an order the seed shuffles (so a
 * short run still meets each), then kinds drawn at random. More than the run can use are made;
 * the runner stops when its time is up.
 */
export function schedule(
  seed: number,
  kinds: readonly NemesisKind[],
  replicas: number,
  durationMs: number,
): Step[] {
  const prng = Prng.named(seed, 'nemesis');
  const order = [...kinds];
  for (let i = order.length - 1; i > 0; i--) {
    const j = prng.int(0, i);
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  const steps: Step[] = [];
  let planned = 0;
  for (let n = 0; planned < durationMs; n++) {
    const kind = n < order.length ? order[n]! : prng.pick(kinds);
    const target: Target = prng.chance(0.5)
      ? { role: 'leader' }
      : { role: 'follower', k: prng.int(0, replicas - 2) };
    const faultMs = prng.int(2_000, 6_000);
    const quietMs = prng.int(1_000, 3_000);
    steps.push({ kind, target, faultMs, quietMs });
    planned += faultMs + quietMs;
  }
  return steps;
}

export function describeStep(s: Step): string {
  const whom = s.target.role === 'leader' ? 'the leader' : `follower #${s.target.k}`;
  return `${s.kind} ${whom} for ${(s.faultMs / 1000).toFixed(1)} s`;
}
