import * as z from 'zod';

/**
 * What a replica says about itself on `GET /status` (behind the monitor or admin token), as Zod
 * schemas so that tools read it checked. The pure replica (its host) builds `HostStatus`, the same
 * in the simulator and in a real process; a real replica adds what only a process knows
 * (`ReplicaStatus`: its links, disk, memory, clients and viewers). The replica's Prometheus
 * metrics and the visualizer's status events are read from the same object.
 */

const count = z.number().int().nonnegative();
const replicaId = z.number().int().nonnegative();

/** Executions and what speculation got right, counted since the replica started. */
export const SpeculationCountsSchema = z.object({
  /** Ops final here (committed and executed for the last time). */
  finalized: count,
  /** Executions those ops took, re-executions included (the execution ratio's numerator). */
  executionsOfFinalized: count,
  /** Ops answered tentatively first, and those whose first answer was the final one. */
  speculated: count,
  speculatedCorrectly: count,
  /** Executions withdrawn because a reorder changed what they read. */
  rollbacks: count,
});
export type SpeculationCounts = z.infer<typeof SpeculationCountsSchema>;

/** The speculation counts of a larger object (HostStatus.metrics, say), and nothing else. */
export function speculationCountsOf(m: SpeculationCounts): SpeculationCounts {
  return {
    finalized: m.finalized,
    executionsOfFinalized: m.executionsOfFinalized,
    speculated: m.speculated,
    speculatedCorrectly: m.speculatedCorrectly,
    rollbacks: m.rollbacks,
  };
}

/**
 * Replicas compare digests of their finalized state at equal committed positions (a
 * nondeterministic op makes them differ): how many comparisons this replica made, and the
 * divergence it knows of, if any.
 */
export const DivergenceStatusSchema = z.object({
  /** Divergences seen since the replica started. */
  incidents: count,
  /** Peers' digests compared with its own, and the newest position compared. */
  comparisons: count,
  lastCompared: count,
  /** The divergence now, or null. */
  current: z
    .object({
      /** The first committed position whose state differs between replicas. */
      position: count,
      /** False: at or before `position` (the replicas no longer keep the positions before it). */
      exact: z.boolean(),
      /** The op at that position: the first whose effects differed (null: not known here). */
      op: z.string().nullable(),
      id: z.string().nullable(),
      /** The position where a comparison first disagreed. */
      detectedAt: count,
      /** Each member's digest at `position` (null: not known yet). */
      digests: z.record(z.string(), z.string().nullable()),
      /**
       * majority: a majority of the members holds this replica's state, and it keeps serving;
       * minority: a majority holds another; undecided: no state is known to be a majority's.
       */
      side: z.enum(['majority', 'minority', 'undecided']),
      /** False on the minority and undecided sides: it serves no stable answer. */
      servesStable: z.boolean(),
      /** What happened and what this replica does about it, in a sentence. */
      reason: z.string(),
    })
    .nullable(),
});
export type DivergenceStatus = z.infer<typeof DivergenceStatusSchema>;

/**
 * What a replica that cannot make progress by itself waits for, and from which peers: the
 * operator's answer to "why is it stuck" (docs/operations.md). Each kind:
 * - `peer-summaries`: a replica with no origin (a new or emptied data directory) waits for a
 *   gossip summary from every peer (one that is down may hold ops of its past);
 * - `paxos-rejoin`: a replica that lost its votes waits for every member's heartbeat, and then to
 *   learn the consensus instances they knew of, before it may promise or vote;
 * - `checkpoint`: it rebuilds itself from a peer's checkpoint (state transfer);
 * - `votes`: fewer than a majority of the members can vote (the others lost their votes and
 *   rejoin, or are cut off): nothing commits until enough of them are back;
 * - `promises`: a candidate for leader waits for a majority of the members to promise;
 * - `quorum`: it hears no majority of the members;
 * - `leader`: it hears a majority but knows no leader yet (an election is under way).
 */
export const WaitingSchema = z.object({
  for: z.enum([
    'peer-summaries',
    'paxos-rejoin',
    'checkpoint',
    'votes',
    'promises',
    'quorum',
    'leader',
  ]),
  /** The peers it waits for (those whose answer would let it go on). */
  peers: z.array(replicaId),
  /** Since when it waits for this, from these peers (ms, the replica's clock). */
  since: z.number(),
  /** What it waits for and why, and what an operator can do, in a few sentences. */
  reason: z.string(),
});
export type Waiting = z.infer<typeof WaitingSchema>;

