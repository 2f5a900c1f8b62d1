import type { DottedVersionVector } from './dvv.js';
import { opKey, type OpId } from './op-id.js';
import type { ReplicaContext } from './replica-context.js';

/**
 * What this replica holds of each origin's ops, and what a strong op's causal context still lacks
 * here: CAB's predicate (`checkDep`) and what the driver asks gossip for until it holds.
 */
export class Dependencies {
  /** Per origin, a lower bound of `receivedUpTo` (its cache). */
  private readonly receivedThrough = new Map<number, number>();

  constructor(private readonly ctx: ReplicaContext) {}

  /**
   * CAB's predicate (Algorithm 1 line 10, `checkDep`): the strong op's Req and every op in its causal
   * context have been delivered here.
   */
  checkDep(id: OpId): boolean {
    const e = this.ctx.live.get(opKey(id));
    if (e === undefined || e.committed || e.req.causalCtx === null) return false;
    return this.includes(e.req.causalCtx);
  }

  /**
   * This replica holds every op of `causalCtx`, counting for a closed origin only its ops up to
   * the cut (core/closing-origins.ts): those above it were dropped and will never be held.
   */
  private includes(causalCtx: DottedVersionVector): boolean {
    const { known, closed } = this.ctx;
    if (closed.size === 0 || !causalCtx.origins().some((o) => closed.has(o)))
      return known.includes(causalCtx);
    let ok = true;
    causalCtx.forEachBase((replica, base) => {
      for (let n = known.base(replica) + 1; ok && n <= this.needed(replica, base); n++)
        if (!known.has({ replica, eventNo: n })) ok = false;
    });
    return ok;
  }

  /** How many of `origin`'s ops a causal context naming its first `base` can still need here. */
  private needed(origin: number, base: number): number {
    return Math.min(base, this.ctx.closed.get(origin) ?? base);
  }

  /**
   * `checkDep(id)` once `ahead` (strong ops of `id`'s origin that precede it and are CAB-cast but
   * not delivered yet) are delivered: CAB delivers them before `id` (their `prevStrong` chain), so
   * a cast of `id` made now is delivered no sooner than if it waited for them (Liveness's chained
   * adoption).
   */
  checkDepBehind(id: OpId, ahead: ReadonlySet<number>): boolean {
    const e = this.ctx.live.get(opKey(id));
    if (e === undefined || e.committed || e.req.causalCtx === null) return false;
    return this.ctx.known.includes(e.req.causalCtx, { replica: id.replica, eventNos: ahead });
  }

  /**
   * What this replica still lacks before `checkDep(id)` can hold: the Req itself, or the ops of its
   * causal context (at most `limit`). The driver asks gossip for them ("no loss", Creek §5).
   */
  missingDeps(id: OpId, limit: number): OpId[] {
    const e = this.ctx.live.get(opKey(id));
    if (e === undefined) return this.ctx.known.has(id) || this.closedOff(id) ? [] : [id];
    const ctx = e.req.causalCtx;
    if (ctx === null) return [];
    const out: OpId[] = [];
    ctx.forEachBase((replica, base) => {
      const need = this.needed(replica, base);
      for (let n = this.receivedUpTo(replica) + 1; n <= need && out.length < limit; n++) {
        const x = { replica, eventNo: n };
        if (!this.hasReceived(x)) out.push(x);
      }
    });
    return out;
  }

  /**
   * What `id` waits for before it can be delivered, or null when it lacks nothing: its own Req, or
   * of the first origin whose ops of its causal context it lacks, that origin's prefix up to the
   * last of them (`prefix`: CAB looks at it again once the origin's ops up to there are all held).
   * So a cast waiting behind a catch-up is looked at about once per origin, however many ops it
   * lacks. Filed under the lowest op it lacked instead, every cast waiting behind one catch-up was
   * looked at again with each batch that arrived: batches × casts, growing with the square of the
   * lag (the simulator's 'lag' faults).
   */
  awaitedDep(id: OpId): { readonly id: OpId; readonly prefix: boolean } | null {
    const e = this.ctx.live.get(opKey(id));
    if (e === undefined)
      return this.ctx.known.has(id) || this.closedOff(id) ? null : { id, prefix: false };
    const ctx = e.req.causalCtx;
    if (ctx === null) return null;
    let awaited: OpId | null = null;
    ctx.forEachBase((replica, base) => {
      const need = this.needed(replica, base);
      if (awaited === null && this.receivedUpTo(replica) < need)
        awaited = { replica, eventNo: need };
    });
    return awaited === null ? null : { id: awaited, prefix: true };
  }

  /** True when this replica has the op with this id (issued it, or received its Req). */
  hasReceived(id: OpId): boolean {
    if (id.replica === this.ctx.origin) return id.eventNo <= this.ctx.eventNo;
    return this.ctx.known.has(id) || this.ctx.live.has(opKey(id));
  }

  /**
   * How many of `origin`'s ops this replica has received without a gap. Received ops stay received
   * (known, or live until they are known), so the answer only grows: it is cached per origin and
   * each call walks only the ops received since the last one.
   */
  receivedUpTo(origin: number): number {
    if (origin === this.ctx.origin) return this.ctx.eventNo;
    let n = Math.max(this.receivedThrough.get(origin) ?? 0, this.ctx.known.base(origin));
    while (this.hasReceived({ replica: origin, eventNo: n + 1 })) n++;
    this.receivedThrough.set(origin, n);
    return n;
  }

  /**
   * An op of a closed origin above its cut (core/closing-origins.ts): definitely not applied, so
   * nothing waits for its Req. A cast of it still in the log (adopted or forwarded before the
   * close) is accepted and then passed over at delivery; waiting for a Req that every replica
   * refuses held the log back for good (the simulator: seed 217 with 5 replicas, reconfig faults).
   */
  private closedOff(id: OpId): boolean {
    const cut = this.ctx.closed.get(id.replica);
    return cut !== undefined && id.eventNo > cut && !this.ctx.known.has(id);
  }
}
