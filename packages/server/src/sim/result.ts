import { checkInvariantReports } from './invariant-reports.js';
import { ABANDON_OP } from '@creek/app';
import { formatOpId, opKey } from '@creek/replica/core/op-id.js';
import { CATCH_UP_STALL_MS } from '@creek/replica/host/options.js';
import type { ReplicaHost } from '@creek/replica/host/replica-host.js';
import type { CatchUpWork } from './catch-up.js';
import type { SessionStats, SimClientSide } from './client-side.js';
import { checkRun } from './checkers.js';
import { checkDivergence, divergenceStats, type DivergenceStats } from './divergence-check.js';
import { PLANTED_KEY_PREFIXES, PLANTED_OP } from './nondeterminism.js';
import { complete } from './clients.js';
import { TICK_MS, type SimCluster } from './cluster.js';
import type { CatchUpStart } from './faults.js';
import type { LeadershipStats, LeadershipTrack } from './leader-placement.js';
import type { SimParameters } from './parameters.js';
import { closable, stranded, unclosed } from './process.js';
import { abandonAnswer, liveReplicas } from './run-record.js';
import type { RunState } from './run-state.js';
import { livenessStats, type LivenessRun } from './liveness-checker.js';
import { longestOneWayMs, paxosTimers } from './wan.js';
import type { SimWatches } from './watches.js';

export interface SimResult {
  readonly seed: number;
  readonly replicas: number;
  readonly ok: boolean;
  readonly violations: string[];
  readonly parameters: SimParameters;
  readonly stats: SimStats;
  /**
   * The committed order at the end, as op ids written `r<replica>#<eventNo>`, of the first replica
   * not lost for good (the checkers hold every replica to a prefix of one order): what a replay of
   * the seed elsewhere, in the visualizer, must show.
   */
  readonly committedOrder: readonly string[];
}

export interface SimStats {
  /** Checkpoints written, records the disks dropped behind them, and restarts from a checkpoint. */
  checkpoints: number;
  truncatedRecords: number;
  restartsFromCheckpoint: number;
  /** Ops submitted again at another replica (failover), and how many of those ops had two or more submissions committed (deduplicated). */
  resubmissions: number;
  duplicatesCommitted: number;
  /**
   * Ops whose client, its replica gone, abandoned them (`creek.abandon`) instead of resubmitting,
   * and how many of those the cluster answered abandoned (the rest had taken effect first).
   */
  abandons: number;
  abandoned: number;
  ops: number;
  strongOps: number;
  committed: number;
  executions: number;
  rollbacks: number;
  /** Executions started beyond the validation frontier, and those a conflict discarded. */
  aheadExecutions: number;
  aheadConflicts: number;
  /** Executions that read a mirror of the store, and their reads of a version it no longer had. */
  mirrorExecutions: number;
  /** CAB's checks of what casts lack, per committed op, at the replica that did the most. */
  lackChecksPerOp: number;
  staleMirrorReads: number;
  reorderingCommits: number;
  executionRatio: number;
  speculated: number;
  speculatedCorrectly: number;
  messages: number;
  partitions: number;
  crashes: number;
  /** Disk writes that crashes lost, not yet durable (nothing that depended on them had left). */
  lostWrites: number;
  /** Replicas crashed for good ('lose', or halted after their disk was lost). */
  lost: number;
  /** Disks lost ('wipe'), and how many of those replicas then halted (lost state, see `halts`). */
  wipes: number;
  wipedHalts: number;
  /**
   * Storage faults (SimConfig.storageFaults): machines that lost power, writes torn, records
   * corrupted or read back stale, and disks their replicas found damaged and rebuilt from peers.
   */
  powerLosses: number;
  tornWrites: number;
  corruptRecords: number;
  staleRecords: number;
  damagedDisks: number;
  /** State transfers installed (a replica rebuilt from a peer's checkpoint). */
  transfers: number;
  /** Transfers a replica took up again after it crashed mid-transfer. */
  transfersResumed: number;
  /** Membership changes decided (applied or not), replicas added, and replicas removed. */
  reconfigurations: number;
  added: number;
  removed: number;
  elections: number;
  /** Other origins' strong ops cast on their behalf (counted by the replicas up at the end). */
  adopted: number;
  /**
   * Ops still tentative at the end at a replica not lost for good (the most at any one): ops of
   * a dead origin that follow one of its ops nobody received (FinalReplicaState.stranded).
   */
  stranded: number;
  /** Dead origins closed (core/closing-origins.ts), and the ops their closes dropped, at the replica that saw most. */
  closedOrigins: number;
  droppedByClose: number;
  simulatedMs: number;
  /** With faults 'lag': what the lagging replica did from the heal until the run ended. */
  catchUp: CatchUpWork | null;
  /** With clients 'sdk': what the client sessions did besides their ops (absent otherwise). */
  sessions?: SessionStats;
  /** With the planted nondeterministic op (SimConfig.nondeterministic): what it did. */
  divergence?: DivergenceStats;
  /**
   * On a WAN profile without message loss: how many strong ops the liveness checker judged, the
   * slowest of them to be decided and its bound (sim/liveness-checker.ts); else null.
   */
  liveness: ReturnType<typeof livenessStats>;
  /** With a preferred leader (SimParameters.preferredLeader): what leadership did. */
  leadership?: LeadershipStats;
}

