import type { App } from '@creek/app';
import type { SimConfig } from './config.js';
import { CallerSightings } from './callers.js';
import { EventQueue } from './event-queue.js';
import { LeadershipLog } from './leadership.js';
import type { SimParameters, SimPrngs } from './parameters.js';
import type { SimProcess } from './process.js';
import type { RunRecord } from './run-record.js';
import { traceEvent } from './trace.js';
import { SimUsers } from './users.js';

/** Simulated wall clock starts at a realistic epoch so HLC timestamps look like real ones. */
const EPOCH_MS = 1_700_000_000_000;

/** What the parts of a run count as it goes, for SimStats (sim/result.ts). */
export interface SimCounts {
  partitions: number;
  crashes: number;
  /** Disk writes that crashes lost, not yet durable. */
  lostWrites: number;
  resubmissions: number;
  abandons: number;
  checkpoints: number;
  restartsFromCheckpoint: number;
  transfers: number;
  transfersResumed: number;
  wipes: number;
  wipedHalts: number;
  /** Storage faults (SimConfig.storageFaults): what struck, and the disks found damaged. */
  powerLosses: number;
  tornWrites: number;
  corruptRecords: number;
  staleRecords: number;
  /** Replicas that found their disk damaged when they restarted, and rebuilt from their peers. */
  damagedDisks: number;
  /** Executions that read a mirror of the store, and their reads of a version it no longer had. */
  mirrorExecutions: number;
  staleMirrorReads: number;
  /** CAB's waiting casts found ready only by the periodic recheck, over every incarnation. */
  backstopHits: number;
  /** Per replica, CAB's checks of what casts lack, across its incarnations (PaxosStatus). */
  readonly lackChecks: number[];
  reconfigurations: number;
  added: number;
  removed: number;
}

/**
 * What the parts of one run share (sim/simulation.ts wires them): the configuration and the
 * parameters the seed drew, the simulated clock and its event queue, the random streams, the
 * processes, and the record the checkers read at the end. Each part keeps its own state besides;
 * this is the state that more than one of them reads or writes.
 */
export class RunState {
  /** Simulated ms since the run began: the time of the event running now. */
  now = 0;
  readonly events = new EventQueue<() => void>();
  /** Every process the run started, by id: the genesis replicas', then those added. */
  readonly procs: SimProcess[] = [];
  /** The genesis configuration's replica ids. */
  readonly ids: number[];
  readonly record: RunRecord;
  /** Clock skew of every replica: the genesis ones' drawn with the parameters, then those added. */
  readonly skewMs: number[];
  /** Who the clients' sessions are (their own stream: no other draw moves). */
  readonly users: SimUsers;
  /** Where each op's caller was seen: its client, the replicas' copies, every execution. */
  readonly callers = new CallerSightings();
  /** Elections, terms as leader and fault stretches, for the liveness checker. */
  readonly leadership = new LeadershipLog(this);
  readonly counts: SimCounts = {
    partitions: 0,
    crashes: 0,
    lostWrites: 0,
    resubmissions: 0,
    abandons: 0,
    checkpoints: 0,
    restartsFromCheckpoint: 0,
    transfers: 0,
    transfersResumed: 0,
    wipes: 0,
    wipedHalts: 0,
    powerLosses: 0,
    tornWrites: 0,
    corruptRecords: 0,
    staleRecords: 0,
    damagedDisks: 0,
    mirrorExecutions: 0,
    staleMirrorReads: 0,
    backstopHits: 0,
    lackChecks: [],
    reconfigurations: 0,
    added: 0,
    removed: 0,
  };

  /**
   * The time the run gave itself after the workload: settleMs, or more while its clients were
   * still being answered at that deadline (simulation.ts, DRAIN_LIMIT).
   */
  settledWithin: number;

  constructor(
    readonly config: SimConfig,
    readonly app: App,
    readonly params: SimParameters,
    readonly prngs: SimPrngs,
    /** Simulated time during which clients invoke ops. */
    readonly workloadMs: number,
    /** Simulated time allowed, after the workload and all faults end, to reach quiescence. */
    readonly settleMs: number,
  ) {
    this.settledWithin = settleMs;
    const n = config.replicas;
    this.ids = Array.from({ length: n }, (_, i) => i);
    this.skewMs = [...params.skewMs];
    this.users = new SimUsers(prngs.named('users'));
    this.record = {
      replicas: n,
      reqs: new Map(),
      commits: this.ids.map(() => []),
      invocations: [],
      splits: [],
      holds: [],
      executing: [],
      finals: [],
      lost: [],
      deadOrigins: [],
      removed: [],
      retired: [],
      memberships: [{ at: 0, members: this.ids }],
      ...(config.clients === 'sdk' ? { clientOps: [] } : {}),
      divergences: [],
      invariantReports: [],
      plantedCommittedAt: new Map(),
    };
  }

  /** Tells the trace (SimConfig.trace) what happens now. */
  trace(text: string): void {
    this.config.trace?.line(traceEvent(this.now, text));
  }

  /** Replica `r`'s wall clock now: the simulated time, from a realistic epoch, with its skew. */
  physical(r: number): number {
    return EPOCH_MS + this.now + this.skewMs[r]!;
  }
}
