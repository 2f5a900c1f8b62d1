import { ABANDON_OP, canonicalJson, type App, type JsonValue } from '@creek/app';
import { formatOpId, opKey, slotOf, type OpId } from '../core/op-id.js';
import type { SpeculationCounts } from '../core/metrics.js';
import type { ReplicaOptions } from '../core/replica.js';
import type {
  ExecutionResult,
  Outcome,
  Req,
  Response,
  ResponseLevel,
  SessionStamp,
} from '../core/types.js';
import { LiveQueries } from '../host/live-queries.js';
import { InlineExecutor } from '../exec/inline-executor.js';
import type { Executor } from '../exec/executor.js';
import { MirrorFeed } from '../exec/mirror-feed.js';
import type { ReadTrace } from '../exec/mirror-messages.js';
import { MirrorStore } from '../exec/mirror-store.js';
import type { RecordingSnapshot } from '../core/snapshot.js';
import {
  CATCH_UP_STALL_MS,
  lastCheckpoint,
  ReplicaHost,
  type HostEvent,
  type HostOptions,
  type HostRecord,
  type PeerMessage,
} from '../host/replica-host.js';
import type { CatchUpWork } from './catch-up.js';
import {
  CONFIG_DELAY,
  type ConfigEntry,
  type MembershipChange,
  type ReconfigOutcome,
} from '../cab/configuration.js';
import { drawReconfiguration, type ReconfigScenario } from './reconfiguration.js';
import { statusLine, traceEvent, type SimTrace } from './trace.js';
import { checkRun } from './checkers.js';
import { SimDisk } from './disk.js';
import { EventQueue } from './event-queue.js';
import { SimNetwork, type NetworkConfig } from './network.js';
import { Prng } from './prng.js';
import { ReferenceInterpreter } from './reference-interpreter.js';
import { abandonAnswer, liveReplicas, type Invocation, type RunRecord } from './run-record.js';
import { ClientSessions } from './client-sessions.js';
import {
  generateOp,
  LINEARIZABLE_KEYS,
  LINEARIZABLE_QUEUE,
  ONCE_PREFIX,
  simApp,
  type GeneratedOp,
  type WorkloadShape,
} from './workload.js';

export const FAULT_MODES = [
  'none',
  'partition',
  'crash',
  'all',
  'reconfig',
  'lag',
  'lag-cut',
] as const;
export type FaultMode = (typeof FAULT_MODES)[number];

export interface SimConfig {
  readonly seed: number;
  readonly replicas: number;
  /**
   * none: a benign network (delays and reordering only); partition / crash: those faults too; all:
   * everything, and in half the runs a membership change (sim/reconfiguration.ts); reconfig: all,
   * always with a membership change; lag: one replica cut off from the others for most of the workload, then healed, so
   * that it catches up on nearly everything at once (`SimStats.catchUp`); lag-cut: the same, cut
   * off again for 200 ms 20 ms into its catch-up.
   */
  readonly faults?: FaultMode;
  /** Simulated time during which clients invoke ops (default 1500 ms). */
  readonly workloadMs?: number;
  /** Simulated time allowed, after the workload and all faults end, to reach quiescence. */
  readonly settleMs?: number;
  /**
   * A deliberately broken driver that sends messages (Paxos promises and accepts among them) before
   * the writes they depend on are durable. Exists so a test can show the checkers catch it.
   */
  readonly unsafeSendBeforeDurable?: boolean;
  /**
   * Replicas never hold speculation while they catch up (HostOptions.catchUpHold Infinity): the
   * tentative tail re-executes with every batch that arrives. Exists so a test can show that
   * `SimStats.catchUp` sees the work grow with the lag.
   */
  readonly unsafeSpeculateWhileBehind?: boolean;
  /**
   * HostOptions.catchUpHold: a test of how catch-up work scales sets it low, so that lags it can
   * afford to simulate are many times the threshold.
   */
  readonly catchUpHold?: number;
  /**
   * Replicas go on holding speculation when their catch-up stalls (HostOptions.catchUpStallMs
   * Infinity): cut off into a minority mid-catch-up, they answer nothing. Exists so a test can show
   * the minority-partition checker bounds the hold.
   */
  readonly unsafeHoldWhileCutOff?: boolean;
  /**
   * Replicas install a state transfer as soon as its last chunk is in, missing chunks and digest
   * unchecked (HostOptions.unsafeInstallIncomplete). Exists so a test can show the checkers catch
   * a replica rebuilt from part of a checkpoint.
   */
  readonly unsafeInstallIncomplete?: boolean;
  /**
   * Every quorum is a majority of the genesis configuration's size, whatever the membership
   * changes made of it (HostOptions.unsafeGenesisQuorum). Exists so a test can show the checkers
   * catch a quorum computed from the wrong configuration.
   */
  readonly unsafeGenesisQuorum?: boolean;
  /**
   * The leader answers read indexes without confirming that no higher ballot was promised
   * (HostOptions.unsafeReadWithoutQuorum). Exists so a test can show the checkers catch a strong
   * read answered from a stale leader.
   */
  readonly unsafeReadWithoutQuorum?: boolean;
  /**
   * Every `everyMs` of simulated time, `onFrame` gets what each replica looks like (SimFrame): the
   * visualizer replays a run from these. At the end, `onOps` (if given) gets every op's life over
   * the run, for charts of its latencies. Observing changes nothing in the run.
   */
  /**
   * Live queries (the node layer's LiveQueries, driven here as the runtime drives them): each
   * replica watches `kv.get` of the first two workload keys and `queue.size` of the linearizable
   * queue from the start (and again after each restart, as a client re-watches), re-running them
   * when the replica reports changed keys after each event. At the end of a quiescent run, every
   * watch's last tentative and stable results must equal the read on the final state. Off by
   * default: its reads are executions, so a run with them is another run.
   */
  readonly liveQueries?: boolean;
  /**
   * The most a disk write takes to become durable (each write draws its time up to this), in place
   * of the seed's draw of 0.1, 1 or 5 ms (the draw is made all the same, so nothing else moves). A
   * test sets it long to stand for the runtime's held writes: a turn that sends and answers
   * nothing commits its writes with the next turn that does, or 10 ms later (ReplicaServer).
   */
  readonly diskLatencyMs?: number;
  /** The run told as it goes (sim/trace.ts); observing changes nothing in the run. */
  readonly trace?: SimTrace;
  readonly frames?: {
    readonly everyMs: number;
    onFrame(frame: SimFrame): void;
    onOps?(ops: readonly FrameOpLife[]): void;
  };
}

/** A replica at one moment of a simulated run (SimConfig.frames). */
export interface SimReplicaFrame {
  readonly id: number;
  readonly up: boolean;
  readonly role: 'follower' | 'candidate' | 'leader';
  readonly committed: number;
  readonly tentative: number;
  /** Its last committed ops (at most FRAME_LIST), oldest first. */
  readonly committedTail: readonly FrameOp[];
  /** The first ops of its tentative list (at most FRAME_LIST), in its speculative order. */
  readonly tentativeHead: readonly FrameOp[];
  /** It holds speculation while it catches up. */
  readonly holding: boolean;
  /**
   * Its counters since it (last) started: ops finalized and the executions they took, ops answered
   * tentatively and those whose tentative answer was the stable one, rollbacks.
   */
  readonly counts: SpeculationCounts;
}

/** A message on its way from one replica to another (SimFrame.messages). */
export interface FrameMessage {
  readonly from: number;
  readonly to: number;
  /** Its layer and kind: `gossip push`, `paxos accept`, … */
  readonly kind: string;
  readonly sentAt: number;
  readonly arriveAt: number;
}

/** An op's life as its client saw it up to a frame (SimFrame.recentOps); times in simulated ms. */
export interface FrameOpLife {
  /** `r<replica>#<eventNo>` once its replica gave it one. */
  readonly id: string | null;
  readonly replica: number;
  readonly op: string;
  readonly strong: boolean;
  readonly invokedAt: number;
  /** Its first tentative and its stable answer, or its failure (and why), once they came. */
  readonly tentativeAt: number | null;
  readonly stableAt: number | null;
  readonly failedAt: number | null;
  readonly failure: string | null;
}

/** An op in a frame's list: its id as `r<replica>#<eventNo>`, and whether it is strong. */
export interface FrameOp {
  readonly id: string;
  readonly strong: boolean;
}

/** A simulated run at one moment (SimConfig.frames). */
export interface SimFrame {
  /** Simulated ms since the run began. */
  readonly at: number;
  readonly replicas: readonly SimReplicaFrame[];
  /** The groups of a partition in force, or null. */
  readonly partition: readonly (readonly number[])[] | null;
  /** Ops invoked so far, and how many of those were strong. */
  readonly invoked: number;
  readonly strongInvoked: number;
  /** Messages on their way between replicas (the last FRAME_MESSAGES sent), and how many in all. */
  readonly messages: readonly FrameMessage[];
  readonly messagesInFlight: number;
  /** The last FRAME_OPS ops invoked, oldest first. */
  readonly recentOps: readonly FrameOpLife[];
}

/** How many ops of each list a frame shows. */
export const FRAME_LIST = 8;
/** How many messages in flight, and how many recent ops, a frame shows. */
export const FRAME_MESSAGES = 64;
export const FRAME_OPS = 16;

