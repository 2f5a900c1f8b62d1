import { opKey, type OpId } from '../core/op-id.js';
import type { CastId } from './messages.js';
import type { PaxosContext } from './context.js';
import type { OriginRole, Roles } from './roles.js';

/**
 * The origin's side: this replica's own casts, and the membership changes and reads asked of it,
 * go to the leader it knows of, and again after each retransmit period and leader change, until
 * they are decided (or answered).
 */
export class Origin implements OriginRole {
  /** This replica's casts not delivered yet, by op key. */
  private readonly pending = new Map<string, CastId>();
  private forwardedTo = -1;
  private lastForwardAt = Number.NEGATIVE_INFINITY;
  private readonly ctx: PaxosContext;
  private readonly roles: Roles;

  constructor(ctx: PaxosContext) {
    this.ctx = ctx;
    this.roles = ctx.roles;
  }

  /** CAB-cast of a local strong op id (MultiPaxos.cast). */
  cast(c: CastId): void {
    this.pending.set(opKey(c.id), c);
    const leader = this.roles.election.currentLeader();
    if (leader === this.ctx.self) this.roles.proposer.enqueue([c]);
    else if (leader !== null) this.ctx.send(leader, { type: 'forward', casts: [c] });
  }

  /** The replica delivered `id`: if it was one of its own casts, it is done. */
  delivered(id: OpId): void {
    this.pending.delete(opKey(id));
  }

  forwardPending(): void {
    const ctx = this.ctx;
    const { reads, reconfiguration } = this.roles;
    if (this.pending.size === 0 && !reconfiguration.waiting && !reads.waiting) return;
    const leader = this.roles.election.currentLeader();
    if (leader === null) return;
    if (leader === this.forwardedTo && ctx.now - this.lastForwardAt < ctx.retransmitMs) return;
    this.forwardedTo = leader;
    this.lastForwardAt = ctx.now;
    reconfiguration.forwardTo(leader);
    reads.forwardTo(leader);
    if (this.pending.size === 0) return;
    const casts = [...this.pending.values()].sort((a, b) => a.id.eventNo - b.id.eventNo);
    if (leader === ctx.self) this.roles.proposer.enqueue(casts);
    else ctx.send(leader, { type: 'forward', casts });
  }

  get pendingCasts(): number {
    return this.pending.size;
  }
}