/** The pure replica's own account of itself: the same wherever it runs (ReplicaHost.status). */
export const HostStatusSchema = z.object({
  id: replicaId,
  /** Its Paxos role, the leader it knows (null: none), and the ballot it leads or promised. */
  role: z.enum(['follower', 'candidate', 'leader']),
  leader: replicaId.nullable(),
  /**
   * False: this replica hears no majority (cut off, or deaf on inbound links); it will not
   * campaign, and as leader it stands down.
   */
  quorate: z.boolean(),
  ballot: count,
  /** The lengths of its committed and tentative lists, and its hybrid logical clock (µs). */
  committed: count,
  tentative: count,
  hlc: z.number(),
  /** A digest of its state: equal across replicas that hold the same state. */
  digest: z.string(),
  /** Nothing tentative, nothing to deliver, no strong op of its own waiting for consensus. */
  settled: z.boolean(),
  /**
   * It takes no client op yet: it has no op of its own on disk (a new or wiped data directory)
   * and still learns from its peers.
   */
  learning: z.boolean(),
  /** Why the replica stopped for good (it lost durable state, or was removed), or null. */
  halted: z.string().nullable(),
  /**
   * What it waits for while it cannot make progress by itself (WaitingSchema), or null. Absent
   * from replicas of an earlier version: read as null.
   */
  waiting: WaitingSchema.nullable().default(null),
  /** Digest comparisons with its peers, and the divergence it knows of (DivergenceStatusSchema). */
  divergence: DivergenceStatusSchema,
  /**
   * A membership change removed it: it takes no client op, and stops once the members no longer
   * need its vote.
   */
  leaving: z.boolean(),
  /**
   * Ops a peer holds that it lacks, and whether it holds speculation meanwhile (its reads and
   * first tentative answers wait until it has caught up).
   */
  catchUp: z.object({ behind: count, holding: z.boolean() }),
  /** The members in force here, the newest configuration's, and whether a change is on its way. */
  membership: z.object({
    members: z.array(replicaId),
    latest: z.array(replicaId),
    changing: z.boolean(),
  }),
  /** The origin its ops are numbered under, and its incarnation (null while it has none). */
  identity: z.object({ origin: count.nullable(), incarnation: count.nullable() }),
  /** State transfers: rebuilding now, installed here, attempts, rejected, chunks. */
  transfers: z.object({
    rebuilding: z.boolean(),
    installed: count,
    attempts: count,
    rejected: count,
    chunksReceived: count,
    chunksSent: count,
  }),
  /** The Creek paper's measures (§6), and the counts behind them. */
  metrics: SpeculationCountsSchema.extend({
    /** Executions of ordered ops, re-executions included. */
    executions: count,
    executionRatio: z.number(),
    accuracy: z.number(),
    reorderingCommits: count,
    /** Versions held by the multiversion store. */
    versions: count,
    /**
     * `speculated` and `speculatedCorrectly` per op name: which ops' tentative answers held, and
     * which were corrected by the final order (the first 256 names; later ones under `(other)`).
     */
    byOp: z
      .record(z.string(), z.object({ speculated: count, speculatedCorrectly: count }))
      .default({}),
  }),
  /** Concurrent execution (§4.4): executions started beside earlier ones, and those a conflict discarded. */
  execution: z.object({ ahead: count, aheadConflicts: count }),
  /** What the replica holds that would grow with the op count if nothing bounded it. */
  memory: z.object({
    finalized: count,
    keys: count,
    gossipHeld: count,
    paxosAccepted: count,
    paxosDecided: count,
    deliveryBacklog: count,
    checkpoints: count,
    /** Reqs gossip dropped since every replica has them, final. */
    pruned: count,
  }),
  /** Ops invoked here, by kind, and Paxos's counters. */
  invoked: z.object({ weak: count, strong: count, readOnly: count, rejected: count }),
  paxos: z.object({
    /** Instances decided without a gap, and those truncated behind a checkpoint. */
    decidedBelow: count,
    truncatedBelow: count,
    /** It still learns before it may promise or vote (a replica that lost its disk). */
    rejoining: z.boolean(),
    elections: count,
    instancesProposed: count,
    decided: count,
  }),
});
export type HostStatus = z.infer<typeof HostStatusSchema>;