/** The parameters a seed draws, printed when a run fails so the failure can be understood. */
export interface SimParameters {
  readonly faults: FaultMode;
  readonly network: NetworkConfig;
  readonly workload: WorkloadShape;
  readonly opsPerSecondPerReplica: number;
  readonly skewMs: number[];
  readonly noopIntervalMs: number;
  readonly diskLatencyMs: number;
  /** How long another origin's strong op waits before a replica casts it on its behalf. */
  readonly adoptAfterMs: number;
  /** Finalized ops between two checkpoints, after which a replica's disk drops older records. */
  readonly checkpointEvery: number;
  /** The operator's membership changes in this run (sim/reconfiguration.ts), or null. */
  readonly reconfiguration: ReconfigScenario | null;
  /**
   * Concurrent execution (§4.4): how many executions a replica runs at once, and the longest an
   * execution takes. Each runs on the snapshot of its start and finishes after a seeded delay, so
   * executions complete out of order and conflicts, discarded results and cascades happen.
   */
  readonly execution: {
    readonly slots: number;
    readonly maxMs: number;
    /**
     * First executions read a mirror of the store fed with its changes (exec/mirror-store.ts),
     * as the worker-thread executor's workers do, instead of the store itself; re-executions read
     * the store.
     */
    readonly mirror: boolean;
    /**
     * False in one run of eight: no replica speculates (ReplicaOptions.speculative), the SMR
     * baseline of `bench:tpcc`; every op executes once committed and every response is stable.
     */
    readonly speculative: boolean;
    /**
     * Null, or a replica runs executions only this long after an input (ReplicaOptions.
     * deferExecution), once for every input in between: as the runtime does once per event-loop
     * turn, so reorders land in batches.
     */
    readonly deferTurnMs: number | null;
  };
}

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
  simulatedMs: number;
  /** With faults 'lag': what the lagging replica did from the heal until the run ended. */
  catchUp: CatchUpWork | null;
}

/** One simulated replica process: the host and the disk that outlives it. */
interface SimProcess {
  readonly id: number;
  up: boolean;
  /** A 'lose' fault waits for this replica's next strong invocation, then crashes it for good. */
  loseAfterStrong: boolean;
  incarnation: number;
  /**
   * How many times its disk was lost ('wipe'). Messages carry the count their sender had: those of
   * a wiped process still in flight are dropped, as its TCP connections died with it (a restarted
   * process speaks on new connections, after whatever the old ones had delivered).
   */
  wipes: number;
  /** Its deferred executions are scheduled (SimParameters.execution.deferTurnMs). */
  runScheduled: boolean;
  /**
   * After its disk was lost: crashes again this long after its restart, while it may still be
   * learning from its peers, and is down for `downMs` (null: it does not).
   */
  crashAfterRestart: { readonly afterMs: number; readonly downMs: number } | null;
  /** Keys of its ops from lost disks that other replicas held: no crash of its own loses them. */
  readonly opsOfLostDisks: Set<string>;
  /**
   * A replica added to the running cluster: the members it asks for a checkpoint when its disk is
   * empty (HostOptions.join). Null for a member of the genesis configuration.
   */
  readonly seeds: readonly number[] | null;
  host: ReplicaHost;
  disk: SimDisk<HostRecord>;
  /** Its live queries (SimConfig.liveQueries), made anew with each host; null when off. */
  live: LiveQueries<number> | null;
  /** It was removed and takes no client op (ReplicaHost.leaving): its clients have left it. */
  clientsLeft: boolean;
}

/**
 * Execution slots per replica and the longest execution (ms): always concurrent (§4.4). Every
 * replica executes every op, up to twice over under contention, one at a time at the frontier: at
 * the highest load drawn (5 replicas × 150 ops/s) executions must average well under 0.7 ms, or
 * the replica falls behind for good and a minority partition's ops wait past its end (seed 396
 * with 5 replicas did, at up to 2 ms). A longest execution of at most 0.5 ms keeps it ahead.
 */
function drawExecution(prng: Prng): SimParameters['execution'] {
  return {
    slots: prng.pick([2, 3, 4, 8]),
    maxMs: prng.pick([0.05, 0.2, 0.5]),
    mirror: prng.pick([false, true]),
    speculative: !prng.chance(1 / 8),
    deferTurnMs: prng.pick([null, 0, 0.1, 1]),
  };
}

/** Simulated wall clock starts at a realistic epoch so HLC timestamps look like real ones. */
const EPOCH_MS = 1_700_000_000_000;
const TICK_MS = 5;
/** Tags of live queries' reads start here, apart from the workload's. */
const WATCH_TAG_BASE = 1_000_000_000;
/** The live queries each replica runs (SimConfig.liveQueries): a key each, and a queue's size. */
const SIM_WATCHES: readonly (readonly [string, string, JsonValue])[] = [
  ['k0', 'kv.get', { key: 'k/0' }],
  ['k1', 'kv.get', { key: 'k/1' }],
  ['q', 'queue.size', { queue: LINEARIZABLE_QUEUE }],
];
/** Of the clients that would resubmit an op after their replica crashed, the share that abandon it. */
const ABANDON_SHARE = 0.25;

/**
 * One deterministic run: replicas driven by simulated time, a lossy reordering network, clock skew,
 * partitions (symmetric, leader-isolating, one-way, and a replica that hears nobody) and crashes
 * that heal, simulated disks, and clients mixing weak and strong, read-only and updating, single-
 * and multi-key ops over a hot key set. Everything random comes from `seed`, so a run replays
 * exactly.
 */
