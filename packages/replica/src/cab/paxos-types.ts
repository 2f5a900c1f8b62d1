import type { OpId } from '../core/op-id.js';
import type { Awaited } from './req-waits.js';
import type { Member, ReconfigOutcome } from './configuration.js';
import type { AcceptorRecord, Batch, PaxosMessage } from './messages.js';

// What MultiPaxos takes and gives (multi-paxos.ts exports them): its options, its outputs, what it
// recovers from disk and its status.

export interface PaxosOptions {
  readonly self: number;
  /**
   * The genesis configuration's replica ids, this one included (`members` gives their addresses):
   * it governs every instance until a membership change decided in the log (cab/configuration.ts).
   * A configuration on disk (PaxosRecovery) wins over it.
   */
  readonly replicas: readonly number[];
  /** The genesis configuration with addresses; when given, `replicas` is ignored. */
  readonly members?: readonly Member[];
  /**
   * A planted bug: every instance's quorum is a majority of the genesis configuration's size,
   * counted over any replicas, whatever changed since. Only the simulator's checkers want it.
   */
  readonly unsafeGenesisQuorum?: boolean;
  /**
   * A planted bug: the leader answers a read index at once, without the round that confirms no
   * higher ballot was promised (read-index.ts). Only the simulator's checkers want it.
   */
  readonly unsafeReadWithoutQuorum?: boolean;
  /**
   * Strong reads ask every member for its frontier and take their index from a majority's
   * answers (quorum-reads.ts) instead of asking the leader (read-index.ts): across regions, the
   * round trip to the nearest majority instead of the one to the leader and on from it. Default
   * false.
   */
  readonly quorumReads?: boolean;
  /** A planted bug of quorum reads: the first answer counts as a majority. Simulator only. */
  readonly unsafeQuorumReadSingleAnswer?: boolean;
  /**
   * The member the operator wants to lead (leader-transfer.ts): a leader hands leadership to it
   * once it is heard, hears a majority and is caught up, and it takes over only if its own
   * setting names itself too. Every replica should be given the same value; where they disagree,
   * leadership moves at most once per election, to a member that names itself, or stays put.
   * Unset: Ω's lowest-numbered member leads, as without it.
   */
  readonly preferredLeader?: number;
  /**
   * A planted bug: a replica that promised another's ballot, or a leader or candidate a higher
   * ballot deposed, may run for leader again at once (Ω picks it when it is the lowest-numbered
   * member heard), instead of giving that ballot's candidate an election timeout to win, so
   * leadership goes back and forth: after every hand-over to a preferred leader, and when a
   * returning member runs. Only the simulator's checkers want it.
   */
  readonly unsafeRunWhenDeposed?: boolean;
  /**
   * A planted bug: a removed replica counts as leaving (it takes no client op) only while its
   * removal is in force at its decided prefix, which a restart sets back, instead of from the
   * moment it knows the change that removed it. Only the simulator's checkers want it.
   */
  readonly unsafeLeaveOnlyInForce?: boolean;
  /** How often every replica announces itself (Ω) and its progress. */
  readonly heartbeatMs?: number;
  /** Silence after which a replica is presumed down. */
  readonly electionTimeoutMs?: number;
  /** When unanswered prepares, accepts, forwards and catch-ups are sent again. */
  readonly retransmitMs?: number;
  /** Most ids in one instance. */
  readonly maxBatch?: number;
  /** Most undecided instances a leader keeps open (pipelining); beyond that, ids wait and batch. */
  readonly maxInFlight?: number;
  /** Whether an id was already decided (the delivery stream knows): a leader does not propose it again. */
  readonly isOrdered?: (id: OpId) => boolean;
  /**
   * What this replica lacks to deliver `id` once decided: its Req, or Reqs of its causal context
   * (empty when it has them all). A leader proposes, and an acceptor accepts, only ids it lacks
   * nothing for (indirect consensus): so everything a decided id needs is held by a majority and
   * outlives any minority of crashes, its origin's included. Otherwise an origin that died after
   * its cast reached the leader but before its Req (or an op before it) reached anyone else would
   * leave a decided id nobody can deliver, and every later instance blocked behind it. Default:
   * nothing is ever lacking.
   */
  readonly missing?: (id: OpId) => readonly OpId[];
  /**
   * What `id` waits for, or null when nothing is lacking: one Req of what `missing(id)` would
   * name, or an origin's prefix that covers some of them (Awaited). A waiting cast or 2a is filed
   * under it until it arrives (`reqsArrived`), then checked again (Replica.awaitedDep). Default:
   * the Req `missing(id)[0]`.
   */
  readonly awaited?: (id: OpId) => Awaited | null;
  /**
   * How many of an origin's Reqs this replica holds without a gap: when one of its Reqs arrives,
   * waiters on its prefix are due (Awaited.prefix). Default: none (0).
   */
  readonly receivedUpTo?: (origin: number) => number;
  /**
   * This replica starts with no promise and no vote in its durable state (and, the host adds, no
   * op of its own): a new cluster's replica, or one whose disk was lost, possibly after it had
   * begun to rejoin (rejoining writes none of them, so a crash then leaves it here again; found by
   * the simulator's 'wipe' fault). The cases look the same to it, and the second may have
   * promised ballots and voted for values it no longer remembers: were it to promise or vote again
   * as if it never had, a majority formed with it could choose a second value for an instance
   * already decided (found end to end: a wiped replica and one that had missed the decision chose
   * again, with the third down). So it only learns (`rejoining`) until it has heard a heartbeat
   * from every peer, has promised the highest ballot any of them promised, and has learned every
   * instance any of them knew of; only then does it promise, vote or campaign. Each vote it forgot
   * was cast on an instance that its ballot's leader had accepted in place before the vote, so that
   * leader's heartbeat covers it. And since instances that every replica delivered are truncated,
   * a peer that reports such instances beyond what this replica delivered proves it lost state it
   * cannot get back: it stops (`lostState`). Default false.
   */
  readonly noDurableVotes?: boolean;
}

