import { majorityOf } from './configuration.js';
import { ballotLeader, ballotOf, ballotRound, type PaxosMessage } from './messages.js';
import type { PaxosContext } from './context.js';
import type { Role } from './paxos-types.js';
import type { ElectionRole, PeerHeartbeat, PromiseMsg, Roles } from './roles.js';

/**
 * Leader election, Ω by heartbeats, and phase 1: every replica announces itself and its progress
 * each heartbeat period; with no live leader, the lowest-numbered member that is heard from and
 * hears a majority itself runs, with a ballot above any it saw, and leads once a majority of the
 * configuration promised it. A higher ballot seen anywhere makes a candidate or leader stand down.
 */
export class Election implements ElectionRole {
  role: Role = 'follower';
  ballot = 0;
  private maxSeenBallot = 0;
  private readonly promises = new Map<number, PromiseMsg>();
  private prepareFrom = 0;
  private electionAt = Number.NEGATIVE_INFINITY;
  /** When this leader last asked members it has no promise from for one (a new configuration's). */
  private lastReprepareAt = Number.NEGATIVE_INFINITY;
  private readonly lastHeard = new Map<number, number>();
  /** When this leader first found it heard no majority (null: it does). */
  private quorumLostAt: number | null = null;
  private leaderHint: { id: number; ballot: number; at: number } | null = null;
  private lastHeartbeatAt = Number.NEGATIVE_INFINITY;
  private startedAt: number | null = null;
  /** What each peer's last heartbeat said (PeerHeartbeat): catch-up, truncation, Ω and no-op fill. */
  private readonly peerHeartbeats = new Map<number, PeerHeartbeat>();
  private readonly ctx: PaxosContext;
  private readonly roles: Roles;

  constructor(ctx: PaxosContext) {
    this.ctx = ctx;
    this.roles = ctx.roles;
  }

  /** A message from `from` arrived. */
  heard(from: number): void {
    this.lastHeard.set(from, this.ctx.now);
  }

  /**
   * A replica that just started listens for one election timeout before it may run: otherwise
   * every replica of a starting cluster believes it is the lowest one alive.
   */
  start(): void {
    if (this.startedAt === null) {
      this.startedAt = this.ctx.now;
      this.electionAt = this.ctx.now;
    }
  }

  /** Sends the heartbeat when one is due; true when it did. */
  heartbeatIfDue(): boolean {
    const ctx = this.ctx;
    const { acceptor, learner, rejoin } = this.roles;
    if (ctx.now - this.lastHeartbeatAt < ctx.heartbeatMs) return false;
    this.lastHeartbeatAt = ctx.now;
    const hb: PaxosMessage = {
      type: 'heartbeat',
      ballot: this.role === 'leader' ? this.ballot : 0,
      leading: this.role === 'leader',
      // A replica still rejoining may not lead, nor one that knows it was removed: Ω must pass
      // it over.
      quorate: this.hearsMajority() && !rejoin.rejoining && !this.roles.reconfiguration.retired,
      decidedBelow: ctx.decidedBelow,
      // While rejoining, only what survives a crash here as Paxos state (its truncation): what it
      // delivered meanwhile is on its disk as commits, which a restart cannot map to instances,
      // so peers must not truncate it yet, or a crash before the rejoin ends would look like lost
      // state (`lostState`) at the next start.
      deliveredBelow: rejoin.rejoining ? acceptor.truncatedBelow : learner.localDeliveredBelow,
      promised: acceptor.promised,
      knownBelow: learner.knownBelow(),
    };
    for (const r of ctx.peers()) if (r !== ctx.self) ctx.send(r, hb);
    return true;
  }

