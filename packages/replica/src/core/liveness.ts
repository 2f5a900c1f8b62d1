import { NOOP_OP } from '@creek/app';
import type { Dependencies } from './dependencies.js';
import { opKey } from './op-id.js';
import type { Ordering } from './ordering.js';
import type { Reads } from './reads.js';
import type { ReplicaContext } from './replica-context.js';

/**
 * What keeps tentative ops moving when nothing else commits them: the strong no-op a replica
 * issues after a quiet interval (§4.4), and the adoption of other origins' strong ops whose casts
 * may have died with their origin (`cabAdopt`).
 */
export class Liveness {
  private readonly noopIntervalMs: number;
  private readonly adoptAfterMs: number;
  private lastAdoptScanAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly ctx: ReplicaContext,
    private readonly ordering: Ordering,
    private readonly deps: Dependencies,
    private readonly reads: Reads,
    options: { noopIntervalMs: number; adoptAfterMs: number },
  ) {
    this.noopIntervalMs = options.noopIntervalMs;
    this.adoptAfterMs = options.adoptAfterMs;
    if (!(this.adoptAfterMs > 0)) throw new Error('adoptAfterMs must be positive');
  }

  /**
   * A no-op is due at `nowMs` (Replica.tick): none is on its way, and a strong read waits for this
   * replica's own ops, or a weak op has waited on the tentative list for the interval and nothing
   * was committed meanwhile.
   */
  noopDue(nowMs: number): boolean {
    const c = this.ctx;
    return (
      c.noopPending === null &&
      // A strong read waits for this replica's own ops to commit: a no-op commits them now.
      (this.reads.readWaitsForOwnOps() ||
        (nowMs - c.lastCommitAt >= this.noopIntervalMs &&
          this.oldestTentativeWeakArrival() <= nowMs - this.noopIntervalMs))
    );
  }

  /** Issues a strong no-op (its commit commits the tentative ops of its causal context). */
  issueNoop(): void {
    const c = this.ctx;
    c.metrics.noopsIssued++;
    const req = this.ordering.newReq(NOOP_OP, null, true);
    c.noopPending = opKey(req.id);
    this.ordering.admit(req, null);
  }

  /**
   * A strong read waits for this replica's own ops to commit and no no-op is on its way
   * (Replica.noopWanted).
   */
  get noopWanted(): boolean {
    return this.ctx.noopPending === null && this.reads.readWaitsForOwnOps();
  }

  /** Looks for orphans to adopt (`adoptOrphans`) four times per `adoptAfterMs`. */
  adoptIfDue(nowMs: number): void {
    if (nowMs - this.lastAdoptScanAt >= this.adoptAfterMs / 4) {
      this.lastAdoptScanAt = nowMs;
      this.adoptOrphans(nowMs);
    }
  }

  /**
   * Casts, on their origins' behalf, other origins' strong ops that have waited `adoptAfterMs` with
   * their causal context complete here (`cabAdopt`). Creek's commit (Algorithm 1) only ever moves
   * an origin's ops into the committed order behind that origin's strong ops, so one strong op
   * whose cast died with its origin would hold back every later op of the origin, and the no-op
   * timer would fire for them forever. Only the context rule (`checkDep`) makes the cast safe to
   * repeat: CAB drops a second decision of an id, and delivers an id only after its predecessor.
   */
  private adoptOrphans(nowMs: number): void {
    const c = this.ctx;
    for (let i = c.committedEnd; i < c.order.length; i++) {
      const e = c.order[i]!;
      if (!e.req.strong || e.adopted || e.req.id.replica === c.origin) continue;
      if (nowMs - e.arrivedAt < this.adoptAfterMs || !this.deps.checkDep(e.req.id)) continue;
      e.adopted = true;
      c.metrics.adopted++;
      c.out.push({ type: 'cabAdopt', id: e.req.id });
    }
  }

  /**
   * When the oldest tentative weak op that a no-op would commit arrived. A no-op's causal context
   * stops at each origin's first gap (`Ordering.newReq`), so a weak op above a gap in what this
   * replica has of its origin waits for the gap to fill, not for a no-op: counting it made a
   * replica issue no-ops forever for the ops of an origin that died before the op below them left
   * it.
   */
  private oldestTentativeWeakArrival(): number {
    const c = this.ctx;
    let oldest = Number.POSITIVE_INFINITY;
    for (let i = c.committedEnd; i < c.order.length; i++) {
      const e = c.order[i]!;
      const { replica, eventNo } = e.req.id;
      if (!e.req.strong && e.arrivedAt < oldest && eventNo <= c.known.base(replica))
        oldest = e.arrivedAt;
    }
    return oldest;
  }
}