export function runSimulation(config: SimConfig, app: App = simApp): SimResult {
  const prng = new Prng(config.seed);
  const n = config.replicas;
  if (!Number.isInteger(n) || n < 1) throw new Error('replicas must be a positive integer');
  const faults = config.faults ?? 'all';
  const workloadMs = config.workloadMs ?? 1500;
  const settleMs = config.settleMs ?? 20_000;
  const frames = config.frames;
  if (frames !== undefined && !(frames.everyMs > 0))
    throw new Error(`frames.everyMs must be a positive number of ms, not ${frames.everyMs}`);
  const drawn = drawParameters(prng.fork(), n, faults);
  const netPrng = prng.fork();
  const clientPrng = prng.fork();
  const faultPrng = prng.fork();
  const diskPrng = prng.fork();
  // Drawn last, so that adding sessions left every other stream of a seed as it was.
  const retryPrng = prng.fork();
  // Drawn after every other stream, so that checkpoints left each seed's other draws as they were.
  const params: SimParameters & { reconfiguration: ReconfigScenario | null } = {
    ...drawn,
    ...(config.diskLatencyMs === undefined ? {} : { diskLatencyMs: config.diskLatencyMs }),
    checkpointEvery: prng.fork().pick(CHECKPOINT_EVERY),
    execution: drawExecution(prng.fork()),
    reconfiguration: null,
  };
  // Drawn last too: how long each execution takes.
  const execPrng = prng.fork();
  /** Which clients abandon an op rather than resubmit it: forked last, so no other draw moves. */
  const abandonPrng = prng.fork();
  /** The operator's membership changes: forked last, so runs without one keep every draw. */
  const reconfigPrng = prng.fork();
  const scenario =
    faults === 'all' || faults === 'reconfig'
      ? drawReconfiguration(reconfigPrng, n, workloadMs, faults === 'reconfig')
      : null;
  params.reconfiguration = scenario;
  /** Clock skew of the replicas added during the run (the genesis ones drew theirs above). */
  const skewMs = [...params.skewMs];
  const sessions = new ClientSessions();
  const ids = Array.from({ length: n }, (_, i) => i);

  const events = new EventQueue<() => void>();
  let now = 0;
  /** Tells the trace (SimConfig.trace) what happens now. */
  const trace = (text: string): void => config.trace?.line(traceEvent(now, text));
  const procs: SimProcess[] = [];
  /** Peer messages each replica handled. */
  const received: number[] = [];
  /** Faults 'lag': the lagging replica's counts when it was healed (its host is not restarted). */
  let catchUpFrom: {
    readonly replica: number;
    readonly host: ReplicaHost;
    readonly committed: number;
    readonly executions: number;
    readonly lackChecks: number;
    readonly messages: number;
  } | null = null;
  const network = new SimNetwork<{ readonly msg: PeerMessage; readonly wipes: number }>(
    netPrng,
    params.network,
    (at, run) => events.push(at, run),
    (t) => {
      // A replica added to the configuration may not run yet: nobody receives its messages.
      const p = procs[t.to];
      if (p === undefined || !p.up || procs[t.from]!.wipes !== t.msg.wipes) return;
      received[t.to] = (received[t.to] ?? 0) + 1;
      p.host.receive(t.from, t.msg.msg);
    },
    (node) => node,
    (node) => procs[node]?.up === true,
  );
  if (config.frames !== undefined) network.trackFlights();
  const inline = new InlineExecutor(app);
  const physical = (r: number): number => EPOCH_MS + now + skewMs[r]!;
  const replicaOptions: Omit<ReplicaOptions, 'id'> = {
    app,
    noopIntervalMs: params.noopIntervalMs,
    adoptAfterMs: params.adoptAfterMs,
    traceOrder: true,
    executionSlots: params.execution.slots,
    speculative: params.execution.speculative,
    deferExecution: params.execution.deferTurnMs !== null,
  };
  const hostOptions = (
    id: number,
    executor: Executor = inline,
    storeObserver?: MirrorFeed,
    seeds: readonly number[] | null = procs[id]?.seeds ?? null,
  ): HostOptions => ({
    id,
    // A replica added during the run knows whom to ask, not the genesis configuration.
    ...(seeds === null ? { replicas: ids } : { replicas: seeds, join: true }),
    ...(config.unsafeGenesisQuorum === true ? { unsafeGenesisQuorum: true } : {}),
    ...(config.unsafeReadWithoutQuorum === true ? { unsafeReadWithoutQuorum: true } : {}),
    replica: storeObserver === undefined ? replicaOptions : { ...replicaOptions, storeObserver },
    executor,
    checkpointEvery: params.checkpointEvery,
    ...(config.unsafeSpeculateWhileBehind === true
      ? { catchUpHold: Number.POSITIVE_INFINITY }
      : config.catchUpHold === undefined
        ? {}
        : { catchUpHold: config.catchUpHold }),
    ...(config.unsafeHoldWhileCutOff === true ? { catchUpStallMs: Number.POSITIVE_INFINITY } : {}),
    // Small chunks, so that the simulated states travel in several, which the network may lose,
    // duplicate and reorder (the default fills a chunk with 300,000 characters).
    transferChunkChars: SIM_TRANSFER_CHUNK_CHARS,
    ...(config.unsafeInstallIncomplete === true ? { unsafeInstallIncomplete: true } : {}),
  });

  /** Options of a live host of `p`: its executor, and the mirror's feed when seeds use one. */
  const liveHostOptions = (p: SimProcess): HostOptions => {
    if (!params.execution.mirror) return hostOptions(p.id, concurrentExecutor(p, null));
    const feed = new MirrorFeed(1);
    return hostOptions(p.id, concurrentExecutor(p, feed), feed);
  };

  /**
   * The executor of one incarnation of a process: it runs each job at once (so the job reads the
   * snapshot of its start) and hands the result to the host after a seeded delay, as a worker
   * would; results of an incarnation that crashed are dropped with it.
   */
  let mirrorExecutions = 0;
  let staleMirrorReads = 0;
  function concurrentExecutor(p: SimProcess, feed: MirrorFeed | null): Executor {
    const incarnation = p.incarnation;
    const mirror = feed === null ? null : new MirrorStore();
    return {
      execute(job) {
        let result: ExecutionResult;
        let traces: readonly ReadTrace[] = [];
        if (feed !== null && mirror !== null && job.rank !== undefined && job.retry !== true) {
          // As a worker: the store's changes so far, then the job on the mirror.
          mirror.apply(feed.take(0));
          mirrorExecutions++;
          const snapshot = mirror.reader(job.rank);
          result = inline.execute({ ...job, snapshot });
          traces = snapshot.reads;
        } else result = inline.execute(job);
        events.push(now + execPrng.float(0, params.execution.maxMs), () => {
          if (!p.up || p.incarnation !== incarnation) return;
          // What it read, resolved when the result arrives, as the worker pool does.
          const reads = (job.snapshot as RecordingSnapshot).reads;
          for (const t of traces) {
            const read = feed!.resolve(t);
            if (read.stale === true) staleMirrorReads++;
            reads.push(read);
          }
          p.host.executed(result);
        });
        return undefined;
      },
    };
  }

  const record: RunRecord = {
    replicas: n,
    reqs: new Map(),
    commits: ids.map(() => []),
    invocations: [],
    splits: [],
    holds: [],
    finals: [],
    lost: [],
    deadOrigins: [],
    retired: [],
    memberships: [{ at: 0, members: ids }],
  };
  const byTag = new Map<number, Invocation>();
  const openHold: (RunRecord['holds'][number] | undefined)[] = [];
  let nextTag = 1;
  let partitions = 0;
  let crashes = 0;
  let lostWrites = 0;
  let resubmissions = 0;
  let abandons = 0;
  let checkpoints = 0;
  let restartsFromCheckpoint = 0;

  /**
   * Replicas that stopped for good (HostEffects.halt): every one is a violation. A crash loses
   * only writes that were not durable yet, and nothing leaves a replica before its writes are, so
   * a replica never finds its own ops at a peer that it lacks; and one whose disk was lost
   * ('wipe') has no origin until it has heard every peer, then takes a new one, and rebuilds
   * itself from a peer's checkpoint (state transfer) when its peers compacted what it lacks.
   */
  const halts: string[] = [];
  /** A transfer installed a committed position that no replica ever reached. */
  const transferViolations: string[] = [];
  let transfers = 0;
  let transfersResumed = 0;
  /** Op ids written for two different ops: a replica that lost its disk numbered ops anew. */
  const reused: string[] = [];
  let wipes = 0;
  let wipedHalts = 0;

  /** The driver side of a host: disk writes, messages and responses, in the order the host made them. */
  function effects(p: SimProcess) {
    return {
      halt(reason: string): void {
        halts.push(`halt: at ${now.toFixed(1)} ms: replica ${p.id}: ${reason}`);
        trace(`replica ${p.id} halts: ${reason}`);
        if (p.wipes > 0) wipedHalts++;
        // Taken down by its operator, as `creek start` exits: lost for good from here on.
        events.push(now, () => {
          loseForGood(p);
        });
      },
      observe(e: HostEvent): void {
        if (e.kind === 'removed') {
          // It stops, as `creek start` exits: gone for good, its origin with it.
          events.push(now, () => {
            trace(`replica ${p.id} is told it is no longer needed: it stops`);
            if (p.clientsLeft && p.up) {
              // Departed already (`depart`): it only goes down now.
              removedCount++;
              crash(p);
            } else if (!record.lost.includes(p.id)) {
              removedCount++;
              loseForGood(p);
            }
          });
          return;
        }
        if (e.kind !== 'transferred') return;
        // Its clients watch again once it takes ops (a rebuilding replica takes none, so in the
        // runtime they could not watch it meanwhile): the state was replaced wholesale.
        forgetWatches(p);
        // Its committed list is now a peer's, up to the checkpoint's position: the checkers
        // compare what it commits from here on with the others' lists.
        transfers++;
        record.commits[p.id] = transferredPrefix(e.committed, p.id);
      },
      persist(rec: HostRecord): void {
        p.disk.write(now, diskPrng.float(0, params.diskLatencyMs), rec, rec.layer === 'checkpoint');
        if (rec.layer === 'checkpoint') checkpoints++;
        if (rec.layer !== 'core') return;
        if (rec.record.kind === 'commit') {
          record.commits[p.id]!.push([...rec.record.ids]);
          return;
        }
        const req = rec.record.req;
        const before = record.reqs.get(opKey(req.id));
        if (before !== undefined && (before.ts !== req.ts || before.op !== req.op))
          reused.push(
            `op id reused: at ${now.toFixed(1)} ms replica ${p.id} wrote ${formatOpId(req.id)} as ${req.op} at ${req.ts}, which is ${before.op} at ${before.ts} elsewhere`,
          );
        record.reqs.set(opKey(req.id), req);
      },
      send(to: number, msg: PeerMessage): void {
        afterDurable(p, () => network.send(now, p.id, to, { msg, wipes: p.wipes }, false));
      },
      respond(o: Response): void {
        if (o.tag >= WATCH_TAG_BASE) {
          // As the runtime does: handled after the host's turn, not inside it.
          const live = p.live;
          afterDurable(p, () => events.push(now, () => void live?.respond(o)));
          return;
        }
        const inv = byTag.get(o.tag);
        if (inv === undefined) throw new Error(`response for unknown tag ${o.tag}`);
        // Its client left this replica (removed) and listens no more.
        if (p.clientsLeft && inv.abandoned && inv.replica === p.id) return;
        afterDurable(p, () => {
          // A stable response is the final answer and proof of commit; an op that is never
          // ordered (a weak read) is done at its answer.
          if (inv.session !== undefined && (o.level === 'stable' || o.id === null)) {
            sessions.acknowledge(inv.session);
            // An abandon's stable answer settles the op it abandoned, whichever way it went.
            if (inv.op === ABANDON_OP && o.outcome.ok)
              sessions.acknowledge({ ...inv.session, seq: (inv.args as { seq: number }).seq });
          }
          inv.id ??= o.id;
          inv.responses.push({
            at: now,
            level: o.level,
            outcome: o.outcome,
            ...(o.trace === undefined ? {} : { trace: o.trace }),
            ...(o.position === undefined ? {} : { position: o.position }),
          });
        });
      },
    };
  }

  /**
   * The first `count` committed ops, in their commit groups, from any replica's list that is that
   * long (the lists are prefixes of one another: checkAgreement). None: a violation.
   */
  function transferredPrefix(count: number, to: number): OpId[][] {
    const lists = [
      ...record.commits.filter((_, i) => i !== to),
      ...record.retired.map((r) => r.commits),
    ];
    const from = lists.find((l) => l.reduce((n, g) => n + g.length, 0) >= count);
    if (from === undefined) {
      transferViolations.push(
        `transfer: at ${now.toFixed(1)} ms replica ${to} installed a checkpoint of ${count} committed ops, which no replica committed`,
      );
      return [];
    }
    return commitPrefix(from, count, to);
  }

  /** What each replica's live queries last pushed, by watch id and level (SimConfig.liveQueries). */
  const watched: Map<string, { tentative?: Outcome; stable?: Outcome }>[] = [];
  let nextWatchTag = WATCH_TAG_BASE;

  /** A new replica process, with its host (`seeds`: whom it asks, for one added during the run). */
  function spawn(id: number, seeds: readonly number[] | null): SimProcess {
    const p: SimProcess = {
      id,
      up: true,
      loseAfterStrong: false,
      incarnation: 0,
      wipes: 0,
      runScheduled: false,
      crashAfterRestart: null,
      opsOfLostDisks: new Set(),
      seeds,
      host: undefined as unknown as ReplicaHost,
      disk: new SimDisk(),
      live: null,
      clientsLeft: false,
    };
    procs.push(p);
    p.host = new ReplicaHost(liveHostOptions(p), effects(p));
    // A genesis replica's clients watch from the start; a new member's once it takes ops.
    if (seeds === null) watchOn(p);
    return p;
  }
  for (const id of ids) spawn(id, null);

  /**
   * Live queries at the end of a quiescent run: each replica's last tentative and last stable
   * result of every watch equal the read on its final state (what a client watching would show).
   */
  function checkLiveQueries(): string[] {
    const out: string[] = [];
    for (const r of liveReplicas(record)) {
      if (procs[r]!.live === null) continue; // never watched since it took ops
      const state = JSON.parse(record.finals[r]!.digest) as Record<string, JsonValue>;
      const num = (k: string): number => (typeof state[k] === 'number' ? (state[k] as number) : 0);
      for (const [watchId, op, args] of SIM_WATCHES) {
        const a = args as { key?: string; queue?: string };
        const expected =
          op === 'kv.get'
            ? (state[a.key!] ?? null)
            : num(`~queue/${a.queue!}/tail`) - num(`~queue/${a.queue!}/head`);
        const last = watched[r]?.get(watchId);
        for (const level of ['tentative', 'stable'] as const) {
          const got = last?.[level];
          if (got === undefined || !got.ok || canonicalJson(got.value) !== canonicalJson(expected))
            out.push(
              `live query: replica ${r}'s ${op} ${JSON.stringify(args)} last pushed ${got === undefined ? 'nothing' : JSON.stringify(got)} at ${level}, but reads ${JSON.stringify(expected)} on the final state`,
            );
        }
      }
    }
    return out;
  }

  /**
   * A stable result must be the read on the committed state it names: the first `position` ops of
   * the replica's committed order, replayed by the reference interpreter (per replica, forward as
   * positions grow, anew when one goes back, as after a restart).
   */
  const replays: { interp: ReferenceInterpreter; applied: number }[] = [];
  const liveViolations: string[] = [];
  function checkStablePush(p: SimProcess, watchId: string, got: Outcome, position: number): void {
    const order = record.commits[p.id]!.flat();
    if (order.length < position) return; // its commit records are not all written yet
    let r = replays[p.id];
    if (r === undefined || r.applied > position) {
      r = { interp: new ReferenceInterpreter(app), applied: 0 };
      replays[p.id] = r;
    }
    for (; r.applied < position; r.applied++) {
      const id = order[r.applied]!;
      const req = record.reqs.get(opKey(id));
      if (req === undefined) return; // its Req went with a lost disk: nothing to replay it from
      r.interp.apply({
        op: req.op,
        args: req.args,
        ts: req.ts,
        id: req.id,
        ...(req.session === undefined ? {} : { session: req.session }),
      });
    }
    const [, op, args] = SIM_WATCHES.find(([w]) => w === watchId)!;
    const expected = r.interp.apply({ op, args, ts: 0, id: null }, true);
    if (
      canonicalJson(expected as unknown as JsonValue) !== canonicalJson(got as unknown as JsonValue)
    )
      liveViolations.push(
        `live query: at ${now.toFixed(1)} ms replica ${p.id} pushed ${op} ${JSON.stringify(args)} = ${JSON.stringify(got)} as stable at position ${position}, but the committed state there reads ${JSON.stringify(expected)}`,
      );
  }

  /** No live query runs at `p` until it takes ops again (and the checks skip it meanwhile). */
  function forgetWatches(p: SimProcess): void {
    p.live = null;
    watched[p.id]?.clear();
  }

  /** Starts the live queries on the process's current host (at start, and after each restart). */
  function watchOn(p: SimProcess): void {
    if (config.liveQueries !== true) return;
    const host = p.host;
    const last = (watched[p.id] ??= new Map());
    last.clear();
    p.live = new LiveQueries<number>(
      (request) => {
        if (p.up && p.host === host && host.halted === null) host.invoke(physical(p.id), request);
      },
      (_conn, frame) => {
        if (frame.t !== 'watched') return;
        const seen = last.get(frame.watchId) ?? {};
        seen[frame.level] = frame.outcome as Outcome;
        last.set(frame.watchId, seen);
        if (frame.level === 'stable' && frame.position !== undefined)
          checkStablePush(p, frame.watchId, frame.outcome as Outcome, frame.position);
      },
      () => nextWatchTag++,
    );
    p.host.replica.takeChangedKeys(); // from now on the replica records them
    for (const [watchId, op, args] of SIM_WATCHES) p.live.watch(0, { watchId, op, args });
  }

  /** Runs `fn` once the process's earlier writes are durable, unless it crashes first. */
  function afterDurable(p: SimProcess, fn: () => void): void {
    const at = p.disk.durableAt();
    if (at <= now || config.unsafeSendBeforeDurable) {
      fn();
      return;
    }
    const incarnation = p.incarnation;
    events.push(at, () => {
      if (p.up && p.incarnation === incarnation) fn();
    });
  }

  /** The replica crashes and never comes back; its origin is dead. */
  function loseForGood(h: SimProcess): void {
    trace(`replica ${h.id} is gone for good`);
    const origin = h.host.replica.id;
    crash(h);
    if (!record.lost.includes(h.id)) record.lost.push(h.id);
    if (origin >= 0) record.deadOrigins.push(origin);
  }

  function crash(h: SimProcess): void {
    if (!h.up) return;
    trace(`replica ${h.id} crashes`);
    crashes++;
    h.up = false;
    h.incarnation++;
    lostWrites += h.disk.crash(now);
    // What survives is what the disk holds: the last durable checkpoint and the records after it.
    const { checkpoint, tail } = lastCheckpoint(h.disk.read());
    // Ops whose Req write the crash lost were never sent anywhere: they do not exist (and their
    // ids will be reused). A durable checkpoint covers every op its replica had issued.
    const survived = new Set(
      tail.flatMap((r) =>
        r.layer === 'core' && r.record.kind === 'req' ? [opKey(r.record.req.id)] : [],
      ),
    );
    const issuedBefore = checkpoint?.core.eventNo ?? 0;
    const origin = h.host.replica.id; // its own ops' origin (-1 while it has none: no own ops)
    for (const [key, req] of record.reqs)
      if (
        req.id.replica === origin &&
        req.id.eventNo > issuedBefore &&
        !survived.has(key) &&
        !h.opsOfLostDisks.has(key)
      )
        record.reqs.delete(key);
    // The commit records that survived: those the checkpoint counts, then those after it.
    let committed =
      checkpoint === undefined ? 0 : checkpoint.core.finalized + checkpoint.core.committedLive;
    for (const r of tail)
      if (r.layer === 'core' && r.record.kind === 'commit') committed += r.record.ids.length;
    record.commits[h.id] = commitPrefix(record.commits[h.id]!, committed, h.id);
    clientsLeave((inv) => inv.replica === h.id && !complete(inv));
  }

  /**
   * A membership change removed `p` (ReplicaHost.leaving): it takes no client op (`takesOps`) and
   * issues none, and its clients take theirs elsewhere, as the runtime's do when it answers
   * `unavailable`. It stays up as an acceptor (restarted after a crash) until told it is no longer
   * needed; the checkers hold it to nothing from here on, as a replica lost for good: it learns no
   * more, and its origin issues nothing more.
   */
  function depart(p: SimProcess): void {
    trace(`replica ${p.id} has its removal in force: it takes no client op, and its clients leave`);
    p.clientsLeft = true;
    clientsLeave((inv) => inv.replica === p.id && !complete(inv) && !inv.abandoned);
    if (!record.lost.includes(p.id)) record.lost.push(p.id);
    const origin = p.host.replica.id;
    if (origin >= 0 && !record.deadOrigins.includes(origin)) record.deadOrigins.push(origin);
  }

  /**
   * The clients of the ops `waiting` picks, which have no answer, leave their replica: most fail
   * over and resubmit (Correctables §5.1 binding, exactly-once); some, not knowing whether their
   * op took effect, abandon it instead (`creek.abandon`).
   */
  function clientsLeave(waiting: (inv: Invocation) => boolean): void {
    for (const inv of record.invocations) {
      if (waiting(inv)) {
        inv.abandoned = true;
        if (retryPrng.chance(0.8)) {
          const again = inv;
          const giveUp = abandonPrng.chance(ABANDON_SHARE);
          events.push(now + retryPrng.float(1, 200), () =>
            giveUp ? abandonOp(again) : resubmit(again),
          );
        }
      }
    }
  }

  /**
   * The replica's disk is lost (a wiped or replaced data directory): it crashes, and restarts on an
   * empty one. Its ops that no other replica holds are gone, and their ids may be used again; its
   * commit list and the responses it gave before are checked as those of a replica of their own
   * (RunRecord.retired).
   */
  function wipe(h: SimProcess): void {
    if (!h.up || record.lost.includes(h.id)) return;
    // The incarnation it ran under never issues again (a wiped replica takes a new one).
    if (h.host.replica.id >= 0) record.deadOrigins.push(h.host.replica.id);
    trace(`replica ${h.id} loses its disk`);
    crash(h);
    wipes++;
    const holders = procs.filter((q) => q !== h && !record.lost.includes(q.id)).map(holdsOps);
    const lostReqs = new Map<string, Req>();
    for (const [key, req] of record.reqs) {
      if (slotOf(req.id.replica) !== h.id) continue;
      if (holders.some((has) => has(req.id))) {
        h.opsOfLostDisks.add(key);
      } else {
        lostReqs.set(key, req);
        record.reqs.delete(key);
      }
    }
    record.retired.push({ replica: h.id, disk: h.wipes, commits: record.commits[h.id]!, lostReqs });
    h.wipes++;
    h.disk = new SimDisk();
    record.commits[h.id] = [];
  }

  /** Whether `q` has an op: in memory if it is up, else on its disk (what it will restart with). */
  function holdsOps(q: SimProcess): (id: OpId) => boolean {
    if (q.up) return (id) => q.host.replica.hasReceived(id);
    const inert = { persist() {}, send() {}, respond() {}, halt() {} };
    const recovered = new ReplicaHost(hostOptions(q.id), inert, {
      records: q.disk.read(),
      nowMs: physical(q.id),
    });
    return (id) => recovered.replica.hasReceived(id);
  }

  let backstopHits = 0;
  /** Per replica, CAB's checks of what casts lack, across its incarnations (PaxosStatus). */
  const lackChecks: number[] = [];
  function restart(p: SimProcess): void {
    // A departed replica (`depart`) is still an acceptor, until told it is no longer needed.
    if (p.up || (record.lost.includes(p.id) && !(p.clientsLeft && p.host.halted === null))) return;
    trace(`replica ${p.id} restarts`);
    p.up = true;
    const records = p.disk.read();
    if (records.some((r) => r.layer === 'checkpoint')) restartsFromCheckpoint++;
    backstopHits += p.host.paxos.status().backstopHits;
    lackChecks[p.id] = (lackChecks[p.id] ?? 0) + p.host.paxos.status().lackChecks;
    p.host = new ReplicaHost(liveHostOptions(p), effects(p), {
      records,
      nowMs: physical(p.id),
    });
    // It crashed while it rebuilt itself: it goes on from the chunks on its disk.
    if (p.host.rebuilding) transfersResumed++;
    // A member added during the run is watched once it takes ops (its clients could not before).
    if (p.seeds === null) watchOn(p);
    else forgetWatches(p);
    const again = p.crashAfterRestart;
    if (again === null) return;
    p.crashAfterRestart = null;
    events.push(now + again.afterMs, () => {
      if (!p.up || p.host.halted !== null) return;
      crash(p);
      events.push(now + again.downMs, () => restart(p));
    });
  }

  // Ticks.
  function startTicks(p: SimProcess, firstAt: number): void {
    const tick = (): void => {
      if (p.up) p.host.tick(physical(p.id));
      if (p.up && p.host.leaving && !p.clientsLeft) depart(p);
      events.push(now + TICK_MS, tick);
    };
    events.push(firstAt, tick);
  }
  for (const p of procs) startTicks(p, faultPrng.float(0, TICK_MS));

  // Clients: open-loop arrivals at each replica during the workload phase.
  const meanGap = 1000 / params.opsPerSecondPerReplica;
  function startClients(h: SimProcess, firstAt: number): void {
    const client = (): void => {
      if (now >= workloadMs) return;
      events.push(now + clientPrng.exponential(meanGap), client);
      if (!takesOps(h)) return;
      const g = generateOp(clientPrng, params.workload);
      const session = sessions.stamp(`s${h.id}`);
      // Exactly-once probes: an increment of a key of its own, which must end at exactly 1.
      const op = retryPrng.chance(0.05)
        ? {
            op: 'kv.increment',
            args: { key: `${ONCE_PREFIX}${session.id}/${session.seq}` },
            strong: retryPrng.chance(0.5),
          }
        : g;
      const inv = submit(h, op, session);
      // A client that lost its connection resubmits elsewhere, the first submission still alive.
      if (retryPrng.chance(0.03)) events.push(now + retryPrng.float(1, 300), () => resubmit(inv));
    };
    events.push(firstAt, client);
  }
  for (const h of procs) startClients(h, clientPrng.exponential(meanGap));

  /**
   * Whether a client's op reaches the replica: it is up, has not halted, and is not still learning
   * from its peers (the server answers `unavailable` meanwhile: ReplicaHost.learningFromPeers).
   */
  function takesOps(h: SimProcess): boolean {
    return h.up && h.host.halted === null && !h.host.learningFromPeers && !h.host.leaving;
  }

  function submit(h: SimProcess, g: GeneratedOp, session: SessionStamp): Invocation {
    const tag = nextTag++;
    const inv: Invocation = {
      replica: h.id,
      tag,
      op: g.op,
      args: g.args,
      strong: g.strong,
      invokedAt: now,
      id: null,
      responses: [],
      abandoned: false,
      session,
      ...(h.wipes > 0 ? { disk: h.wipes } : {}),
    };
    record.invocations.push(inv);
    byTag.set(tag, inv);
    h.host.invoke(physical(h.id), { op: g.op, args: g.args, strong: g.strong, tag, session });
    if (g.strong && h.loseAfterStrong) {
      // Dies while its strong op's gossip and CAB cast may be in flight: survivors that got the
      // Req but whose leader never gets the cast must cast it on its behalf (`cabAdopt`).
      h.loseAfterStrong = false;
      events.push(now + faultPrng.float(0, 2 * params.network.maxDelayMs), () => loseForGood(h));
    }
    return inv;
  }

  /** The op again, same session number, at another live replica, unless it is answered by now. */
  function resubmit(inv: Invocation): void {
    if (inv.session === undefined || sessions.isAcknowledged(inv.session)) return;
    // The linearizability checker sees each submission as an op of its own: leave those alone.
    if (onLinearizableObject(inv)) return;
    const others = procs.filter((x) => takesOps(x) && x.id !== inv.replica);
    if (others.length === 0) return;
    resubmissions++;
    submit(retryPrng.pick(others), inv, sessions.restamp(inv.session));
  }

  /**
   * The client abandons its op at another live replica: a strong `creek.abandon` of the op's
   * session number, itself the session's next op. Its stable answer settles the op either way.
   */
  function abandonOp(inv: Invocation): void {
    if (inv.session === undefined || sessions.isAcknowledged(inv.session)) return;
    // The linearizability checker sees each submission as an op of its own: resubmit those.
    if (onLinearizableObject(inv)) return resubmit(inv);
    const others = procs.filter((x) => takesOps(x) && x.id !== inv.replica);
    if (others.length === 0) return;
    abandons++;
    const op = { op: ABANDON_OP, args: { seq: inv.session.seq }, strong: true };
    submit(abandonPrng.pick(others), op, sessions.stamp(inv.session.id));
  }

  function onLinearizableObject(inv: Invocation): boolean {
    const a = inv.args as { key?: unknown; queue?: unknown } | null;
    return (
      (LINEARIZABLE_KEYS as readonly unknown[]).includes(a?.key) || a?.queue === LINEARIZABLE_QUEUE
    );
  }

  /** The replica a fault aimed at 'leader' hits: one that is up and leads now, if any. */
  const pick = (which: number | 'leader'): SimProcess | undefined =>
    which === 'leader'
      ? procs.find((x) => x.up && x.host.paxos.status().role === 'leader')
      : procs[which];
  // ---------------------------------------------------------------- membership changes

  /** Membership changes an operator asked for that are not decided yet (the run is not quiet). */
  let changesPending = 0;
  let reconfigurations = 0;
  let addedCount = 0;
  let removedCount = 0;
  let nonces = 0;
  /** The next replica id: ids are never reused (cab/configuration.ts). */
  let nextId = n;

  /** Processes that run and have not been lost or removed. */
  const alive = (): SimProcess[] => procs.filter((p) => p.up && !record.lost.includes(p.id));

  /**
   * What became of a change at a replica: its outcome if it remembers one, or, for a change it
   * applied before a restart, the configuration the change made.
   */
  function outcomeAt(p: SimProcess, nonce: string): ReconfigOutcome | undefined {
    const o = p.host.reconfigOutcome(nonce);
    if (o !== undefined) return o;
    const entry = p.host.membership().entries.find((e) => e.nonce === nonce);
    return entry === undefined
      ? undefined
      : { applied: true, entry, decidedAt: entry.from - CONFIG_DELAY };
  }

  /**
   * As `creek member` does: asks a live replica for the change, and again every 100 ms (another
   * replica, if that one is gone) until some replica has it decided; then `then(outcome)`. The
   * membership timeline (RunRecord.memberships) marks the change in progress until every live
   * member has it in force.
   */
  function operatorChange(change: MembershipChange, then: (o: ReconfigOutcome) => void): void {
    const request = { change, nonce: `op-${++nonces}` };
    trace(
      `the operator asks: ${change.op === 'add' ? `add replica ${change.member.id}` : `remove replica ${change.id}`}`,
    );
    changesPending++;
    record.memberships.push({ at: now, members: null });
    const attempt = (): void => {
      for (const p of alive()) {
        const o = outcomeAt(p, request.nonce);
        if (o === undefined) continue;
        reconfigurations++;
        trace(
          `replica ${p.id} tells the operator: decided at instance ${o.decidedAt}, ${o.applied ? `members from instance ${o.entry.from}: ${o.entry.members.map((m) => m.id).join(', ')}` : `not applied (${o.reason})`}`,
        );
        if (o.applied) inForceEverywhere(o.entry);
        else {
          changesPending--;
          record.memberships.push({ at: now, members: settledMembers() });
        }
        then(o);
        return;
      }
      const askable = alive().filter((p) => p.host.halted === null && !p.host.rebuilding);
      if (askable.length > 0) {
        const p = reconfigPrng.pick(askable);
        p.host.reconfigure(physical(p.id), request);
      }
      events.push(now + 100, attempt);
    };
    attempt();
  }

  /**
   * The members once a change is done: null (still changing) while another change is in progress,
   * which the partition checker reads as "no configuration fixed" (seed 11044 with 3 replicas: an
   * addition done while a removal was under way marked the old members fixed, and a split during
   * the removal was judged against them).
   */
  function settledMembers(): readonly number[] | null {
    return changesPending > 0 ? null : currentMembers();
  }

  /** The members of the configuration in force at the live replicas, when they agree. */
  function currentMembers(): readonly number[] | null {
    const views = alive()
      .filter((p) => p.host.halted === null && !p.host.rebuilding)
      .map((p) => p.host.paxos.status().members.join());
    return views.length > 0 && views.every((v) => v === views[0])
      ? views[0]!.split(',').map(Number)
      : null;
  }

  /**
   * Waits until every live member of `entry` has it (or a later configuration) in force, then
   * marks the change done.
   */
  function inForceEverywhere(entry: ConfigEntry): void {
    const members = entry.members.map((m) => m.id);
    const check = (): void => {
      const live = alive().filter((p) => members.includes(p.id));
      if (
        live.length > 0 &&
        live.every((p) => !p.host.rebuilding && p.host.membership().decidedBelow >= entry.from)
      ) {
        changesPending--;
        record.memberships.push({ at: now, members: settledMembers() });
        return;
      }
      events.push(now + 20, check);
    };
    check();
  }

  /** The live member a scenario aims at: the leader, a replica by id, or the one it added. */
  function member(which: 'leader' | 'new' | number, added: number | null): SimProcess | undefined {
    const members = new Set(currentMembers() ?? []);
    const candidates = alive().filter((p) => members.has(p.id));
    if (which === 'leader')
      return candidates.find((p) => p.host.paxos.status().role === 'leader') ?? candidates[0];
    const id = which === 'new' ? added : which;
    return candidates.find((p) => p.id === id) ?? candidates[0];
  }

  /** Starts a replica added to the cluster, empty: it rebuilds itself from a peer's checkpoint. */
  function startJoiner(id: number, members: readonly number[], s: ReconfigScenario): void {
    addedCount++;
    skewMs[id] = reconfigPrng.float(-20, 20);
    record.commits[id] = [];
    record.replicas = Math.max(record.replicas, id + 1);
    const p = spawn(
      id,
      members.filter((m) => m !== id),
    );
    startTicks(p, now + reconfigPrng.float(0, TICK_MS));
    if (now < workloadMs) startClients(p, now + clientPrng.exponential(meanGap));
    if (s.crashJoiner !== null) {
      const { afterMs, downMs } = s.crashJoiner;
      events.push(now + afterMs, () => {
        if (!p.up || record.lost.includes(p.id)) return;
        crash(p);
        events.push(now + downMs, () => restart(p));
      });
    }
  }

  function addNew(s: ReconfigScenario, started: (id: number) => void): void {
    const id = nextId++;
    operatorChange({ op: 'add', member: { id, address: `sim://${id}` } }, (o) => {
      if (!o.applied) return;
      startJoiner(
        id,
        o.entry.members.map((m) => m.id),
        s,
      );
      started(id);
    });
  }

  function runScenario(s: ReconfigScenario): void {
    let added: number | null = null;
    if (s.kind === 'replace') {
      const victim = member(s.victim, null);
      if (victim === undefined) return;
      // A lost machine is removed first: a new member takes part only once it has heard every
      // member (it may have voted before and forgotten), so a dead one would hold it back.
      if (s.dead) loseForGood(victim);
      operatorChange({ op: 'remove', id: victim.id }, () => addNew(s, () => undefined));
    } else {
      addNew(s, (id) => (added = id));
      events.push(s.shrinkAt, () => {
        const victim = member(s.victim, added);
        if (victim !== undefined) operatorChange({ op: 'remove', id: victim.id }, () => undefined);
      });
    }
    if (s.crashLeaderMs !== null) {
      // Another leader must finish the change.
      const leader = member('leader', null);
      if (leader !== undefined && leader.host.paxos.status().role === 'leader') {
        crash(leader);
        events.push(now + s.crashLeaderMs, () => restart(leader));
      }
    }
  }
  if (scenario !== null) events.push(scenario.at, () => runScenario(scenario));

  /** Every process that is not lost (a partition places each of them in a group). */
  const placed = (groups: readonly (readonly number[])[]): number[][] => {
    const out = groups.map((g) => [...g]);
    for (const p of procs)
      if (!out.some((g) => g.includes(p.id))) out[reconfigPrng.int(0, out.length - 1)]!.push(p.id);
    return out;
  };
  const allIds = (): number[] => procs.map((p) => p.id);

  // A run that changes its membership loses no replica for good but to that change: the operator
  // replaces the dead, and a new member waits for every member it has not heard.
  scheduleFaults(
    faultPrng,
    faults === 'reconfig' ? 'all' : faults,
    n,
    workloadMs,
    scenario !== null,
    {
      at: (t, fn) => events.push(t, fn),
      partition: (drawn) => {
        partitions++;
        const groups = placed(drawn);
        network.partition(groups);
        trace(`partition ${groups.map((g) => `[${g.join(',')}]`).join(' ')}`);
        record.splits.push({ start: now, end: Number.POSITIVE_INFINITY, groups });
      },
      isolateLeader: () => {
        const leader = pick('leader');
        if (leader === undefined) return;
        partitions++;
        const groups = [[leader.id], allIds().filter((i) => i !== leader.id)];
        network.partition(groups);
        trace(`the leader, replica ${leader.id}, is cut off`);
        record.splits.push({ start: now, end: Number.POSITIVE_INFINITY, groups });
      },
      oneWay: (from, to) => {
        partitions++;
        network.block(from, to);
        trace(`links cut one way: [${from.join(',')}] to [${to.join(',')}]`);
      },
      deafen: (which) => {
        const target = pick(which);
        if (target === undefined) return;
        partitions++;
        network.block(
          allIds().filter((i) => i !== target.id),
          [target.id],
        );
        trace(`replica ${target.id} hears nobody`);
      },
      heal: () => {
        network.heal();
        trace('the network heals');
        for (const s of record.splits) if (s.end === Number.POSITIVE_INFINITY) s.end = now;
      },
      crash: (which) => {
        const target = pick(which);
        if (target !== undefined) crash(target);
      },
      lose: (which) => {
        const target = pick(which);
        if (target !== undefined) target.loseAfterStrong = true;
      },
      wipe: (which, crashAfterRestart) => {
        const target = pick(which);
        if (target === undefined) return;
        wipe(target);
        target.crashAfterRestart = crashAfterRestart;
      },
      restartAll: () => procs.forEach(restart),
      lagging: (replica) => {
        const h = procs[replica]!.host;
        catchUpFrom = {
          replica,
          host: h,
          committed: h.replica.stats().committed,
          executions: h.replica.metrics.executions,
          lackChecks: h.paxos.status().lackChecks,
          messages: received[replica] ?? 0,
        };
      },
    },
  );

  // Run: the workload, then settle until quiescent.
  const deadline = workloadMs + settleMs;
  let quiescent = false;
  while (now <= deadline) {
    const at = events.peekTime();
    if (at === undefined) break;
    if (
      at > workloadMs &&
      now >= workloadMs &&
      Math.floor(at / 20) !== Math.floor(now / 20) &&
      isQuiescent()
    ) {
      quiescent = true;
      break;
    }
    const ev = events.pop()!;
    const before = now;
    now = ev.at;
    if (config.trace !== undefined) {
      const every = Math.max(1, config.trace.everyMs);
      if (Math.floor(now / every) !== Math.floor(before / every))
        config.trace.line(statusLine(now, procs));
    }
    ev.event();
    if (config.liveQueries === true)
      for (const p of procs) {
        // A replica added during the run, or rebuilt from a checkpoint: watched once it takes ops.
        if (p.up && p.live === null && takesOps(p)) watchOn(p);
        if (p.up && p.live !== null && p.host.halted === null)
          p.live.changed(p.host.replica.takeChangedKeys());
      }
    scheduleDeferredRuns();
    trackHolds();
    if (
      frames !== undefined &&
      Math.floor(now / frames.everyMs) !== Math.floor(before / frames.everyMs)
    )
      frames.onFrame(frame());
  }
  if (frames !== undefined) {
    frames.onFrame(frame());
    frames.onOps?.(record.invocations.map(opLife));
  }

  function frameOp(id: OpId): FrameOp {
    return { id: formatOpId(id), strong: record.reqs.get(opKey(id))?.strong === true };
  }

  /** What each replica looks like now (SimConfig.frames). */
  function frame(): SimFrame {
    const flying = network.flying();
    const open = record.splits.find((s) => s.end === Number.POSITIVE_INFINITY);
    return {
      at: now,
      replicas: procs.map((p) => {
        const s = p.host.replica.stats();
        const m = p.host.replica.metrics;
        const commits = record.commits[p.id]!;
        const tail: OpId[] = [];
        for (let g = commits.length - 1; g >= 0 && tail.length < FRAME_LIST; g--)
          for (let k = commits[g]!.length - 1; k >= 0 && tail.length < FRAME_LIST; k--)
            tail.unshift(commits[g]![k]!);
        return {
          id: p.id,
          up: p.up,
          role: p.host.paxos.status().role,
          committed: s.committed,
          tentative: s.tentative,
          committedTail: tail.map(frameOp),
          tentativeHead: p.host.replica.tentativeIds().slice(0, FRAME_LIST).map(frameOp),
          holding: p.host.speculationHeld,
          counts: m.speculationCounts(),
        };
      }),
      partition: open === undefined ? null : open.groups,
      invoked: record.invocations.length,
      strongInvoked: record.invocations.filter((i) => i.strong).length,
      messages: flying.slice(-FRAME_MESSAGES).map((f) => ({
        from: f.from,
        to: f.to,
        kind:
          f.msg.msg.kind === 'gossip'
            ? `gossip ${f.msg.msg.msg.kind}`
            : `paxos ${f.msg.msg.msg.type}`,
        sentAt: f.sentAt,
        arriveAt: f.arriveAt,
      })),
      messagesInFlight: flying.length,
      recentOps: record.invocations.slice(-FRAME_OPS).map(opLife),
    };
  }

  function opLife(i: Invocation): FrameOpLife {
    const first = (level: ResponseLevel) => i.responses.find((r) => r.level === level);
    const failed = first('failed');
    return {
      id: i.id === null ? null : formatOpId(i.id),
      replica: i.replica,
      op: i.op,
      strong: i.strong,
      invokedAt: i.invokedAt,
      tentativeAt: first('tentative')?.at ?? null,
      stableAt: first('stable')?.at ?? null,
      failedAt: failed?.at ?? null,
      failure: failed === undefined || failed.outcome.ok ? null : failed.outcome.error,
    };
  }

  /** Records when each replica starts and stops holding speculation (RunRecord.holds). */
  function trackHolds(): void {
    for (const p of procs) {
      const held = p.up && p.host.speculationHeld;
      const open = openHold[p.id];
      if (held && open === undefined) {
        const h = { replica: p.id, start: now, end: Number.POSITIVE_INFINITY };
        record.holds.push(h);
        openHold[p.id] = h;
      } else if (!held && open !== undefined) {
        open.end = now;
        openHold[p.id] = undefined;
      }
    }
  }
  if (!quiescent) quiescent = isQuiescent();

  /** A replica whose inputs wait for their executions runs them one turn later. */
  function scheduleDeferredRuns(): void {
    const turn = params.execution.deferTurnMs;
    if (turn === null) return;
    for (const p of procs) {
      if (!p.up || p.runScheduled || !p.host.executionDue) continue;
      p.runScheduled = true;
      const host = p.host;
      events.push(now + turn, () => {
        p.runScheduled = false;
        if (p.up && p.host === host) host.runDeferred();
      });
    }
  }

  function complete(inv: Invocation): boolean {
    if (inv.responses.length === 0) return false;
    return !inv.strong || inv.responses.some((x) => x.level === 'stable');
  }

  /**
   * The tentative ops at `p` of dead origins (replicas lost for good, incarnations whose disk was
   * lost) that follow an op of their origin `p` never received: program order keeps them waiting
   * for it, and it died with its origin.
   */
  function stranded(p: SimProcess): OpId[] {
    if (record.deadOrigins.length === 0) return [];
    const prefix = p.host.replica.receivedPrefix(record.deadOrigins);
    return p.host.replica
      .tentativeIds()
      .filter((id) => id.eventNo > (prefix.get(id.replica) ?? Number.POSITIVE_INFINITY));
  }

  function isQuiescent(): boolean {
    if (network.isPartitioned()) return false;
    const live = procs.filter((p) => !record.lost.includes(p.id));
    const committed = live[0]!.host.replica.stats().committed;
    for (const p of live) {
      if (
        !p.up ||
        // A new or wiped member that never finishes learning from its peers fails the run too,
        // unless a member it must hear (to rejoin) died for good: removing that member is what
        // would let it go on (README, "Adding, removing and replacing replicas").
        (p.host.learningFromPeers &&
          !p.host.paxos.status().members.some((m) => record.lost.includes(m))) ||
        // Reads of live queries still on their way (the run ending would lose their answers).
        (p.live !== null && p.live.reading > 0) ||
        !p.host.settled(stranded(p).length) ||
        p.host.replica.stats().committed !== committed
      )
        return false;
    }
    if (changesPending > 0) return false;
    return record.invocations.every((inv) => inv.abandoned || complete(inv));
  }

  for (const p of procs) {
    const s = p.host.replica.stats();
    record.finals.push({
      digest: p.host.replica.stateJson(),
      hash: p.host.replica.stateDigest(),
      tentative: s.tentative,
      unvalidated: s.unvalidated,
      stranded: stranded(p),
    });
  }

  for (const p of procs) {
    backstopHits += p.host.paxos.status().backstopHits;
    lackChecks[p.id] = (lackChecks[p.id] ?? 0) + p.host.paxos.status().lackChecks;
  }
  // The most any replica spent per op that reached the committed order.
  const ordered = Math.max(1, ...procs.map((p) => p.host.replica.stats().committed));
  const lackChecksPerOp = Math.max(...lackChecks.map((n) => (n ?? 0) / ordered));
  const violations = [
    ...halts,
    ...transferViolations,
    // CAB's index of what waits for which Req missed an arrival (MultiPaxos.backstopHits).
    ...(backstopHits === 0
      ? []
      : [
          `paxos: ${backstopHits} waiting casts or 2a were found ready only by the periodic recheck`,
        ]),
    ...reused,
    ...liveViolations.slice(0, 10),
    ...(config.liveQueries === true && quiescent ? checkLiveQueries() : []),
    ...checkRun(record, app, {
      quiescent,
      speculative: params.execution.speculative,
      // Pushes sent before the split arrive up to a delay later (a duplicate up to twice that);
      // then the hold ends at the next tick after CATCH_UP_STALL_MS without one.
      holdBoundMs: CATCH_UP_STALL_MS + 2 * params.network.maxDelayMs + 2 * TICK_MS,
      // Writes complete in order, each within diskLatencyMs: 10 ms covers the drawn ones (at most
      // 5); a longer one set by the config (held writes) gets twice its own.
      diskWaitMs: Math.max(10, 2 * params.diskLatencyMs),
    }),
  ];
  if (!quiescent) {
    const waiting = record.invocations.filter((inv) => !inv.abandoned && !complete(inv));
    violations.unshift(
      `liveness: not quiescent ${settleMs} ms after faults ended (${waiting.length} invocations waiting; tentative ${procs.map((x) => x.host.replica.stats().tentative).join('/')}; paxos ${JSON.stringify(procs.map((x) => x.host.paxos.status()))})`,
    );
  }

  const sum = (f: (h: ReplicaHost) => number): number => procs.reduce((s, p) => s + f(p.host), 0);
  const committedSubmissions = new Map<string, number>();
  const survivor = liveReplicas(record)[0]!;
  for (const id of record.commits[survivor]!.flat()) {
    const session = record.reqs.get(opKey(id))?.session;
    if (session === undefined) continue;
    const key = `${session.id}/${session.seq}`;
    committedSubmissions.set(key, (committedSubmissions.get(key) ?? 0) + 1);
  }
  const stats: SimStats = {
    checkpoints,
    truncatedRecords: procs.reduce((t, p) => t + p.disk.truncated, 0),
    restartsFromCheckpoint,
    resubmissions,
    abandons,
    abandoned: record.invocations.filter((i) => i.op === ABANDON_OP && abandonAnswer(i) === true)
      .length,
    duplicatesCommitted: [...committedSubmissions.values()].filter((c) => c > 1).length,
    ops: record.invocations.length,
    strongOps: record.invocations.filter((i) => i.strong).length,
    committed: record.commits[survivor]!.flat().length,
    executions: sum((h) => h.replica.metrics.executions),
    rollbacks: sum((h) => h.replica.metrics.rollbacks),
    aheadExecutions: sum((h) => h.replica.metrics.aheadExecutions),
    aheadConflicts: sum((h) => h.replica.metrics.aheadConflicts),
    mirrorExecutions,
    lackChecksPerOp,
    staleMirrorReads,
    reorderingCommits: sum((h) => h.replica.metrics.reorderingCommits),
    executionRatio:
      sum((h) => h.replica.metrics.executionsOfFinalized) /
      Math.max(
        1,
        sum((h) => h.replica.metrics.finalized),
      ),
    speculated: sum((h) => h.replica.metrics.speculated),
    speculatedCorrectly: sum((h) => h.replica.metrics.speculatedCorrectly),
    messages: network.sent,
    partitions,
    crashes,
    lostWrites,
    lost: record.lost.length,
    wipes,
    wipedHalts,
    transfers,
    transfersResumed,
    reconfigurations,
    added: addedCount,
    removed: removedCount,
    elections: sum((h) => h.paxos.counters.elections),
    adopted: sum((h) => h.replica.metrics.adopted),
    simulatedMs: now,
    catchUp: catchUpWork(),
  };

  function catchUpWork(): CatchUpWork | null {
    const from = catchUpFrom;
    if (from === null || procs[from.replica]!.host !== from.host) return null;
    const h = from.host;
    const ops = h.replica.stats().committed - from.committed;
    const executions = h.replica.metrics.executions - from.executions;
    const lackChecks = h.paxos.status().lackChecks - from.lackChecks;
    const messages = (received[from.replica] ?? 0) - from.messages;
    return {
      replica: from.replica,
      ops,
      executions,
      lackChecks,
      messages,
      perOp: (executions + lackChecks + messages) / Math.max(1, ops),
    };
  }
  return {
    seed: config.seed,
    replicas: n,
    ok: violations.length === 0,
    violations,
    parameters: params,
    stats,
    committedOrder: record.commits[survivor]!.flat().map(formatOpId),
  };
}