  /** A leader or candidate that may not lead any more stands down. */
  checkQuorum(): void {
    const ctx = this.ctx;
    // A leader outside the configuration in force at its decided prefix (it was removed) leads no
    // more; the members elect one of their own.
    if (this.role !== 'follower' && !ctx.history.isMember(ctx.decidedBelow, ctx.self))
      this.stepDown();
    // Check quorum: a leader that no longer hears a majority cannot order anything; standing down
    // stops its heartbeats from holding the others back (Ω below defers to a live leader). Only
    // once it has failed for a heartbeat period: a process that was stalled itself (GC, a busy
    // core) ticks before it reads the heartbeats waiting in its sockets, and must not stand down
    // for that.
    if (this.role === 'leader' && !this.hearsMajority()) {
      this.quorumLostAt ??= ctx.now;
      if (ctx.now - this.quorumLostAt >= ctx.heartbeatMs) this.stepDown();
    } else this.quorumLostAt = null;
  }

  elect(): void {
    const ctx = this.ctx;
    const now = ctx.now;
    const leaderAlive =
      this.leaderHint !== null &&
      this.leaderHint.id !== ctx.self &&
      now - this.leaderHint.at <= ctx.electionTimeoutMs;
    if (this.role === 'leader' || this.roles.rejoin.rejoining) return;
    // Told it was removed: it may not know the instances since (its peers truncated them), and
    // leads none (the simulator: seed 220 with 3 replicas, faults reconfig, where the removed
    // replica, lowest of those alive, ran for leader forever and its peers waited for it).
    if (this.roles.reconfiguration.retired) {
      if (this.role === 'candidate') this.stepDown();
      return;
    }
    if (this.role === 'candidate') {
      // A candidate that stopped hearing a majority gives up rather than retry with ever higher
      // ballots that only the others hear (see below).
      if ((leaderAlive && this.leaderHint!.ballot > this.ballot) || !this.hearsMajority())
        this.stepDown();
      else if (now - this.electionAt >= ctx.retransmitMs * 2) this.askAgain();
      return;
    }
    if (leaderAlive || now - this.electionAt < ctx.electionTimeoutMs) return;
    // A replica that hears no majority cannot win an election (it would never hear the promises),
    // and its prepares would only depose a leader that works: with one-way links, a replica the
    // others hear but that hears nobody ran an election every few retransmit periods and made the
    // leader step down each time.
    if (!this.hearsMajority()) return;
    // Ω: the lowest-numbered member we hear from that hears a majority itself leads.
    const members = ctx.current().members;
    const lowestAlive = members.find(
      (m) =>
        m.id === ctx.self ||
        (this.heardRecently(m.id) && this.peerHeartbeats.get(m.id)?.quorate !== false),
    );
    if (lowestAlive?.id === ctx.self) this.startElection();
  }

  /** Replica `r` was heard from within the election timeout. */
  heardRecently(r: number): boolean {
    return (
      this.ctx.now - (this.lastHeard.get(r) ?? Number.NEGATIVE_INFINITY) <=
      this.ctx.electionTimeoutMs
    );
  }

  /**
   * This replica heard from a majority of the configuration in force (itself included, if a
   * member) within the election timeout.
   */
  hearsMajority(): boolean {
    const ctx = this.ctx;
    const members = ctx.current().members;
    let n = 0;
    for (const m of members) if (m.id === ctx.self || this.heardRecently(m.id)) n++;
    return n >= (ctx.unsafeGenesisQuorum ? ctx.genesisMajority : majorityOf(members));
  }

  /** The highest ballot this replica saw anywhere. */
  get highestSeenBallot(): number {
    return this.maxSeenBallot;
  }

  startElection(): void {
    const ctx = this.ctx;
    ctx.counters.elections++;
    this.role = 'candidate';
    this.ballot = ballotOf(ballotRound(this.maxSeenBallot) + 1, ctx.self);
    this.maxSeenBallot = this.ballot;
    // Promise our own ballot durably before anyone hears of it: a leader that restarts must never
    // run with the same ballot again (two different accepts at one ballot could both be chosen).
    this.roles.acceptor.promise(this.ballot);
    this.promises.clear();
    this.prepareFrom = ctx.decidedBelow;
    this.electionAt = ctx.now;
    ctx.broadcast({ type: 'prepare', ballot: this.ballot, from: this.prepareFrom });
  }

