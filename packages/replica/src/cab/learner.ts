import { CONFIG_DELAY } from './configuration.js';
import type { Batch, PaxosMessage } from './messages.js';
import type { PaxosContext } from './context.js';
import type { LearnerRole, Roles } from './roles.js';

const CATCHUP_LIMIT = 512;
/**
 * Most op ids one `decisions` answer carries (about 50 bytes each as JSON): 512 instances of
 * full batches made frames of megabytes, over the protocol's 1 MiB frame limit, which the learner
 * dropped unread and asked again. The learner asks again from where the answer ended.
 */
const CATCHUP_IDS = 8192;

/**
 * The learner, every replica's: it counts the 2b (acceptors send theirs to every replica), learns
 * decided values in any order and passes them in instance order (the decided prefix), catches up
 * from a replica that is ahead when it falls behind, and truncates the instances every replica has
 * delivered.
 */
export class Learner implements LearnerRole {
  private readonly decided = new Map<number, Batch>();
  private readonly votes = new Map<number, Map<number, Set<number>>>();
  private lastCatchupAt = Number.NEGATIVE_INFINITY;
  localDeliveredBelow = 0;
  private readonly ctx: PaxosContext;
  private readonly roles: Roles;

  constructor(ctx: PaxosContext) {
    this.ctx = ctx;
    this.roles = ctx.roles;
  }

  onAccepted(from: number, ballot: number, instance: number): void {
    if (this.isDecided(instance)) return;
    let byBallot = this.votes.get(instance);
    if (byBallot === undefined) {
      byBallot = new Map();
      this.votes.set(instance, byBallot);
    }
    let voters = byBallot.get(ballot);
    if (voters === undefined) {
      voters = new Set();
      byBallot.set(ballot, voters);
    }
    voters.add(from);
    // Counted against the instance's own configuration, once this replica knows it (it decided
    // everything CONFIG_DELAY before): until then the votes wait here (`recheckVotes`).
    if (!this.ctx.configKnown(instance) || !this.ctx.isQuorum(instance, voters)) return;
    this.chosen(instance, ballot);
  }

  /** A quorum of `instance`'s configuration accepted `ballot`: learn its value. */
  private chosen(instance: number, ballot: number): void {
    // Chosen at `ballot`. Any value this acceptor accepted at a ballot ≥ it is the chosen one
    // (Paxos: every proposal above a chosen ballot carries the chosen value).
    const mine = this.roles.acceptor.acceptedAt(instance);
    if (mine !== undefined && mine.ballot >= ballot) this.decide(instance, mine.value);
    // Otherwise the 2a never reached us: maybeCatchup asks the leader for the value.
  }

  decide(instance: number, value: Batch): void {
    if (this.isDecided(instance)) return;
    this.decided.set(instance, value);
    this.votes.delete(instance);
    this.roles.proposer.decided(instance, value);
    this.ctx.counters.decided++;
    const before = this.ctx.decidedBelow;
    this.passDecided();
    this.ctx.emit({ type: 'decide', instance, value });
    // The configurations of CONFIG_DELAY more instances are known now: votes that waited count.
    if (this.ctx.decidedBelow > before)
      this.recheckVotes(before + CONFIG_DELAY, this.ctx.decidedBelow + CONFIG_DELAY);
    if (this.roles.election.role === 'leader') this.roles.proposer.tryPropose();
  }

  /**
   * Decided instances next in instance order are passed, the decided prefix advancing over them;
   * their membership changes are applied (Reconfiguration.applyConfigOf).
   */
  private passDecided(): void {
    const ctx = this.ctx;
    while (this.decided.has(ctx.decidedBelow)) {
      this.roles.reconfiguration.applyConfigOf(
        ctx.decidedBelow,
        this.decided.get(ctx.decidedBelow) ?? [],
      );
      ctx.decidedBelow++;
    }
  }

  /** Votes for instances in [from, to) that waited to learn their configuration, counted now. */
  private recheckVotes(from: number, to: number): void {
    for (const [instance, byBallot] of [...this.votes]) {
      if (instance < from || instance >= to || this.isDecided(instance)) continue;
      for (const [ballot, voters] of byBallot)
        if (this.ctx.isQuorum(instance, voters)) {
          this.chosen(instance, ballot);
          break;
        }
    }
  }

  /** A `decisions` answer to this replica's catch-up. */
  onDecisions(from: number, msg: Extract<PaxosMessage, { type: 'decisions' }>): void {
    this.skipTo(msg.truncatedBelow, from);
    for (const e of msg.entries) this.decide(e.instance, e.value);
  }

