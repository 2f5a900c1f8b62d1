import {
  CONFIG_DELAY,
  majorityOf,
  type ConfigEntry,
  type ReconfigOutcome,
  type ReconfigRequest,
} from './configuration.js';
import { isCast, type Batch, type PaxosMessage } from './messages.js';
import type { PaxosContext } from './context.js';
import type { ReconfigurationRole, Roles } from './roles.js';

/** Decided membership changes whose outcome a replica remembers (`reconfigOutcome`). */
const OUTCOMES_KEPT = 64;

/**
 * Membership changes (cab/configuration.ts) as this replica sees them: those asked for here, until
 * decided, and what became of them; each decided one applied in instance order; and its own
 * removal: a replica removed learns so from the members (`retired`), stays an acceptor of the
 * instances before its removal until a majority of the configuration that removed it no longer
 * needs it, then takes part in nothing.
 */
export class Reconfiguration implements ReconfigurationRole {
  /** Membership changes asked for here and not decided yet, by nonce: forwarded like casts. */
  private readonly pendingReconfigs = new Map<string, ReconfigRequest>();
  /** What became of the last decided membership changes, by nonce (the last OUTCOMES_KEPT). */
  private readonly outcomes = new Map<string, ReconfigOutcome>();
  /** The configuration that retired this replica, as a peer that has it in force told it. */
  private retiredBy: ConfigEntry | null = null;
  /** The members of `retiredBy` that told this replica it is retired. */
  private readonly toldByMembers = new Set<number>();
  /** Per removed replica that still speaks, when it was last told so. */
  private readonly toldRetired = new Map<number, number>();
  private readonly ctx: PaxosContext;
  private readonly roles: Roles;
  private readonly unsafeLeaveOnlyInForce: boolean;

  constructor(ctx: PaxosContext, unsafeLeaveOnlyInForce = false) {
    this.ctx = ctx;
    this.roles = ctx.roles;
    this.unsafeLeaveOnlyInForce = unsafeLeaveOnlyInForce;
  }

  /** A membership change asked of this replica (MultiPaxos.reconfigure). */
  request(request: ReconfigRequest): void {
    if (!this.outcomes.has(request.nonce) && !this.pendingReconfigs.has(request.nonce)) {
      this.pendingReconfigs.set(request.nonce, request);
      const leader = this.roles.election.currentLeader();
      if (leader === this.ctx.self) this.roles.proposer.enqueueReconfig(request);
      else if (leader !== null) this.ctx.send(leader, { type: 'reconfigure', request });
    }
  }

  /** Membership changes asked for here still wait to be decided. */
  get waiting(): boolean {
    return this.pendingReconfigs.size > 0;
  }

  /** They are sent to `leader` again (the origin's forwarding). */
  forwardTo(leader: number): void {
    for (const request of this.pendingReconfigs.values())
      if (leader === this.ctx.self) this.roles.proposer.enqueueReconfig(request);
      else this.ctx.send(leader, { type: 'reconfigure', request });
  }

  outcome(nonce: string): ReconfigOutcome | undefined {
    return this.outcomes.get(nonce);
  }

  hasOutcome(nonce: string): boolean {
    return this.outcomes.has(nonce);
  }

  /**
   * Instance `instance`, decided, is next in instance order: its membership change, if it holds
   * one, takes effect CONFIG_DELAY instances on (durably: the record outlives the instance's
   * truncation), or changes nothing and says why.
   */
  applyConfigOf(instance: number, value: Batch): void {
    const history = this.ctx.history;
    for (const e of value) {
      if (isCast(e)) continue;
      // A request decided twice (two leaders proposed it) changes nothing the second time (the
      // member is there already, or gone), and its first outcome is the one that counts.
      let outcome = history.apply(instance, e.reconfig);
      if (outcome.applied)
        this.ctx.emit({ type: 'persist', record: { kind: 'config', entry: outcome.entry } });
      else {
        // Decided before, and applied: this replica restarted since and knows it only from the
        // configuration the first decision made (its nonce), which is the outcome to report
        // (the simulator: seed 51467 with 3 replicas, where the operator was told an addition in
        // force everywhere was not applied, "a member already", and never started the replica).
        const earlier = history.madeBy(e.reconfig.nonce);
        if (earlier !== undefined)
          outcome = { applied: true, entry: earlier, decidedAt: earlier.from - CONFIG_DELAY };
      }
      this.pendingReconfigs.delete(e.reconfig.nonce);
      if (this.outcomes.has(e.reconfig.nonce)) continue;
      this.outcomes.set(e.reconfig.nonce, outcome);
      if (this.outcomes.size > OUTCOMES_KEPT)
        this.outcomes.delete(this.outcomes.keys().next().value!);
      this.ctx.emit({ type: 'config', outcome });
    }
  }

  /**
   * This replica was removed, and the cluster needs nothing more from it: a majority of the
   * configuration that retired its id have it in force (they told it so: PaxosMessage `retired`).
   */
  get removed(): boolean {
    const entry = this.retiredBy;
    if (entry === null) return false;
    let told = 0;
    for (const m of entry.members) if (this.toldByMembers.has(m.id)) told++;
    return told >= majorityOf(entry.members);
  }