  /**
   * No majority of promises yet: a prepare or a promise may have been lost, so the candidate asks
   * again at the same ballot (an acceptor promises a ballot it already promised again). Asking
   * with a new ballot each time livelocked whenever a round trip took longer than two retransmit
   * periods: every promise arrived for a ballot the candidate had already left (the simulator,
   * seed 1878 with 5 replicas: no leader for 360 ms at 10–50 ms delays). A higher ballot elsewhere
   * still ends the candidacy (a nack, or a leader's heartbeat).
   */
  private askAgain(): void {
    this.electionAt = this.ctx.now;
    this.ctx.broadcast({ type: 'prepare', ballot: this.ballot, from: this.prepareFrom });
  }

  onPromise(from: number, msg: PromiseMsg): void {
    const { learner, proposer } = this.roles;
    learner.skipTo(msg.truncatedBelow, from);
    for (const d of msg.decided) learner.decide(d.instance, d.value);
    if (this.role === 'follower' || msg.ballot !== this.ballot) return;
    this.promises.set(from, msg);
    if (this.role === 'leader') {
      // A late promise (a member of a configuration this leader reached since): what it accepted
      // counts for the instances not proposed yet.
      proposer.mergePromise(msg);
      proposer.tryPropose();
    } else if (
      this.ctx.isQuorum(Math.max(this.prepareFrom, this.ctx.decidedBelow), this.promises.keys())
    )
      this.becomeLeader();
  }

  /** A majority of this ballot's promises for instance `j`'s configuration arrived. */
  promisedByQuorumOf(j: number): boolean {
    return this.ctx.isQuorum(j, this.promises.keys());
  }

  /**
   * This leader lacks promises from a majority of instance `j`'s configuration (members added
   * since its election): it asks those it has none from, once per retransmit period.
   */
  askForPromises(j: number): void {
    const ctx = this.ctx;
    if (ctx.now - this.lastReprepareAt < ctx.retransmitMs) return;
    this.lastReprepareAt = ctx.now;
    for (const m of ctx.history.at(j).members)
      if (!this.promises.has(m.id))
        ctx.send(m.id, { type: 'prepare', ballot: this.ballot, from: this.prepareFrom });
  }

  private becomeLeader(): void {
    this.role = 'leader';
    this.leaderHint = { id: this.ctx.self, ballot: this.ballot, at: this.ctx.now };
    this.roles.waiting.dropCasts();
    this.roles.reads.dropRounds();
    this.roles.proposer.lead(this.prepareFrom, this.promises.values());
    // Announce at once, so origins re-forward their pending ids here.
    this.lastHeartbeatAt = Number.NEGATIVE_INFINITY;
  }

  stepDown(): void {
    this.role = 'follower';
    this.roles.proposer.stop();
    this.roles.waiting.dropCasts();
    this.promises.clear();
    this.roles.reads.dropRounds();
  }

  /** A higher ballot than its own was promised here: a candidate or leader stands down. */
  standDownFor(ballot: number): void {
    if (ballot > this.ballot && this.role !== 'follower') this.deposed();
  }

  onNack(msg: Extract<PaxosMessage, { type: 'nack' }>): void {
    this.seeBallot(msg.promised);
    if (msg.ballot === this.ballot && this.role !== 'follower' && msg.promised > this.ballot)
      this.deposed();
  }

  /**
   * This replica just promised another's ballot: a candidate's election is under way, and this
   * replica gives it an election timeout to win before it may run itself, as a Raft follower resets
   * its election timer when it grants a vote. Otherwise a follower that knows no live leader may
   * run as soon as it promised, and depose the candidate just before it wins (the simulator: seed
   * 147 with 3 replicas, at 10 % loss, went 0 → 2 → 0 → 2 as a hand-over's candidate took longer
   * than one election timeout to hear a majority's promises).
   */
  promisedTo(ballot: number): void {
    if (ballotLeader(ballot) !== this.ctx.self) this.holdOff();
  }

