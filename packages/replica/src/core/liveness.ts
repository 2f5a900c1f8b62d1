import { NOOP_OP } from '@creek/app';
import type { Dependencies } from './dependencies.js';
import type { Entry } from './entry.js';
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
  /** ReplicaOptions.unsafeUnchainedAdoption (a planted bug). */
  private readonly unchained: boolean;
  private lastAdoptScanAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly ctx: ReplicaContext,
    private readonly ordering: Ordering,
    private readonly deps: Dependencies,
    private readonly reads: Reads,
    options: { noopIntervalMs: number; adoptAfterMs: number; unchained?: boolean },
  ) {
    this.noopIntervalMs = options.noopIntervalMs;
    this.adoptAfterMs = options.adoptAfterMs;
    this.unchained = options.unchained === true;
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
   *
   * A dead origin's later strong ops are chained behind the ones adopted here: a strong op's
   * context holds its origin's previous strong op, which enters the context only once delivered,
   * so adopting one op per delivery took a consensus round trip and a scan per op — on WAN links
   * a dead origin's backlog of a hundred strong ops took longer than a minute to commit. An op
   * whose context lacks only strong ops of its origin that this replica adopted and that are not
   * delivered yet is cast at once behind the last of them (its `prevStrong`), as its origin would
   * have: CAB delivers it after them, and its context is complete by then.
   */
  private adoptOrphans(nowMs: number): void {
    const c = this.ctx;
    // Per origin: its strong ops adopted here and not delivered yet, and the last of them.
    const ahead = new Map<number, { eventNos: Set<number>; last: number }>();
    const chain = (origin: number, eventNo: number): void => {
      const a = ahead.get(origin);
      if (a === undefined) ahead.set(origin, { eventNos: new Set([eventNo]), last: eventNo });
      else {
        a.eventNos.add(eventNo);
        a.last = eventNo;
      }
    };
    for (let i = c.committedEnd; i < c.order.length; i++) {
      const e = c.order[i]!;
      const { id } = e.req;
      if (!e.req.strong || id.replica === c.origin) continue;
      if (e.adopted) {
        chain(id.replica, id.eventNo);
        continue;
      }
      if (nowMs - e.arrivedAt < this.adoptAfterMs) continue;
      const a = ahead.get(id.replica);
      if (this.deps.checkDep(id)) this.adopt(e, undefined);
      else if (a !== undefined && this.deps.checkDepBehind(id, a.eventNos)) this.adopt(e, a.last);
      else continue;
      chain(id.replica, id.eventNo);
    }
  }

  private adopt(e: Entry, prevStrong: number | undefined): void {
    const c = this.ctx;
    e.adopted = true;
    c.metrics.adopted++;
    c.out.push(
      prevStrong === undefined || this.unchained
        ? { type: 'cabAdopt', id: e.req.id }
        : { type: 'cabAdopt', id: e.req.id, prevStrong },
    );
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