export type PaxosOutput =
  /**
   * `lazy`: no answer waits for this copy (see `fastQuorum`); a driver may hold it for a moment to
   * send it with later messages. Delaying a message is always safe; only liveness could suffer,
   * and the copies that matter are not lazy.
   */
  | {
      readonly type: 'send';
      readonly to: number;
      readonly msg: PaxosMessage;
      readonly lazy?: true;
    }
  /** Must be durable before any later output of this replica is acted on. */
  | { readonly type: 'persist'; readonly record: AcceptorRecord }
  /** An instance was decided (learned); decisions come in any order, each exactly once. */
  | { readonly type: 'decide'; readonly instance: number; readonly value: Batch }
  /** Every replica delivered everything below `below`, and those instances are gone: skip them. */
  | { readonly type: 'skip'; readonly below: number }
  /** Reqs this replica needs before it can propose or accept their ids: fetch them (gossip). */
  | { readonly type: 'want'; readonly ids: readonly OpId[] }
  /**
   * This replica started without durable votes (`noDurableVotes`) and peer `from` truncated
   * instances it never delivered: it lost state that no replica's log has any more. Reported once,
   * then inert: the host rebuilds the replica from a peer's checkpoint (host/state-transfer.ts).
   */
  | { readonly type: 'lostState'; readonly from: number; readonly reason: string }
  /**
   * A membership change was decided (applied or not: `outcome`), in instance order. Its record
   * comes before it among the outputs; the host updates whom gossip talks to.
   */
  | { readonly type: 'config'; readonly outcome: ReconfigOutcome }
  /**
   * The read asked for with `requestRead(key)` may be answered from the committed state once
   * every instance below `index` is delivered here (read-index.ts).
   */
  | { readonly type: 'readIndex'; readonly key: number; readonly index: number };

/** What a restarted replica recovers from its disk. */
export interface PaxosRecovery {
  readonly records: readonly AcceptorRecord[];
}

/**
 * What this replica's Paxos waits for from its peers (MultiPaxos.progress), for a host that
 * explains why it makes no progress (host/progress.ts). Peer ids only, none of them itself.
 */
export interface PaxosProgress {
  /** The other members of the configuration in force. */
  readonly members: readonly number[];
  /** It is a member itself, and how many members make a majority. */
  readonly member: boolean;
  readonly majority: number;
  /** Members heard from within the election timeout. */
  readonly heard: readonly number[];
  /** Members heard whose heartbeats say they may not lead (rejoining, or hearing no majority). */
  readonly notQuorate: readonly number[];
  /** As a candidate: the members that promised its ballot; null when it is no candidate. */
  readonly promisedBy: readonly number[] | null;
  /** While it rejoins (Rejoin.progress): what it still waits for; null once it takes part. */
  readonly rejoin: RejoinProgress | null;
}

/** What a rejoining replica waits for before it may promise or vote (cab/rejoin.ts). */
export interface RejoinProgress {
  /** Members whose first heartbeat has not arrived yet. */
  readonly unheard: readonly number[];
  /** It must have learned every instance below this (the most any heard member knew of). */
  readonly knownBelow: number;
  /** Its decided prefix: the instances from here to `knownBelow` it still has to learn. */
  readonly decidedBelow: number;
  /** Members that knew of instances it has not learned yet. */
  readonly knownAt: readonly number[];
}

/** A replica's part in the election: the leader, a candidate for it, or neither. */
export type Role = 'follower' | 'candidate' | 'leader';

export interface PaxosStatus {
  role: Role;
  ballot: number;
  leader: number | null;
  /** This replica heard from a majority (itself included) within the election timeout. */
  quorate: boolean;
  /** It still learns before it may promise or vote (PaxosOptions.noDurableVotes). */
  rejoining: boolean;
  /** Waiting casts and 2a found ready only by the periodic recheck (see MultiPaxos). */
  backstopHits: number;
  /**
   * Checks of what a cast lacks, so far: about one per cast received while nothing lacks, and one
   * per cast each time a Req it waited for arrives. The simulator bounds it per committed op.
   */
  lackChecks: number;
  decidedBelow: number;
  truncatedBelow: number;
  /** PaxosOptions.preferredLeader, or null when unset. */
  preferredLeader: number | null;
  /** The ids of the configuration in force at `decidedBelow`. */
  members: number[];
  inFlight: number;
  queued: number;
  pendingCasts: number;
  acceptedHeld: number;
  decidedHeld: number;
}
