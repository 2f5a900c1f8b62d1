import { nearestMajorityRttMs, profileNamed } from '../../geo/index.js';
import { simApp } from '../workload.js';
import { runSimulation } from '../simulation.js';
import { wanOf, type WanProfileName } from '../wan.js';
import type { FastPathRun } from './run.js';

/**
 * Per-region latencies of strong ops: the fast-path prototype's (sim/fast-path/run.ts) and, to
 * set them against, today's leader-based path as Creek's own simulator runs it (the real CAB,
 * replicas and clients, fault-free, on the same profile with the same jitter).
 */

/** Latencies in ms of the ops asked for in each region (index = replica = region). */
export type ByRegion = number[][];

/**
 * The prototype's latencies per op, from the ask at its origin: to its commit there (its place in
 * the order is fixed), and to its execution there (the client's answer, with the op's result: it
 * waits for the ops it depends on). Clients sit at their replica with no hop of their own, as the
 * simulator's model clients do for today's path.
 */
export function fastPathLatencies(run: FastPathRun): {
  commit: ByRegion;
  answer: ByRegion;
  slow: number[];
} {
  const commit: ByRegion = Array.from({ length: run.replicas }, () => []);
  const answer: ByRegion = Array.from({ length: run.replicas }, () => []);
  const slow = new Array<number>(run.replicas).fill(0);
  for (const rec of run.ops) {
    if (rec.committedAt !== null) commit[rec.op.origin]!.push(rec.committedAt - rec.proposedAt);
    if (rec.executedAt !== null) answer[rec.op.origin]!.push(rec.executedAt - rec.proposedAt);
    if (rec.fast === false) slow[rec.op.origin]!++;
  }
  return { commit, answer, slow };
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