  /**
   * It may not run for an election timeout from now, and one more round of a candidate's
   * prepares (a candidate asks again every two retransmit periods): a candidate whose first
   * prepares or promises were lost still wins when it asks again (the simulator: seed 147 with 3
   * replicas, where the hold-off and the candidate's second round ended together, and the
   * candidate lost to the replica it had deposed, twice).
   */
  private holdOff(): void {
    if (this.ctx.holdOffWhenDeposed) this.electionAt = this.ctx.now + 2 * this.ctx.retransmitMs;
  }

  /**
   * A higher ballot deposed this leader or candidate: it stands down, and runs again only after an
   * election timeout, as Raft's deposed leader resets its election timer. Otherwise, as the
   * lowest-numbered member heard, Ω would pick it again at once (it knows no live leader but
   * itself) and it would depose the one that deposed it: the leader a hand-over chose
   * (leader-transfer.ts), or a member back from a partition that ran before it heard the others
   * (found by the simulator's leadership checker: seed 48 with 3 replicas went 0 → 1 → 0 → 1
   * right after a partition healed).
   */
  private deposed(): void {
    this.stepDown();
    this.holdOff();
  }

  onHeartbeat(from: number, msg: Extract<PaxosMessage, { type: 'heartbeat' }>): void {
    const ctx = this.ctx;
    this.roles.rejoin.heard(from, msg);
    this.peerHeartbeats.set(from, {
      quorate: msg.quorate ?? true,
      decidedBelow: msg.decidedBelow,
      deliveredBelow: msg.deliveredBelow,
      knownBelow: msg.knownBelow,
      promised: msg.promised,
    });
    // A replica outside the configuration (removed, and not aware of it yet) is nobody's leader.
    if (!msg.leading || !ctx.history.isMember(ctx.decidedBelow, from)) return;
    this.seeBallot(msg.ballot);
    this.standDownFor(msg.ballot);
    if (
      this.leaderHint === null ||
      msg.ballot >= this.leaderHint.ballot ||
      ctx.now - this.leaderHint.at > ctx.electionTimeoutMs
    ) {
      this.leaderHint = { id: from, ballot: msg.ballot, at: ctx.now };
    }
    this.roles.origin.forwardPending();
    this.roles.learner.maybeCatchup();
  }

  /** The other members of the configuration in force heard within the election timeout. */
  heardMembers(): number[] {
    const self = this.ctx.self;
    return this.ctx
      .current()
      .members.filter((m) => m.id !== self && this.heardRecently(m.id))
      .map((m) => m.id);
  }

  /** As a candidate: the members that promised its ballot; null when it is no candidate. */
  promisedBy(): number[] | null {
    return this.role === 'candidate' ? [...this.promises.keys()].sort((a, b) => a - b) : null;
  }

  heartbeatOf(id: number): PeerHeartbeat | undefined {
    return this.peerHeartbeats.get(id);
  }

  /** The first peer heard recently whose decided prefix is the longest, beyond `below`; or null. */
  mostAdvancedPeer(below: number): number | null {
    let target: number | null = null;
    let best = below;
    for (const [r, { decidedBelow }] of this.peerHeartbeats) {
      if (decidedBelow > best && this.heardRecently(r)) {
        best = decidedBelow;
        target = r;
      }
    }
    return target;
  }

  currentLeader(): number | null {
    const ctx = this.ctx;
    if (this.role === 'leader') return ctx.self;
    const h = this.leaderHint;
    if (h !== null && h.id !== ctx.self && ctx.now - h.at <= ctx.electionTimeoutMs) return h.id;
    return null;
  }

  seeBallot(b: number): void {
    if (b > this.maxSeenBallot) this.maxSeenBallot = b;
  }
}