interface FaultActions {
  at(t: number, fn: () => void): void;
  partition(groups: number[][]): void;
  isolateLeader(): void;
  oneWay(from: number[], to: number[]): void;
  /** Cuts every link into one replica (the leader at that time, or a given one): it hears nobody. */
  deafen(which: number | 'leader'): void;
  heal(): void;
  crash(which: number | 'leader'): void;
  /** Crashes the replica for good, right after its next strong invocation. */
  lose(which: number | 'leader'): void;
  /**
   * Crashes the replica and loses its disk: it restarts empty (restartAll), and may crash again
   * soon after, while it still learns from its peers.
   */
  wipe(
    which: number | 'leader',
    crashAfterRestart: { readonly afterMs: number; readonly downMs: number } | null,
  ): void;
  restartAll(): void;
  /** Faults 'lag': the replica was cut off until now; its catch-up is measured from here. */
  lagging(replica: number): void;
}

/**
 * Faults during the workload, one at a time; all healed and restarted by its end, but for replicas
 * lost for good ('lose': as many per run as a majority survives, so two of five). A 'wipe' loses a
 * replica's disk; it counts as all of those losses, since the replica may halt (lost state).
 */
function scheduleFaults(
  prng: Prng,
  mode: FaultMode,
  n: number,
  workloadMs: number,
  noLosses: boolean,
  act: FaultActions,
): void {
  if (mode === 'none' || n < 2) return;
  if (mode === 'lag' || mode === 'lag-cut') {
    // Cut off for most of the workload; healed, it starts to catch up and holds speculation
    // (measured from then: SimStats.catchUp). lag-cut: cut off again 20 ms into that for 200 ms,
    // when the hold must end (checkMinorityPartitions).
    const who = prng.int(0, n - 1);
    const others = Array.from({ length: n }, (_, i) => i).filter((i) => i !== who);
    // lag-cut leaves room for the second cut before the workload ends.
    const healAt = workloadMs * (mode === 'lag' ? 0.95 : 0.8);
    act.at(workloadMs * 0.05, () => act.partition([[who], others]));
    act.at(healAt, () => {
      act.heal();
      act.lagging(who);
    });
    if (mode === 'lag-cut') {
      act.at(healAt + 20, () => act.partition([[who], others]));
      act.at(Math.min(healAt + 220, workloadMs), () => act.heal());
    }
    return;
  }
  const kinds: string[] = [];
  if (mode === 'partition' || mode === 'all')
    kinds.push('split', 'isolate-leader', 'one-way', 'deaf');
  if (mode === 'crash' || mode === 'all') kinds.push('crash', 'crash-leader');
  // Replicas die for good, as many as a majority survives (a second loss of five is what leaves a
  // value that a new leader must re-propose with its Reqs nowhere alive).
  const mayLose = noLosses ? 0 : Math.floor((n - 1) / 2);
  if ((mode === 'crash' || mode === 'all') && mayLose > 0) kinds.push('lose', 'wipe');
  let lost = 0;
  let t = prng.float(50, workloadMs / 3);
  while (t < workloadMs - 50) {
    const kind = prng.pick(kinds);
    const end = Math.min(t + prng.float(40, 400), workloadMs);
    const ids = Array.from({ length: n }, (_, i) => i);
    switch (kind) {
      case 'split':
        act.at(t, () => act.partition(splitReplicas(prng, n)));
        act.at(end, () => act.heal());
        break;
      case 'isolate-leader':
        act.at(t, () => act.isolateLeader());
        act.at(end, () => act.heal());
        break;
      case 'one-way': {
        const from = prng.pick(ids);
        const to = ids.filter((i) => i !== from && prng.chance(0.5));
        act.at(t, () => act.oneWay([from], to));
        act.at(end, () => act.heal());
        break;
      }
      case 'deaf': {
        // One replica hears nobody while everyone hears it (Multi-Paxos: it must neither depose
        // the leader again and again nor, leading, hold the others back).
        const who = prng.chance(0.5) ? ('leader' as const) : prng.pick(ids);
        act.at(t, () => act.deafen(who));
        act.at(end, () => act.heal());
        break;
      }
      case 'lose': {
        if (lost >= mayLose) break;
        lost++;
        const who = prng.chance(0.5) ? ('leader' as const) : prng.pick(ids);
        act.at(t, () => act.lose(who));
        break;
      }
      case 'wipe': {
        // It rejoins only once it has heard every peer, and it halts if it finds it lost state
        // that mattered: it takes the whole budget of replicas lost, so that no replica is lost for
        // good while it waits for them all.
        if (lost > 0) break;
        lost = mayLose;
        const who = prng.chance(0.5) ? ('leader' as const) : prng.pick(ids);
        const again = prng.chance(0.5)
          ? { afterMs: prng.float(0, 40), downMs: prng.float(20, 200) }
          : null;
        act.at(t, () => act.wipe(who, again));
        act.at(end, () => act.restartAll());
        break;
      }
      case 'crash':
      case 'crash-leader': {
        const victims =
          kind === 'crash-leader' ? ['leader' as const] : ids.filter(() => prng.chance(1 / n));
        act.at(t, () => victims.forEach((v) => act.crash(v)));
        act.at(end, () => act.restartAll());
        break;
      }
    }
    t = end + prng.float(30, 300);
  }
  act.at(workloadMs, () => {
    act.heal();
    act.restartAll();
  });
}