  /** A membership change this replica knows of removed it (decided here, or a peer said so). */
  get retiring(): boolean {
    return this.retiredBy !== null || this.ctx.history.removalOf(this.ctx.self) !== undefined;
  }

  /**
   * It takes no client op any more: a membership change this replica knows of removed it
   * (`retiring`), in force at its decided prefix or not yet. Not "in force" alone: the decided
   * prefix is not durable, and a removed replica that restarts learns it again only from the
   * members, which ignore it once the removal is in force at theirs (`tellIfRetired`); it would
   * take client ops again whose strong ones only adoption could order, one at a time (the
   * simulator: seed 54 with 3 replicas on `--network mix`, where a restarted removed replica took
   * some 200 ops and the members were still adopting them 20 s after the faults ended). The
   * configuration that removed it is on its disk (or a peer told it), so this holds across a
   * restart. With `unsafeLeaveOnlyInForce` (a planted bug), only while in force at its decided
   * prefix.
   */
  get leaving(): boolean {
    if (!this.unsafeLeaveOnlyInForce) return this.retiring;
    const current = this.ctx.current();
    return (
      current.retired.includes(this.ctx.self) &&
      !current.members.some((m) => m.id === this.ctx.self)
    );
  }

  /** A peer told this replica it was removed (`retiredBy`): it may neither lead nor run. */
  get retired(): boolean {
    return this.retiredBy !== null;
  }

  /**
   * A membership change this replica knows of removed it (a peer told it, or it decided it): true,
   * and it is remembered as `retiredBy`.
   */
  noteOwnRemoval(): boolean {
    const r = this.retiredBy ?? this.ctx.history.removalOf(this.ctx.self);
    if (r !== undefined) {
      this.retiredBy ??= r;
      return true;
    }
    return false;
  }

  onRetired(from: number, msg: Extract<PaxosMessage, { type: 'retired' }>): void {
    // Peers are authenticated, and a removed id never comes back (cab/configuration.ts).
    if (msg.entry.retired.includes(this.ctx.self)) {
      if (this.retiredBy === null || msg.entry.from > this.retiredBy.from) {
        this.retiredBy = msg.entry;
        this.toldByMembers.clear();
      }
      // Told it is no longer needed; or, with `truncatedBelow` (`tellPassed`), only that it is
      // removed and cannot learn what it asked for: it goes on as an acceptor until told.
      if (msg.entry.from === this.retiredBy.from && msg.truncatedBelow === undefined)
        this.toldByMembers.add(from);
    }
  }

  /**
   * `from` was removed from the cluster and still speaks: nobody else talks to it, so it would
   * never learn why. It is told the configuration that removed it, at most once an election
   * timeout.
   */
  tellIfRetired(from: number): boolean {
    const ctx = this.ctx;
    // Retired in the configuration in force here: a removal decided but not in force yet still
    // needs the replica's votes for the instances before it.
    const current = ctx.current();
    if (!current.retired.includes(from) || !current.members.some((m) => m.id === ctx.self))
      return false;
    // Told only from what survives a crash here as Paxos state: the configuration in force at the
    // truncation point. A replica that restarts learns its instances again from there, with the
    // quorums of their configurations, which may need the removed replica's vote (the simulator:
    // seed 2118, where survivors told from what they had decided; then seeds 5438, 19972 and
    // others with 3 replicas, where they told from what they had delivered, which a restart does
    // not map back to instances). Had it told, the removed replica would have stopped for good.
    if (
      this.roles.rejoin.rejoining ||
      !ctx.history.at(this.roles.acceptor.truncatedBelow).retired.includes(from)
    )
      return true;
    const last = this.toldRetired.get(from) ?? Number.NEGATIVE_INFINITY;
    if (ctx.now - last >= ctx.electionTimeoutMs) {
      this.toldRetired.set(from, ctx.now);
      ctx.send(from, { type: 'retired', entry: current });
    }
    return true;
  }

  /**
   * `from` asks for instances from `fromInstance` on, and this replica truncated some of them: were
   * `from` removed by a change this replica knows of, it is told so, with the truncation point,
   * instead of sent a jump past what it never delivered, which would look to it like state it lost
   * (it may not have learned its removal yet; the simulator: seeds 1383 and 11924 with 3
   * replicas). It goes on as an acceptor (`skipTo`): this replica may itself need its vote again.
   */
  tellPassed(from: number, fromInstance: number): boolean {
    const truncatedBelow = this.roles.acceptor.truncatedBelow;
    if (truncatedBelow <= fromInstance) return false;
    const entry = this.ctx.history.removalOf(from);
    if (entry === undefined) return false;
    this.ctx.send(from, { type: 'retired', entry, truncatedBelow });
    return true;
  }

  /**
   * `to` would be answered `gone` by gossip: when a change this replica knows of removed it, it is
   * told so instead (MultiPaxos.tellRemovedInsteadOfGone); false when `to` was not removed.
   */
  tellRemovedInsteadOfGone(to: number): boolean {
    const entry = this.ctx.history.removalOf(to);
    if (entry === undefined) return false;
    this.ctx.send(to, {
      type: 'retired',
      entry,
      truncatedBelow: this.roles.acceptor.truncatedBelow,
    });
    return true;
  }
}
