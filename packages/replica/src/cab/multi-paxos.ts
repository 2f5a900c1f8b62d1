import type { OpId } from '../core/op-id.js';
import {
  majorityOf,
  type ConfigEntry,
  type ReconfigOutcome,
  type ReconfigRequest,
} from './configuration.js';
import type { AcceptorRecord, CastId, PaxosMessage } from './messages.js';
import { PaxosContext } from './context.js';
import { Acceptor } from './acceptor.js';
import { Learner } from './learner.js';
import { Election } from './election.js';
import { LeaderTransfer } from './leader-transfer.js';
import { Rejoin } from './rejoin.js';
import { Proposer } from './proposer.js';
import { WaitingForReqs } from './waiting-for-reqs.js';
import { QuorumReads } from './quorum-reads.js';
import { Reads } from './reads.js';
import { Reconfiguration } from './reconfiguration.js';
import { Origin } from './origin.js';
import type {
  PaxosOptions,
  PaxosOutput,
  PaxosProgress,
  PaxosRecovery,
  PaxosStatus,
} from './paxos-types.js';

export type {
  PaxosOptions,
  PaxosOutput,
  PaxosProgress,
  PaxosRecovery,
  PaxosStatus,
  RejoinProgress,
} from './paxos-types.js';

/**
 * Multi-Paxos on operation ids, the consensus under conditional atomic broadcast (Creek §3.3, §5):
 * indirect consensus agrees on ids only, the Reqs travel by gossip.
 *
 * - Every replica is an acceptor and a learner; one is the distinguished leader (proposer).
 * - Leader election is Ω by heartbeats: with no live leader, the lowest-numbered replica that is
 *   heard from and hears a majority itself becomes candidate; a replica that hears a live leader
 *   defers to it, so one-way link failures do not make two replicas duel. A replica that hears no
 *   majority never campaigns, and a leader that hears no majority stands down (the "check quorum" of
 *   Raft implementations): so a replica that can send but not receive neither deposes a working
 *   leader again and again nor, as the leader, holds the others back with its heartbeats.
 *   Heartbeats say whether their sender hears a majority (`quorate`).
 * - With a preferred leader (PaxosOptions.preferredLeader), a leader hands leadership to that
 *   member once it is healthy (leader-transfer.ts), which runs for leader at once.
 * - Phase 1 runs once per ballot and covers every instance from the candidate's first undecided one;
 *   the new leader re-proposes the highest-ballot value it learns for each open instance and fills
 *   gaps with empty batches.
 * - Phase 2 runs per instance; ids that arrive while `maxInFlight` instances are open wait and go
 *   out together in the next instance (batching), and up to `maxInFlight` instances are open at once
 *   (pipelining). Acceptors send their 2b to every replica, so a learner decides after 3 message
 *   delays from the origin: forward, 2a, 2b. The leader's own accept and vote, and each acceptor's
 *   own vote, take no message (see `send`): with 3 replicas, an origin that is a follower decides
 *   on the frame that brings the leader's 2a and 2b, 2 message delays after its forward.
 * - An acceptor's promise or accept is a `persist` output placed before the messages that depend on
 *   it; the driver must make it durable before acting on anything after it.
 * - Learners that fall behind catch up from the leader; instances every replica has delivered are
 *   truncated.
 * - Each origin's ids are delivered in the origin's order (`prevStrong` chains); the delivery stream
 *   (conditional-delivery.ts) enforces it, since a leader change can decide them out of order.
 */
export class MultiPaxos {
  readonly self: number;
  // Each role is a part in its own file with its own state (roles.ts: what each offers the others),
  // and what they share, `send` included, is context.ts's: this class builds the parts, hands each
  // input to the part it is for, and returns the outputs.
  private readonly ctx: PaxosContext;
  private readonly acceptor: Acceptor;
  private readonly learner: Learner;
  private readonly election: Election;
  private readonly transfer: LeaderTransfer;
  private readonly rejoin: Rejoin;
  private readonly proposer: Proposer;
  private readonly waiting: WaitingForReqs;
  private readonly reads: Reads;
  /** Quorum reads (quorum-reads.ts): every replica answers them; `readsByQuorum` ones ask them. */
  private readonly quorumReads: QuorumReads;
  private readonly readsByQuorum: boolean;
  private readonly reconfiguration: Reconfiguration;
  private readonly origin: Origin;
  /** Counters for benchmarks and status pages. */
  readonly counters = {
    elections: 0,
    handOvers: 0,
    instancesProposed: 0,
    idsProposed: 0,
    decided: 0,
    truncated: 0,
  };

