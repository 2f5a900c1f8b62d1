import { formatOpId } from '@creek/replica/core/op-id.js';
import { TICK_MS } from './cluster.js';
import type { LeadershipRecord } from './leadership.js';
import type { Invocation } from './run-record.js';
import { longestOneWayMs, type SimWan } from './wan.js';

/**
 * Liveness on a WAN profile: a leader that is alive and connected keeps its lead, and strong ops
 * are decided within a few of the profile's round trips while nothing fails.
 *
 * Judged only on runs on a WAN profile (sim/wan.ts). Their links behave as real ones do, each
 * message taking its link's delay within a few per cent, so timers can be set for them (the WAN
 * timers, geo/timers.ts) and a timer that is wrong for them shows. The uniform delays of the
 * other seeds spread every message over the whole [min, max] range on purpose, to reorder: a
 * heartbeat there may arrive a whole range later than the next, and no timer is judged against
 * that.
 *
 * Fault-free means: no link cut, every replica not lost for good up, no membership change under
 * way, and no replica lost for good in the stretch (LeadershipRecord.faults).
 *
 * (a) Stable leadership. An election started at t by replica R is a violation when another
 * replica L led throughout [t - W, t] and that stretch was fault-free, where W is a heartbeat
 * period plus the longest one-way delay (jitter included) plus two ticks: by t - W + W, every
 * replica has had L's heartbeat since the last fault ended (a restarted or reconnected replica
 * hears the leader within that), so nothing but a timer shorter than the gap between two of L's
 * heartbeats can make R give up on it. A leader's own re-election (a value it re-proposes lacks
 * its Reqs: Proposer.reproposalStalled) is not a suspicion of a leader and is not judged.
 *
 * (b) Strong ops decided in time. A strong op invoked at t is a violation when it has no stable
 * (or failed) answer by t + B, while one leader led throughout [t - W, t + B] and that stretch was
 * fault-free, on a run without message loss (loss is in force for the whole run, and each lost
 * message costs a retransmission period, with no bound on how many in a row). B is six of the
 * longest one-way delays (three round trips) plus 50 ms: the origin's forward to the leader (one),
 * a wait for one of the leader's pipelined instances to free a slot (a round trip: two), the
 * accept round to a majority (two), and the decision's way back to the origin (one); the Req and
 * its causal context travel by gossip at the same time, one delay. The 50 ms cover what is not
 * the network: durable writes before sends (at most 5 ms each, four on the path), ticks (5 ms, a
 * few on the path) and executions (at most 0.5 ms each). A strong read's read index takes a
 * forward, a round and an answer: four delays, within the same bound.
 */
export function checkLiveness(invocations: readonly Invocation[], run: LivenessRun): string[] {
  const { wan, leadership } = run;
  if (wan === null) return [];
  const { quietMs, decideMs } = livenessBounds(wan, run.replicas);
  const { faultFree, ledThroughout } = windows(leadership);
  const out: string[] = [];

  for (const e of leadership.elections) {
    const from = e.at - quietMs;
    const leader = ledThroughout(from, e.at);
    if (leader === null || leader === e.replica || !faultFree(from, e.at)) continue;
    out.push(
      `liveness: replica ${e.replica} started an election at ${e.at.toFixed(1)} ms while replica ${leader} led, alive and connected, with no fault since ${from.toFixed(1)} ms (election timeout ${run.electionTimeoutMs ?? '-'} ms, heartbeat ${wan.timers.heartbeatMs} ms, links up to ${longestOneWayMs(wan, run.replicas).toFixed(0)} ms one way)`,
    );
    if (out.length >= 5) return out;
  }

  for (const { inv, decidedAfterMs } of judgedStrongOps(invocations, run)) {
    if (decidedAfterMs !== null && decidedAfterMs <= decideMs) continue;
    out.push(
      `liveness: strong ${inv.op} ${inv.id === null ? `(tag ${inv.tag})` : formatOpId(inv.id)} invoked at replica ${inv.replica} at ${inv.invokedAt.toFixed(1)} ms was ${decidedAfterMs === null ? 'never decided' : `decided only ${decidedAfterMs.toFixed(1)} ms later`}, beyond the bound of ${decideMs.toFixed(0)} ms, with one leader and no fault throughout`,
    );
    if (out.length >= 10) return out;
  }
  return out;
}

