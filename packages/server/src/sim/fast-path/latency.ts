import { nearestMajorityRttMs, profileNamed, rttBetween } from '../../geo/index.js';
import { simApp } from '../workload.js';
import { runSimulation } from '../simulation.js';
import { wanOf, type WanProfileName } from '../wan.js';
import { fastQuorumSize } from './replica.js';
import type { FastPathRun } from './run.js';

/**
 * Per-region latencies of strong ops: the fast-path prototype's (sim/fast-path/run.ts) and, to
 * set them against, today's leader-based path as Creek's own simulator runs it (the real CAB,
 * replicas and clients, fault-free, on the same profile with the same jitter).
 */

/** Latencies in ms of the ops asked for in each region (index = replica = region). */
export type ByRegion = number[][];

/**
 * The prototype's latency per op, for a client next to its origin: from the ask to the commit at
 * the origin, plus the client's round trip to its replica (the profile's local round trip).
 */
export function fastPathLatencies(run: FastPathRun): { latencies: ByRegion; slow: number[] } {
  const profile = profileNamed(run.config.profile);
  const latencies: ByRegion = Array.from({ length: run.replicas }, () => []);
  const slow = new Array<number>(run.replicas).fill(0);
  for (const rec of run.ops) {
    if (rec.committedAt === null) continue;
    latencies[rec.op.origin]!.push(rec.committedAt - rec.proposedAt + profile.localRttMs);
    if (rec.fast === false) slow[rec.op.origin]!++;
  }
  return { latencies, slow };
}

/** A fault-free run of today's path: its strong writes' and strong reads' stable latencies. */
export interface TodaysPath {
  readonly writes: ByRegion;
  readonly reads: ByRegion;
  /** The run's verdict: a run whose checkers failed measures nothing worth showing. */
  readonly violations: readonly string[];
}

/**
 * Runs Creek's simulator on `seed` with the profile's delays at their real scale, no faults, the
 * leader placed on replica `leader`, strong reads by quorum or by the leader's read index, and
 * gives the stable latency of each strong op invoked once the placed leader has had time to lead
 * (after `warmupMs`). Seeds whose WAN draw stretches the profile are refused: use another.
 */
export function todaysPath(
  seed: number,
  profile: WanProfileName,
  replicas: number,
  options: { leader: number; quorumReads: boolean; workloadMs: number; warmupMs: number },
): TodaysPath {
  const wan = wanOf(seed, profile);
  if (wan === null || wan.scale !== 1)
    throw new Error(`seed ${seed} stretches the ${profile} profile; pick one that does not`);
  const writes: ByRegion = Array.from({ length: replicas }, () => []);
  const reads: ByRegion = Array.from({ length: replicas }, () => []);
  const result = runSimulation({
    seed,
    replicas,
    faults: 'none',
    network: profile,
    preferredLeader: options.leader,
    quorumReads: options.quorumReads,
    workloadMs: options.workloadMs,
    frames: {
      everyMs: Number.MAX_SAFE_INTEGER,
      onFrame: () => {},
      onOps: (ops) => {
        for (const o of ops) {
          if (!o.strong || o.stableAt === null || o.invokedAt < options.warmupMs) continue;
          (simApp.lookup(o.op)?.readOnly === true ? reads : writes)[o.replica]!.push(
            o.stableAt - o.invokedAt,
          );
        }
      },
    },
  });
  return { writes, reads, violations: result.violations };
}

/** Seeds from `first` on whose draw keeps `profile` at its real scale (todaysPath takes them). */
export function unstretchedSeeds(first: number, count: number, profile: WanProfileName): number[] {
  const out: number[] = [];
  for (let s = first; out.length < count; s++) if (wanOf(s, profile)?.scale === 1) out.push(s);
  return out;
}

/** The round trip from replica `at` to its nearest fast quorum (itself counted). */
export function nearestFastQuorumRttMs(
  profile: WanProfileName,
  at: number,
  replicas: number,
): number {
  const p = profileNamed(profile);
  const rtts = Array.from({ length: replicas }, (_, j) => rttBetween(p, at, j)).sort(
    (x, y) => x - y,
  );
  return rtts[fastQuorumSize(replicas) - 1]!;
}

/** The physical bound of region `at`: its round trip to its nearest majority. */
export function boundMs(profile: WanProfileName, at: number, replicas: number): number {
  return nearestMajorityRttMs(profileNamed(profile), at, replicas);
}

/** The q-quantile (0–1) of `xs` by the nearest rank; NaN when empty. */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}