  constructor(options: PaxosOptions, recovery?: PaxosRecovery) {
    this.self = options.self;
    const ctx = new PaxosContext(options, this.counters);
    const roles = ctx.roles;
    this.ctx = ctx;
    roles.acceptor = this.acceptor = new Acceptor(ctx);
    roles.learner = this.learner = new Learner(ctx);
    roles.election = this.election = new Election(ctx);
    roles.rejoin = this.rejoin = new Rejoin(ctx, options.noDurableVotes === true);
    roles.proposer = this.proposer = new Proposer(ctx, options);
    roles.waiting = this.waiting = new WaitingForReqs(ctx, options);
    roles.reads = this.reads = new Reads(ctx, options.unsafeReadWithoutQuorum === true);
    this.quorumReads = new QuorumReads(ctx, options.unsafeQuorumReadSingleAnswer === true);
    this.readsByQuorum = options.quorumReads === true;
    roles.reconfiguration = this.reconfiguration = new Reconfiguration(
      ctx,
      options.unsafeLeaveOnlyInForce === true,
    );
    roles.origin = this.origin = new Origin(ctx);
    this.transfer = new LeaderTransfer(ctx, this.election, options);
    if (recovery !== undefined) this.recover(recovery);
    // A replica outside every configuration it knows (a new one, before it took a checkpoint)
    // only learns: it is nobody's acceptor yet.
  }

  /** The acceptor's durable state comes back; the rest starts where it ends. */
  private recover(recovery: PaxosRecovery): void {
    this.acceptor.recover(recovery);
    this.election.seeBallot(this.acceptor.promised);
    this.ctx.decidedBelow = this.acceptor.truncatedBelow;
    this.learner.setDeliveredBelow(this.acceptor.truncatedBelow);
  }

  // ---------------------------------------------------------------- inputs

  /** CAB-cast of a local strong op id (`prevStrong`: the origin's previous strong op, 0 if none). */
  cast(c: CastId): PaxosOutput[] {
    this.origin.cast(c);
    return this.ctx.flush();
  }

  /**
   * A membership change an operator asked this replica for (cab/configuration.ts): it goes to the
   * leader, again after each retransmit period and leader change, until it is decided
   * (`reconfigOutcome`). Asking again with a nonce already decided does nothing.
   */
  reconfigure(request: ReconfigRequest): PaxosOutput[] {
    this.reconfiguration.request(request);
    return this.ctx.flush();
  }

  /**
   * A strong read-only op to answer without a log write (read-index.ts): the leader is asked for a
   * read index, again after each retransmit period and leader change, until it answers; then a
   * `readIndex` output with `key` says from which delivered instance on the committed state
   * answers it.
   */
  requestRead(key: number): PaxosOutput[] {
    if (this.readsByQuorum) this.quorumReads.request(key);
    else this.reads.request(key);
    return this.ctx.flush();
  }

  /** What became of a membership change decided here; undefined while it is not (or long after). */
  reconfigOutcome(nonce: string): ReconfigOutcome | undefined {
    return this.reconfiguration.outcome(nonce);
  }

  /**
   * The configurations this replica knows: the one in force at its first undecided instance
   * (`current`), the newest (`latest`: in force from its `from` on, maybe not yet), and every
   * entry in between.
   */
  membership(): {
    readonly current: ConfigEntry;
    readonly latest: ConfigEntry;
    readonly entries: readonly ConfigEntry[];
    readonly decidedBelow: number;
    /** The address of a replica in the newest configuration that has it. */
    addressOf(id: number): string | undefined;
  } {
    const history = this.ctx.history;
    return {
      current: this.ctx.current(),
      latest: history.latest(),
      entries: history.all(),
      decidedBelow: this.ctx.decidedBelow,
      addressOf: (id) => history.address(id),
    };
  }

