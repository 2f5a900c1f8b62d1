import type { FrameOpLife, SimFrame } from './frames.js';
import type { SimTrace } from './trace.js';
import type { WanProfileName } from './wan.js';

/** The faults a run can be asked for (SimConfig.faults). */
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

/**
 * What can go wrong with a replica's disk (SimConfig.storageFaults): torn, the write in flight when
 * the power goes is on the disk in part; corrupt, a bit of a record flips at rest; stale, a record
 * reads back as an older version of itself; power-loss, a replica's machine loses power, which
 * loses the writes not yet synced, while a process crash keeps them (the operating system had
 * them).
 */
export const STORAGE_FAULTS = ['torn', 'corrupt', 'stale', 'power-loss'] as const;
export type StorageFault = (typeof STORAGE_FAULTS)[number];

/** Who the clients of a run are (SimConfig.clients). */
export const CLIENT_MODES = ['model', 'sdk'] as const;
export type ClientMode = (typeof CLIENT_MODES)[number];

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
  /**
   * model (the default): the simulator's own model of clients (sim/clients.ts), which hands each op
   * straight to its replica's host and fails over, resubmits and abandons by itself. sdk: the
   * clients of each replica are one real client session (@creek/client/session) talking to the
   * replica's side of its client connections (@creek/replica/host/client-connections.ts) over
   * simulated links (sim/client-links.ts): failover, resubmission with the same op id and number,
   * abandon, the offline queue and live queries are the SDK's and the replica's own code, judged
   * by every checker and by those of what the clients saw (sim/session-checkers.ts). Another run
   * than the model's for the same seed.
   */
  readonly clients?: ClientMode;
  /**
   * The network's delays: 'mix' (what `npm run sim` runs) puts one seed in five on a WAN profile
   * (sim/wan.ts), drawn by the seed, and the others on uniform delays; a profile's name runs the
   * seed on it; 'uniform' (the default, so that a seed named anywhere else runs as it always did)
   * none.
   */
  readonly network?: WanProfileName | 'uniform' | 'mix';
  /**
   * The replicas' election timeout is half the shortest round trip between two regions (on
   * uniform delays, the shortest one-way delay), below the round trip and the heartbeat period.
   * Exists so a test can show the liveness checker catches a timer set below the network's
   * round trips.
   */
  readonly unsafeElectionBelowRtt?: boolean;
  /**
   * Simulated time during which clients invoke ops (default 1500 ms; 4500 ms on a WAN profile,
   * where the first leader is elected only after one WAN election timeout, 1500 ms).
   */
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
   * Strong reads take their index from a majority's frontiers (PaxosOptions.quorumReads) instead
   * of the leader's read index. Default false.
   */
  readonly quorumReads?: boolean;
  /**
   * The SMR baseline as the runtime runs it (`--speculation off`): no replica speculates and
   * every update is ordered on arrival (ReplicaOptions.orderOnArrival). Default false: a seed
   * draws whether it speculates, and one that does not orders weak ops by timestamp.
   */
  readonly smr?: boolean;
  /**
   * Quorum reads take the first frontier that answers for a majority's
   * (PaxosOptions.unsafeQuorumReadSingleAnswer; implies quorumReads). Exists so a test can show
   * the checkers catch a strong read answered from a minority.
   */
  readonly unsafeQuorumReadSingleAnswer?: boolean;
  /**
   * The replicas' client endpoints pass no session numbers on (ClientConnectionsOptions.
   * unsafeDropSessions), so a session's resubmission elsewhere is applied again. With clients
   * 'sdk' only. Exists so a test can show the checkers catch it.
   */
  readonly unsafeDropSessions?: boolean;
  /**
   * The app has a planted nondeterministic op (sim/nondeterminism.ts), invoked once or twice in
   * the run: replicas' states then differ at its key, and checkDivergence requires that the
   * replicas catch it, name it, and serve no differing stable answers. The checkers that hold
   * states to a serial execution leave its keys and answers out. Its draws are a named stream's,
   * and such a run changes no membership (sim/simulation.ts says why); the rest of the seed is as
   * without it.
   */
  readonly nondeterministic?: boolean;
  /**
   * Every replica checks the app's invariants (AppOptions.invariants) on its finalized state after
   * each op it finalizes (ReplicaOptions.checkInvariants), and the run fails naming each one
   * broken, the op and the committed position (sim/invariant-reports.ts). The simulator's app has
   * one ('no-overdraft'). Checking draws nothing: the run is the seed's run without it.
   */
  readonly invariants?: boolean;
  /**
   * The app's `transfer` moves money whatever the balance (sim/invariant-reports.ts
   * `overdrawApp`), and invariants are checked. Exists so a test can show the invariant check
   * catches an op that breaks an invariant.
   */
  readonly unsafeOverdraw?: boolean;
  /**
   * Replicas never compare their digests with their peers' (HostOptions.unsafeSkipDivergenceCheck).
   * Exists so a test can show checkDivergence catches a divergence that went unnoticed.
   */
  readonly unsafeSkipDivergenceCheck?: boolean;
  /**
   * Replicas get the Reqs gossip brings them without their caller (`Req.user`; the simulator's
   * delivery strips it), so they run other replicas' ops as anonymous. Exists so a test can
   * show the checkers catch an op run as two different users.
   */
  readonly unsafeDropGossipedUsers?: boolean;
  /**
   * With clients 'sdk': each session of a user (RunState.users) signs in with simulated tokens
   * (sim/sim-tokens.ts) that the replicas' endpoints verify, some lasting less than the run, so
   * that hellos wait for verdicts, sessions refresh their tokens on their own timers (from the
   * tokens' exp) and when replicas ask, and replicas close connections whose tokens lapse, under
   * every fault. Off by default: it changes what the sessions do, so a run
   * with it is another run.
   */
  readonly userTokens?: boolean;
  /**
   * The replicas' live queries tell a session that their stable results hold the session's ops
   * their tentative results held (ClientConnectionsOptions.unsafeStableOwnOps), so a stable result
   * read before the session's write committed replaces the tentative view that showed it. With
   * clients 'sdk' only. Exists so a test can show the checkers catch it.
   */
  readonly unsafeStableOwnOps?: boolean;
  /**
   * With clients 'sdk': now and then a session asks for its context token and hands it to a new
   * client at another replica, which starts after it (`connect({ after })`), invokes a couple of
   * ops and closes; sim/context-checker.ts holds those ops to the token's writes. Off by default:
   * the extra clients make another run of the same seed.
   */
  readonly contexts?: boolean;
  /**
   * With clients 'sdk': the sessions share a context (the SDK's `client.joinContext`), and some of
   * their ops run in it: after the context's frontier, then merged into it before their caller gets
   * the final view. sim/shared-context-checker.ts holds each op in the context to the others' ops
   * the context acknowledged before it. Off by default: the context's ops make another run.
   */
  readonly sharedContexts?: boolean;
  /**
   * The sessions merge their ops into a shared context weak (SharedContext's broken variant), so
   * an op is acknowledged before its merge is ordered and a member's strong read of the frontier
   * may miss it. Exists so a test can show the checkers catch it.
   */
  readonly unsafeWeakContextMerge?: boolean;
  /**
   * The simulated workers' reads from their store mirrors are recorded, when a result comes back,
   * as the versions the job's position sees then rather than the versions the worker read, so an
   * execution that read a version a later installation superseded is accepted without being
   * validated. Makes every seed execute on mirrors. Exists so a test can show the checkers catch
   * it.
   */
  readonly unsafeTrustMirrorReads?: boolean;
  /**
   * Replicas check a hello's context token but do not wait for the ops it covers
   * (ClientConnectionsOptions.unsafeIgnoreAfter), so a client that starts after another's token
   * may read without that client's writes. Exists so a test can show the checkers catch it.
   */
  readonly unsafeIgnoreAfter?: boolean;
  /**
   * Replicas answer a running client's `after` (a context request covering another client's
   * token) at once, without holding the ops it covers (ClientConnectionsOptions
   * .unsafeAnswerUnheld). Exists so a test can show the checkers catch it.
   */
  readonly unsafeAnswerUnheld?: boolean;
  /**
   * Live queries (the node layer's LiveQueries, driven here as the runtime drives them): each
   * replica watches `kv.get` of the first two workload keys and `queue.size` of the linearizable
   * queue from the start (and again after each restart, as a client re-watches), re-running them
   * when the replica reports changed keys after each event. At the end of a quiescent run, every
   * watch's last tentative and stable results must equal the read on the final state. Off by
   * default: its reads are executions, so a run with them is another run. With clients 'sdk' the
   * sessions run these live queries through the replicas' endpoints, always, and this is ignored.
   */
  readonly liveQueries?: boolean;
  /**
   * The most a disk write takes to become durable (each write draws its time up to this), in place
   * of the seed's draw of 0.1, 1 or 5 ms (the draw is made all the same, so nothing else moves). A
   * test sets it long to stand for the runtime's held writes: a turn that sends and answers
   * nothing commits its writes with the next turn that does, or 10 ms later (ReplicaServer).
   */
  readonly diskLatencyMs?: number;
  /**
   * Storage faults in the mix (STORAGE_FAULTS; none by default), with faults 'crash', 'all' or
   * 'reconfig': disks then keep a checksum with every record (sim/disk.ts), and a replica that
   * finds a record of its disk damaged when it restarts uses none of it: it rebuilds itself from
   * its peers, as one whose disk was lost. Torn, corrupt and stale each strike one replica at most
   * per run, in place of a lost disk, as that is what they may cost (faults.ts). Their draws are a
   * named stream's, and a run without them is the run it always was.
   */
  readonly storageFaults?: readonly StorageFault[];
  /**
   * Replicas load their disks without checking the records' checksums, and use what a storage
   * fault damaged. Exists so a test can show the checkers catch it.
   */
  readonly unsafeIgnoreChecksums?: boolean;
  /**
   * Leader placement (cab/leader-transfer.ts): a third of the seeds give their replicas a
   * preferred leader, drawn from a stream of their own (sim/leader-placement.ts), and the
   * leadership checker judges them. Off by default: a run with a preferred leader is another run,
   * and seeds that tests pin down must stay the runs they were.
   */
  readonly leaderPlacement?: boolean;
  /** Every replica is given this member as its preferred leader, whatever `leaderPlacement` says. */
  readonly preferredLeader?: number;
  /**
   * A leader deposed by a higher ballot runs for leader again at once (PaxosOptions.
   * unsafeRunWhenDeposed), with a preferred leader set. Exists so a test can show the leadership
   * checker catches leadership that goes back and forth.
   */
  readonly unsafeRunWhenDeposed?: boolean;
  /**
   * A removed replica takes no client op only while its removal is in force at its decided prefix
   * (PaxosOptions.unsafeLeaveOnlyInForce), which a restart sets back. Exists so a test can show the
   * simulator catches a removed replica that takes client ops again.
   */
  readonly unsafeLeaveOnlyInForce?: boolean;
  /**
   * A dead origin's strong ops adopted behind one another are cast without naming their
   * predecessor (ReplicaOptions.unsafeUnchainedAdoption). Exists so a test can show the simulator
   * catches them cast out of their origin's order.
   */
  readonly unsafeUnchainedAdoption?: boolean;
  /**
   * No replica proposes a close of a dead origin (HostOptions.closesAllowed), as in a cluster one
   * of whose members runs a release before closes existed: the dead origins' stranded ops then stay
   * tentative, as they did before, and the checkers expect no close.
   */
  readonly closesOff?: boolean;
  /** The run told as it goes (sim/trace.ts); observing changes nothing in the run. */
  readonly trace?: SimTrace;
  /**
   * Every `everyMs` of simulated time, `onFrame` gets what each replica looks like (SimFrame): the
   * visualizer replays a run from these. At the end, `onOps` (if given) gets every op's life over
   * the run, for charts of its latencies. Observing changes nothing in the run.
   */
  readonly frames?: {
    readonly everyMs: number;
    onFrame(frame: SimFrame): void;
    onOps?(ops: readonly FrameOpLife[]): void;
  };
}