  /**
   * Instances below `below` were delivered by every replica, this one included (it reported so,
   * durably, before anyone truncated), and are truncated elsewhere: jump past them.
   */
  skipTo(below: number, from: number): void {
    const ctx = this.ctx;
    if (below <= ctx.decidedBelow) return;
    // A removed replica cannot learn what its peers truncated, and need not: it stays an acceptor
    // for the instances before its removal, which others may still have to decide again, until
    // the members tell it it is no longer needed (`removed`). A jump past what it delivered is not
    // state it lost (the simulator: seeds 1194, 1383 and 2123 with 3 replicas, once peers told
    // removed replicas only from their truncation point).
    if (below > this.localDeliveredBelow && this.roles.reconfiguration.noteOwnRemoval()) return;
    if (this.roles.rejoin.noDurableVotes && below > this.localDeliveredBelow) {
      // Truncated everywhere means delivered everywhere, by this replica too once: it lost it.
      this.roles.rejoin.lostState(
        from,
        `a peer truncated its Paxos log below instance ${below}, which every replica had ` +
          `delivered, while this replica delivered only the instances below ` +
          `${this.localDeliveredBelow}: it lost its state, and the cluster no longer has it`,
      );
      return;
    }
    for (const i of [...this.decided.keys()]) if (i < below) this.decided.delete(i);
    for (const i of [...this.votes.keys()]) if (i < below) this.votes.delete(i);
    ctx.decidedBelow = below;
    // Decided instances past the jump are passed in order, their membership changes applied.
    this.passDecided();
    this.roles.proposer.skipTo(below);
    // Truncated here too: this replica never has to serve what it skipped.
    this.roles.acceptor.skipTo(below);
    ctx.emit({ type: 'skip', below });
  }

  onCatchup(from: number, fromInstance: number): void {
    if (this.roles.reconfiguration.tellPassed(from, fromInstance)) return;
    const truncatedBelow = this.roles.acceptor.truncatedBelow;
    const decidedBelow = this.ctx.decidedBelow;
    const entries: { instance: number; value: Batch }[] = [];
    let ids = 0;
    const full = (): boolean => entries.length >= CATCHUP_LIMIT || ids >= CATCHUP_IDS;
    for (let i = Math.max(fromInstance, truncatedBelow); i < decidedBelow && !full(); i++) {
      const value = this.decided.get(i)!;
      entries.push({ instance: i, value });
      ids += value.length;
    }
    // Decided instances past a gap help too (a learner may miss only some).
    for (const [instance, value] of this.decided) {
      if (full()) break;
      if (instance >= decidedBelow && instance >= fromInstance) {
        entries.push({ instance, value });
        ids += value.length;
      }
    }
    if (entries.length > 0 || truncatedBelow > fromInstance) {
      this.ctx.send(from, { type: 'decisions', entries, truncatedBelow });
    }
  }

  /** A learner behind the most advanced replica it hears from, or missing a chosen value, asks it. */
  maybeCatchup(): void {
    const ctx = this.ctx;
    if (ctx.now - this.lastCatchupAt < ctx.retransmitMs) return;
    let target = this.roles.election.mostAdvancedPeer(ctx.decidedBelow);
    if (target === null) {
      let stuck = false;
      for (const [instance, byBallot] of this.votes) {
        if (!ctx.configKnown(instance)) continue;
        for (const voters of byBallot.values()) if (ctx.isQuorum(instance, voters)) stuck = true;
      }
      const leader = this.roles.election.currentLeader();
      if (stuck && leader !== null && leader !== ctx.self) target = leader;
    }
    if (target === null) return;
    this.lastCatchupAt = ctx.now;
    ctx.send(target, { type: 'catchup', from: ctx.decidedBelow });
  }

  /** Drops instances every replica has delivered: nobody will ask for them again. */
  truncate(): void {
    const ctx = this.ctx;
    const acceptor = this.roles.acceptor;
    // Members only, those of the configuration in force and those about to join (a new one may
    // already have taken a checkpoint, and must find what follows it): a removed replica holds
    // nothing back.
    let below = this.localDeliveredBelow;
    for (const id of ctx.peers()) {
      if (id === ctx.self) continue;
      below = Math.min(below, this.roles.election.heartbeatOf(id)?.deliveredBelow ?? 0);
    }
    below = Math.min(below, ctx.decidedBelow);
    if (below <= acceptor.truncatedBelow) return;
    for (let i = acceptor.truncatedBelow; i < below; i++) {
      this.decided.delete(i);
      this.votes.delete(i);
    }
    acceptor.truncate(below);
  }

  /**
   * Everything below `instance` is delivered here, and the commit records saying so are durable
   * (the driver reports it no earlier). Heartbeats carry it; truncation waits for every replica's.
   */
  setDeliveredBelow(instance: number): void {
    this.localDeliveredBelow = Math.max(this.localDeliveredBelow, instance);
  }

  /** `instance` is decided here, or lies below what is (decided and maybe truncated). */
  isDecided(instance: number): boolean {
    return instance < this.ctx.decidedBelow || this.decided.has(instance);
  }

  /** This replica holds `instance`'s decided value (it is not truncated, nor skipped). */
  holdsDecision(instance: number): boolean {
    return this.decided.has(instance);
  }

  /** The decided values this replica holds, from `instance` on. */
  decisionsFrom(instance: number): { instance: number; value: Batch }[] {
    const decided: { instance: number; value: Batch }[] = [];
    for (const [i, value] of this.decided) if (i >= instance) decided.push({ instance: i, value });
    return decided;
  }

  /** The highest instance this replica holds a decided value for (-1 when none). */
  highestDecided(): number {
    let top = -1;
    for (const i of this.decided.keys()) top = Math.max(top, i);
    return top;
  }

  /** One past the highest instance this replica accepted a value for or knows decided. */
  knownBelow(): number {
    let below = this.roles.acceptor.acceptedBelow(this.ctx.decidedBelow);
    for (const i of this.decided.keys()) if (i >= below) below = i + 1;
    return below;
  }

  get decidedHeld(): number {
    return this.decided.size;
  }
}