  /**
   * Whom this replica talks to, itself included: every member of a configuration from its first
   * undecided instance on. The same array until that set changes.
   */
  peerIds(): readonly number[] {
    return this.ctx.peers();
  }

  /**
   * This replica was removed, and the cluster needs nothing more from it: a majority of the
   * configuration that retired its id have it in force (they told it so: PaxosMessage `retired`).
   * Until then it goes on as an acceptor, since members that have not reached that configuration
   * may still need its vote for instances before it. It takes part in nothing any more (the host
   * stops it).
   */
  get removed(): boolean {
    return this.reconfiguration.removed;
  }

  /**
   * A membership change this replica knows of removed it (decided here, or a peer said so), in
   * force or not: what its peers compact from then on is no loss of its own.
   */
  get retiring(): boolean {
    return this.reconfiguration.retiring;
  }

  /**
   * A membership change this replica knows of removed it (`retiring`; its disk keeps the change,
   * so this outlives a restart): it takes no client op, since the members ignore it once the
   * removal is in force at theirs, and stays only as an acceptor of the instances before it, until
   * told it is no longer needed.
   */
  get leaving(): boolean {
    return this.reconfiguration.leaving;
  }

  /** It still learns before it may promise, vote or campaign (PaxosOptions.noDurableVotes). */
  get rejoining(): boolean {
    return this.rejoin.rejoining;
  }

  /**
   * Reqs arrived (`arrived`: their ids): waiting casts and 2a that lacked them are checked again,
   * and proposed or accepted once nothing is lacking. Without `arrived`, everything waiting is
   * checked (what a driver that cannot name the arrivals calls).
   */
  reqsArrived(arrived?: readonly OpId[]): PaxosOutput[] {
    this.waiting.reqsArrived(arrived);
    return this.ctx.flush();
  }

  /** The replica delivered `id`: if it was one of its own casts, it is done. */
  delivered(id: OpId): void {
    this.origin.delivered(id);
  }

  /**
   * Everything below `instance` is delivered here, and the commit records saying so are durable
   * (the driver reports it no earlier). Heartbeats carry it; truncation waits for every replica's.
   */
  setDeliveredBelow(instance: number): void {
    this.learner.setDeliveredBelow(instance);
  }

  receive(from: number, msg: PaxosMessage): PaxosOutput[] {
    if (this.rejoin.lost) return [];
    // A replica the configuration in force here removed is told so, and nothing else: what this
    // replica truncated since, without waiting for it, would look like state it lost.
    if (this.reconfiguration.tellIfRetired(from)) return this.ctx.flush();
    this.election.heard(from);
    switch (msg.type) {
      case 'retired':
        this.reconfiguration.onRetired(from, msg);
        break;
      case 'forward':
        this.proposer.onForward(msg.casts);
        break;
      case 'reconfigure':
        this.proposer.onReconfigure(msg.request);
        break;
      case 'readIndex':
        this.reads.onReadIndex(from, msg);
        break;
      case 'readProbe':
        this.reads.onReadProbe(from, msg);
        break;
      case 'readAck':
        this.reads.onReadAck(from, msg);
        break;
      case 'readIndexed':
        this.reads.onReadIndexed(msg);
        break;
      case 'frontierAsk':
        // Answered whether or not this replica reads by quorum itself: a cluster may be mixed
        // while a setting rolls out.
        this.quorumReads.onFrontierAsk(from, msg);
        break;
      case 'frontier':
        this.quorumReads.onFrontier(from, msg);
        break;
      case 'prepare':
        this.acceptor.onPrepare(from, msg.ballot, msg.from);
        break;
      case 'promise':
        this.election.onPromise(from, msg);
        break;
      case 'nack':
        this.election.onNack(msg);
        break;
      case 'accept':
        this.acceptor.onAccept(from, msg.ballot, msg.instance, msg.value);
        break;
      case 'accepted':
        this.learner.onAccepted(from, msg.ballot, msg.instance);
        break;
      case 'heartbeat':
        this.election.onHeartbeat(from, msg);
        break;
      case 'handOver':
        this.transfer.onHandOver(from, msg);
        break;
      case 'catchup':
        this.learner.onCatchup(from, msg.from);
        break;
      case 'decisions':
        this.learner.onDecisions(from, msg);
        break;
    }
    return this.ctx.flush();
  }

