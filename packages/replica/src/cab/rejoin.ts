import type { PaxosMessage } from './messages.js';
import type { PaxosContext } from './context.js';
import type { RejoinProgress } from './paxos-types.js';
import type { RejoinRole, Roles } from './roles.js';

/**
 * A replica that starts without durable votes (PaxosOptions.noDurableVotes) rejoins: it only
 * learns until it has heard every peer, promised the highest ballot any of them promised, and
 * learned every instance any of them knew of. And when a peer truncated instances it never
 * delivered, it lost state that no replica's log has any more: it reports it and stops.
 */
export class Rejoin implements RejoinRole {
  readonly noDurableVotes: boolean;
  /**
   * While it may not yet promise or vote (`noDurableVotes`): per peer, the first heartbeat heard
   * from it, which tells what it had promised and the instances it knew of. Null once this replica
   * takes part (or when it never had to rejoin).
   */
  private heardWhileRejoining: Map<number, { promised: number; knownBelow: number }> | null = null;
  /** It rejoined (or never had to): its promise record stays on disk, whatever its ballot. */
  rejoined = false;
  /** `lostState` was reported: this replica does nothing more. */
  lost = false;
  private readonly ctx: PaxosContext;
  private readonly roles: Roles;

  constructor(ctx: PaxosContext, noDurableVotes: boolean) {
    this.ctx = ctx;
    this.roles = ctx.roles;
    this.noDurableVotes = noDurableVotes;
    if (this.noDurableVotes) this.heardWhileRejoining = new Map();
    else this.rejoined = true;
  }

  /** It still learns before it may promise, vote or campaign (PaxosOptions.noDurableVotes). */
  get rejoining(): boolean {
    return this.heardWhileRejoining !== null;
  }

  /** A heartbeat from `from`: while rejoining, the first one of each peer is kept. */
  heard(from: number, msg: Extract<PaxosMessage, { type: 'heartbeat' }>): void {
    if (this.heardWhileRejoining !== null && !this.heardWhileRejoining.has(from))
      this.heardWhileRejoining.set(from, { promised: msg.promised, knownBelow: msg.knownBelow });
  }

  /** What it still waits for before `finish` may end `rejoining`; null once it takes part. */
  progress(): RejoinProgress | null {
    const heard = this.heardWhileRejoining;
    if (heard === null) return null;
    const ctx = this.ctx;
    let knownBelow = 0;
    for (const h of heard.values()) knownBelow = Math.max(knownBelow, h.knownBelow);
    return {
      unheard: ctx
        .current()
        .members.filter((m) => m.id !== ctx.self && !heard.has(m.id))
        .map((m) => m.id),
      knownBelow,
      decidedBelow: ctx.decidedBelow,
      knownAt: [...heard].filter(([, h]) => h.knownBelow > ctx.decidedBelow).map(([id]) => id),
    };
  }

  /**
   * Ends `rejoining` once every peer's first heartbeat arrived and this replica has learned every
   * instance they knew of (catch-up brings them), first promising the highest ballot they had
   * promised, durably, so it never takes a lower one it may once have refused.
   */
  finish(): void {
    const heard = this.heardWhileRejoining;
    if (heard === null) return;
    const ctx = this.ctx;
    // Every other member of the configuration in force (as far as this replica learned it).
    if (ctx.current().members.some((m) => m.id !== ctx.self && !heard.has(m.id))) return;
    let promised = 0;
    let knownBelow = 0;
    for (const h of heard.values()) {
      promised = Math.max(promised, h.promised);
      knownBelow = Math.max(knownBelow, h.knownBelow);
    }
    if (ctx.decidedBelow < knownBelow) return;
    this.roles.election.seeBallot(promised);
    // Durable even when it is 0 (a new cluster): a replica with a promise on its disk never rejoins
    // again. Every vote it casts from now on is on its disk before anyone hears of it, so after a
    // crash it remembers them all, and must not wait again for every member: one of them may have
    // died meanwhile (a genesis replica that crashed before its first vote, with a member lost
    // for good, waited for it forever; the simulator found it with a membership change).
    this.roles.acceptor.promise(Math.max(this.roles.acceptor.promised, promised));
    this.rejoined = true;
    this.heardWhileRejoining = null;
  }

  /**
   * Peer `from` truncated instances this replica never delivered (`reason`): reported once, then
   * this replica is inert (PaxosOutput `lostState`).
   */
  lostState(from: number, reason: string): void {
    this.lost = true;
    this.ctx.emit({ type: 'lostState', from, reason });
  }
}