/** What the end of a run needs from its parts besides the shared state. */
export interface RunEnd {
  readonly cluster: SimCluster;
  readonly watches: SimWatches;
  readonly clients: SimClientSide;
  /** Faults 'lag': the lagging replica's counts when it was healed (SimFaults.catchUpFrom). */
  readonly catchUpFrom: CatchUpStart | null;
  /** The run reached quiescence before its deadline. */
  readonly quiescent: boolean;
  /** With a preferred leader: who led when (sim/leader-placement.ts); null otherwise. */
  readonly leadership: LeadershipTrack | null;
}

/**
 * The end of a run: each replica's final state into the record, the checkers' verdict on the
 * record with the violations the parts saw as the run went, and the run's statistics.
 */
export function simResult(run: RunState, end: RunEnd): SimResult {
  const { config, app, params, procs, record, counts } = run;
  const { cluster, watches, quiescent } = end;
  const dead = closable(procs, record, config.closesOff === true);
  for (const p of procs) {
    const s = p.host.inspect().replica.stats();
    record.finals.push({
      digest: p.host.inspect().replica.stateJson(),
      hash: p.host.inspect().replica.stateDigest(),
      tentative: s.tentative,
      unvalidated: s.unvalidated,
      stranded: stranded(p, record, dead),
      unclosed: unclosed(p, record, dead),
    });
  }

  for (const p of procs) cluster.countPaxos(p);
  // The most any replica spent per op that reached the committed order.
  const ordered = Math.max(1, ...procs.map((p) => p.host.inspect().replica.stats().committed));
  const lackChecksPerOp = Math.max(...counts.lackChecks.map((n) => (n ?? 0) / ordered));
  const backstopHits = counts.backstopHits;
  const liveness: LivenessRun = {
    leadership: run.leadership.record,
    wan: params.network.wan ?? null,
    // Those added by membership changes too: one may sit in a farther region.
    replicas: record.replicas,
    lossRate: params.network.lossRate,
    electionTimeoutMs: paxosTimers(
      config.unsafeElectionBelowRtt === true,
      params.network.wan ?? null,
      params.network.minDelayMs,
      config.replicas,
    ).electionTimeoutMs,
    endAt: run.now,
  };
  const violations = [
    ...cluster.halts,
    ...cluster.transferViolations,
    // CAB's index of what waits for which Req missed an arrival (MultiPaxos.backstopHits).
    ...(backstopHits === 0
      ? []
      : [
          `paxos: ${backstopHits} waiting casts or 2a were found ready only by the periodic recheck`,
        ]),
    ...cluster.reused,
    ...cluster.tookOpsAgain,
    ...watches.violations.slice(0, 10),
    ...(config.liveQueries === true && quiescent ? watches.checkFinal() : []),
    ...checkRun(record, app, {
      quiescent,
      speculative: params.execution.speculative,
      // Pushes sent before the split arrive up to a delay later (a duplicate up to twice that);
      // then the hold ends at the next tick after CATCH_UP_STALL_MS without one. On a WAN
      // profile, the delay is its longest link's.
      holdBoundMs:
        CATCH_UP_STALL_MS +
        2 *
          ((params.network.wan ?? null) === null
            ? params.network.maxDelayMs
            : longestOneWayMs(params.network.wan!, record.replicas)) +
        2 * TICK_MS,
      // Writes complete in order, each within diskLatencyMs: 10 ms covers the drawn ones (at most
      // 5); a longer one set by the config (held writes) gets twice its own.
      diskWaitMs: Math.max(10, 2 * params.diskLatencyMs),
      // On a WAN profile: a leader alive and connected keeps its lead, and strong ops are
      // decided within a few round trips (sim/liveness-checker.ts).
      liveness,
      ...(config.nondeterministic === true
        ? { planted: { op: PLANTED_OP, prefixes: PLANTED_KEY_PREFIXES } }
        : {}),
    }),
    ...checkDivergence(record, {
      planted: config.nondeterministic === true,
      quiescent,
      members: finalMembers(run),
      // Faults are healed by the end of the workload; a membership change may end later.
      faultsEndAt:
        params.faults === 'none'
          ? 0
          : Math.max(run.workloadMs, ...record.memberships.map((m) => m.at)),
      diskWaitMs: Math.max(10, 2 * params.diskLatencyMs),
    }),
    // Invariants the replicas found broken on their finalized state (SimConfig.invariants).
    ...checkInvariantReports(record.invariantReports).slice(0, 10),
    // What the client sessions saw (clients 'sdk'; nothing of the model's).
    ...end.clients.check(quiescent),
    // Every op ran as one caller, everywhere and every time (tx.user).
    ...run.callers.check().slice(0, 10),
    // Leadership went where the operator placed it, and did not go back and forth.
    ...(end.leadership === null ? [] : end.leadership.check(finalMembers(run)).slice(0, 10)),
  ];
  if (!quiescent) {
    const waiting = record.invocations.filter((inv) => !inv.abandoned && !complete(inv));
    const clients = end.clients.unsettled();
    violations.unshift(
      `liveness: not quiescent ${Math.round(run.settledWithin)} ms after faults ended (${waiting.length} invocations waiting; tentative ${procs.map((x) => x.host.inspect().replica.stats().tentative).join('/')}; paxos ${JSON.stringify(procs.map((x) => x.host.inspect().paxos.status()))})${clients === '' ? '' : `; clients: ${clients}`}`,
    );
  }

  const sum = (f: (h: ReplicaHost) => number): number => procs.reduce((s, p) => s + f(p.host), 0);
  const committedSubmissions = new Map<string, number>();
  // Replica 0's books when every replica was lost for good (a planted bug can halt them all).
  const survivor = liveReplicas(record)[0] ?? 0;
  for (const id of record.commits[survivor]!.flat()) {
    const session = record.reqs.get(opKey(id))?.session;
    if (session === undefined) continue;
    const key = `${session.id}/${session.seq}`;
    committedSubmissions.set(key, (committedSubmissions.get(key) ?? 0) + 1);
  }
  const stats: SimStats = {
    liveness: livenessStats(record.invocations, liveness),
    checkpoints: counts.checkpoints,
    truncatedRecords: procs.reduce((t, p) => t + p.disk.truncated, 0),
    restartsFromCheckpoint: counts.restartsFromCheckpoint,
    resubmissions: counts.resubmissions,
    abandons: counts.abandons,
    abandoned: record.invocations.filter((i) => i.op === ABANDON_OP && abandonAnswer(i) === true)
      .length,
    duplicatesCommitted: [...committedSubmissions.values()].filter((c) => c > 1).length,
    ops: record.invocations.length,
    strongOps: record.invocations.filter((i) => i.strong).length,
    committed: record.commits[survivor]!.flat().length,
    executions: sum((h) => h.inspect().replica.metrics.executions),
    rollbacks: sum((h) => h.inspect().replica.metrics.rollbacks),
    aheadExecutions: sum((h) => h.inspect().replica.metrics.aheadExecutions),
    aheadConflicts: sum((h) => h.inspect().replica.metrics.aheadConflicts),
    mirrorExecutions: counts.mirrorExecutions,
    lackChecksPerOp,
    staleMirrorReads: counts.staleMirrorReads,
    reorderingCommits: sum((h) => h.inspect().replica.metrics.reorderingCommits),
    executionRatio:
      sum((h) => h.inspect().replica.metrics.executionsOfFinalized) /
      Math.max(
        1,
        sum((h) => h.inspect().replica.metrics.finalized),
      ),
    speculated: sum((h) => h.inspect().replica.metrics.speculated),
    speculatedCorrectly: sum((h) => h.inspect().replica.metrics.speculatedCorrectly),
    messages: cluster.network.sent,
    partitions: counts.partitions,
    crashes: counts.crashes,
    lostWrites: counts.lostWrites,
    lost: record.lost.length,
    wipes: counts.wipes,
    wipedHalts: counts.wipedHalts,
    powerLosses: counts.powerLosses,
    tornWrites: counts.tornWrites,
    corruptRecords: counts.corruptRecords,
    staleRecords: counts.staleRecords,
    damagedDisks: counts.damagedDisks,
    transfers: counts.transfers,
    transfersResumed: counts.transfersResumed,
    reconfigurations: counts.reconfigurations,
    added: counts.added,
    removed: counts.removed,
    elections: sum((h) => h.inspect().paxos.counters.elections),
    adopted: sum((h) => h.inspect().replica.metrics.adopted),
    stranded: Math.max(0, ...liveReplicas(record).map((r) => record.finals[r]!.stranded.length)),
    closedOrigins: Math.max(...procs.map((p) => p.host.inspect().replica.metrics.closedOrigins)),
    droppedByClose: Math.max(...procs.map((p) => p.host.inspect().replica.metrics.droppedByClose)),
    simulatedMs: run.now,
    catchUp: catchUpWork(run, cluster, end.catchUpFrom),
    ...(config.nondeterministic === true ? { divergence: divergenceStats(record) } : {}),
    ...(end.leadership === null ? {} : { leadership: end.leadership.stats() }),
  };
  const sessions = end.clients.stats();
  if (sessions !== null) stats.sessions = sessions;
  return {
    seed: config.seed,
    replicas: config.replicas,
    ok: violations.length === 0,
    violations,
    parameters: params,
    stats,
    committedOrder: record.commits[survivor]!.flat().map(formatOpId),
  };
}

/** The members in force at the end, as the first live replica knows them. */
function finalMembers(run: RunState): readonly number[] {
  const live = liveReplicas(run.record);
  const p = run.procs.find((x) => live.includes(x.id) && x.up) ?? run.procs[0]!;
  return p.host.status().membership.members;
}

/** Faults 'lag': what the lagging replica did from the heal until now (null if it restarted). */
function catchUpWork(
  run: RunState,
  cluster: SimCluster,
  from: CatchUpStart | null,
): CatchUpWork | null {
  if (from === null || run.procs[from.replica]!.host !== from.host) return null;
  const h = from.host;
  const ops = h.inspect().replica.stats().committed - from.committed;
  const executions = h.inspect().replica.metrics.executions - from.executions;
  const lackChecks = h.inspect().paxos.status().lackChecks - from.lackChecks;
  const messages = (cluster.received[from.replica] ?? 0) - from.messages;
  return {
    replica: from.replica,
    ops,
    executions,
    lackChecks,
    messages,
    perOp: (executions + lackChecks + messages) / Math.max(1, ops),
  };
}