/**
 * The strong ops (b) judges: on a WAN run without loss, those with one leader and no fault from
 * W before their invocation to B after it; each with how long it took to be decided (null: never).
 */
function judgedStrongOps(
  invocations: readonly Invocation[],
  run: LivenessRun,
): { readonly inv: Invocation; readonly decidedAfterMs: number | null }[] {
  if (run.wan === null || run.lossRate > 0) return [];
  const { quietMs, decideMs } = livenessBounds(run.wan, run.replicas);
  const { faultFree, ledThroughout } = windows(run.leadership);
  const out: { inv: Invocation; decidedAfterMs: number | null }[] = [];
  for (const inv of invocations) {
    if (!inv.strong || inv.abandoned) continue;
    const from = inv.invokedAt - quietMs;
    const to = inv.invokedAt + decideMs;
    if (to > run.endAt || ledThroughout(from, to) === null || !faultFree(from, to)) continue;
    const decided = inv.responses.find((r) => r.level !== 'tentative');
    out.push({ inv, decidedAfterMs: decided === undefined ? null : decided.at - inv.invokedAt });
  }
  return out;
}

/** How much of a run (b) judged, for the run's stats: null on a run it does not judge. */
export function livenessStats(
  invocations: readonly Invocation[],
  run: LivenessRun,
): {
  readonly strongOpsJudged: number;
  readonly slowestMs: number;
  readonly boundMs: number;
} | null {
  if (run.wan === null || run.lossRate > 0) return null;
  const judged = judgedStrongOps(invocations, run);
  return {
    strongOpsJudged: judged.length,
    slowestMs: Math.max(0, ...judged.map((j) => j.decidedAfterMs ?? Number.POSITIVE_INFINITY)),
    boundMs: livenessBounds(run.wan, run.replicas).decideMs,
  };
}

/** Whether a stretch was fault-free, and who led throughout one (null: nobody did). */
function windows(leadership: LeadershipRecord): {
  faultFree(from: number, to: number): boolean;
  ledThroughout(from: number, to: number): number | null;
} {
  return {
    faultFree: (from, to) => !leadership.faults.some((f) => f.start <= to && f.end >= from),
    ledThroughout: (from, to) =>
      leadership.terms.find((term) => term.start <= from && term.end >= to)?.replica ?? null,
  };
}

/** What checkLiveness judges of a run, besides its invocations. */
export interface LivenessRun {
  readonly leadership: LeadershipRecord;
  /** The run's WAN profile; null: not judged. */
  readonly wan: SimWan | null;
  readonly replicas: number;
  readonly lossRate: number;
  /** The replicas' election timeout (the WAN one, or a planted bug's), for the message. */
  readonly electionTimeoutMs: number | undefined;
  /** When the run ended (simulated ms): ops whose bound lies beyond it are not judged. */
  readonly endAt: number;
}

/**
 * The liveness checker's bounds for a run on `wan` with `replicas` replicas (checkLiveness says
 * why): `quietMs` (W), the fault-free stretch after which every replica has heard the leader;
 * `decideMs` (B), the most a strong op may take to be decided.
 */
export function livenessBounds(
  wan: SimWan,
  replicas: number,
): { readonly quietMs: number; readonly decideMs: number } {
  const longest = longestOneWayMs(wan, replicas);
  return {
    quietMs: wan.timers.heartbeatMs + longest + 2 * TICK_MS,
    decideMs: 6 * longest + 50,
  };
}