  tick(nowMs: number): PaxosOutput[] {
    if (this.rejoin.lost) return [];
    const { ctx, election, proposer } = this;
    ctx.now = Math.max(ctx.now, nowMs);
    election.start();
    if (election.heartbeatIfDue()) this.learner.truncate();
    election.checkQuorum();
    this.rejoin.finish();
    election.elect();
    if (election.role === 'leader' && proposer.reproposalStalled()) election.startElection();
    if (election.role === 'leader') {
      this.transfer.handOverIfDue();
      this.reads.retransmit();
      proposer.retransmit();
      proposer.tryPropose();
    }
    this.quorumReads.tick();
    this.origin.forwardPending();
    this.learner.maybeCatchup();
    this.waiting.wantMissing();
    this.waiting.backstop();
    return ctx.flush();
  }

  /**
   * Gossip would answer `to`'s pull with `gone` (the Reqs were dropped once every replica held
   * them, `to` included), but a membership change this replica knows of removed `to`: its peers
   * compact without a removed replica, so it may never have held them, and would take the answer
   * for state it lost. It is told it was removed instead (`retired` with the truncation point, as
   * `tellPassed`: only that; it goes on as an acceptor until told it is no longer needed), and the
   * caller sends no `gone`. Null when `to` was not removed: the `gone` stands. The simulator: seed
   * 13667 with 5 replicas, where a new member fresh from a state transfer, still catching up on
   * the instances that removed replica 0, answered 0's pull of a Req the others had compacted
   * once the removal was in force, and 0, which had not yet learned of it, halted.
   */
  tellRemovedInsteadOfGone(to: number): PaxosOutput[] | null {
    if (!this.reconfiguration.tellRemovedInsteadOfGone(to)) return null;
    return this.ctx.flush();
  }

  /**
   * The acceptor's durable state, compacted: the records that rebuild it (`recovery`) in place of
   * every acceptor record written so far. Its promise, the truncation point, and the value accepted
   * for each instance not truncated. Every value here was persisted before it was acted on, so the
   * driver may write these and drop the older records (a checkpoint does, atomically).
   */
  durableState(): AcceptorRecord[] {
    return this.acceptor.durableState();
  }

  // ---------------------------------------------------------------- inspection

  /** What it waits for from its peers (PaxosProgress): host/progress.ts explains it. */
  progress(): PaxosProgress {
    const { election } = this;
    const current = this.ctx.current().members;
    const members = current.filter((m) => m.id !== this.ctx.self).map((m) => m.id);
    const heard = election.heardMembers();
    return {
      members,
      member: members.length < current.length,
      majority: majorityOf(current),
      heard,
      notQuorate: heard.filter((id) => election.heartbeatOf(id)?.quorate === false),
      promisedBy: election.promisedBy(),
      rejoin: this.rejoin.progress(),
    };
  }

  status(): PaxosStatus {
    const { election, acceptor, learner, proposer, waiting } = this;
    return {
      role: election.role,
      ballot: election.role === 'leader' ? election.ballot : acceptor.promised,
      leader: election.currentLeader(),
      quorate: election.hearsMajority(),
      rejoining: this.rejoin.rejoining,
      decidedBelow: this.ctx.decidedBelow,
      truncatedBelow: acceptor.truncatedBelow,
      preferredLeader: this.transfer.preferred,
      inFlight: proposer.inFlightCount,
      queued: proposer.queued,
      pendingCasts: this.origin.pendingCasts,
      acceptedHeld: acceptor.acceptedHeld,
      decidedHeld: learner.decidedHeld,
      backstopHits: waiting.backstopHits,
      lackChecks: waiting.lackChecks,
      members: this.ctx.current().members.map((m) => m.id),
    };
  }
}