function drawParameters(
  prng: Prng,
  n: number,
  faults: FaultMode,
): Omit<SimParameters, 'checkpointEvery' | 'execution' | 'reconfiguration'> {
  const maxDelay = prng.pick([1, 5, 20, 50]);
  const benign = faults === 'none';
  return {
    faults,
    network: {
      minDelayMs: prng.float(0.1, maxDelay / 4),
      maxDelayMs: maxDelay,
      lossRate: benign ? 0 : prng.pick([0, 0, 0.02, 0.1]),
      duplicateRate: benign ? 0 : prng.pick([0, 0.02, 0.1]),
      retransmitMs: prng.pick([10, 30, 100]),
    },
    workload: {
      keys: prng.pick([2, 4, 8, 16]),
      strongRatio: prng.pick([0.05, 0.15, 0.3, 0.6]),
      readRatio: prng.pick([0, 0.2, 0.4]),
    },
    opsPerSecondPerReplica: prng.pick([20, 60, 150]),
    skewMs: Array.from({ length: n }, () =>
      prng.float(-prng.pick([0, 2, 20]), prng.pick([0, 2, 20])),
    ),
    noopIntervalMs: prng.pick([20, 60, 150]),
    diskLatencyMs: prng.pick([0.1, 1, 5]),
    // Short ones make replicas cast others' strong ops during partitions (duplicate decisions).
    adoptAfterMs: prng.pick([40, 200, 1000]),
  };
}

const CHECKPOINT_EVERY = [3, 10, 30, 100] as const;

/** The first commit records of `groups` that hold `count` ids in all (a crash keeps a prefix). */
/** HostOptions.transferChunkChars in simulated runs: a few Reqs or a few dozen keys a chunk. */
const SIM_TRANSFER_CHUNK_CHARS = 600;

function commitPrefix(groups: OpId[][], count: number, replica: number): OpId[][] {
  let total = 0;
  let g = 0;
  while (g < groups.length && total < count) total += groups[g++]!.length;
  if (total !== count)
    throw new Error(
      `replica ${replica}: its disk holds ${count} committed ops, not a prefix of the ${groups.flat().length} it wrote`,
    );
  return groups.slice(0, g);
}

/** Two non-empty groups, at random. */
function splitReplicas(prng: Prng, n: number): number[][] {
  const ids = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const j = prng.int(0, i);
    [ids[i], ids[j]] = [ids[j]!, ids[i]!];
  }
  const cut = prng.int(1, n - 1);
  return [ids.slice(0, cut), ids.slice(cut)];
}