/** Per kind, connections that broke the protocol or an edge limit. */
const ViolationsSchema = z.record(z.string(), count);

/** A real replica process: its host's status, and what only the process knows. */
export const ReplicaStatusSchema = HostStatusSchema.extend({
  /** Its outbound link to each peer. */
  peers: z.record(z.string(), z.enum(['connecting', 'connected', 'down'])),
  /**
   * Versions of the peer protocol (peer-versions.ts): the range this replica speaks, the cluster
   * version (the newest every member speaks, as far as it has heard), per peer the version its
   * outbound link runs at (null while not connected) and the range that peer told it last (null
   * before it did), and links refused because the two ends speak no common version.
   */
  protocol: z.object({
    oldest: count,
    newest: count,
    cluster: count,
    links: z.record(
      z.string(),
      z.object({
        version: count.nullable(),
        speaks: z.object({ oldest: count, newest: count }).nullable(),
      }),
    ),
    refused: count,
  }),
  /** Paused by an operator (`/admin/pause`): it ignores its peers and ticks. */
  paused: z.boolean(),
  uptimeMs: count,
  /** False under `--speculation off`. */
  speculative: z.boolean(),
  /** CPU time this process used so far, worker threads included (µs, user + system). */
  cpuMicros: count,
  /** Resident set size of this process, in bytes. */
  rss: count,
  execution: HostStatusSchema.shape.execution.extend({
    /** Execution worker threads, the jobs they ran, and their reads of a version already replaced. */
    workers: count,
    onWorkers: count,
    staleMirrorReads: count,
    /**
     * How the workers were chosen (`--workers N` or `auto`), whether ops go to them now, why, and
     * the mean µs the main thread spends handing a job over against the job's execution on a
     * worker (server exec/worker-choice.ts). Absent without workers.
     */
    workerChoice: z
      .object({
        mode: z.enum(['auto', 'fixed']),
        workers: count,
        active: z.boolean(),
        reason: z.string(),
        measuredJobs: count,
        handoffMicros: z.number().nonnegative().nullable(),
        jobMicros: z.number().nonnegative().nullable(),
      })
      .optional(),
  }),
  memory: HostStatusSchema.shape.memory.extend({ heapUsed: count }),
  /**
   * Its data directory: records since the checkpoint, the checkpoint's bytes, file bytes, and
   * transactions committed since the replica started. `repaired`, when this process found its
   * data directory damaged as it started (a row failed its checksum): when, what, and where the
   * damaged database was set aside; the replica then rebuilt itself from its peers.
   */
  storage: z.object({
    records: count,
    checkpointBytes: count,
    bytes: count,
    commits: count,
    repaired: z.object({ at: z.string(), reason: z.string(), keptAs: z.string() }).optional(),
  }),
  /** Peer traffic. */
  network: z.object({
    sent: count,
    received: count,
    dropped: count,
    rejected: count,
    bytesSent: count,
    bytesReceived: count,
    /** The largest frame sent to a peer so far (UTF-16 code units of its text). */
    largestFrameSent: count,
    /** Messages larger than a frame may be, counted and not sent. */
    oversized: count,
    violations: ViolationsSchema,
  }),
  /** Client connections and invocations. */
  clients: z.object({
    connections: count,
    invokes: count,
    retries: count,
    rejected: count,
    badFrames: count,
    violations: ViolationsSchema,
  }),
  /** Viewers of /events now and in all, events built for them, and events they missed. */
  events: z.object({
    watching: count,
    viewers: count,
    events: count,
    dropped: count,
    violations: ViolationsSchema,
  }),
  /**
   * Whether it checks the app's invariants on its finalized state (`--check-invariants`), and how
   * many times one was broken since the process started (each is logged as an error). Absent from
   * replicas of an earlier version.
   */
  invariants: z.object({ checked: z.boolean(), broken: count }).optional(),
});
export type ReplicaStatus = z.infer<typeof ReplicaStatusSchema>;
