/**
 * The Reqs a gossip node keeps so it can serve peers: anti-entropy repairs (Creek §3.2, agreement of
 * reliable broadcast) and pulls of Reqs that CAB decided but a replica lacks (Creek §5, "no loss").
 * Indexed per origin replica with the event numbers kept sorted, so "what a peer lacks" is found by
 * starting just above the peer's contiguous prefix instead of scanning everything.
 */
import type { DottedVersionVector } from '../core/dvv.js';
import type { OpId } from '../core/op-id.js';
import type { Req } from '../core/types.js';

interface OriginReqs {
  /** Event numbers held, ascending. */
  nos: number[];
  reqs: Map<number, Req>;
}

export class ReqStore {
  private readonly byOrigin = new Map<number, OriginReqs>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  has(id: OpId): boolean {
    return this.byOrigin.get(id.replica)?.reqs.has(id.eventNo) ?? false;
  }

  get(id: OpId): Req | undefined {
    return this.byOrigin.get(id.replica)?.reqs.get(id.eventNo);
  }

  /** Keeps `req`; false if a Req with its id is already held (the first one is kept). */
  add(req: Req): boolean {
    const { replica, eventNo } = req.id;
    let o = this.byOrigin.get(replica);
    if (o === undefined) {
      o = { nos: [], reqs: new Map() };
      this.byOrigin.set(replica, o);
    }
    if (o.reqs.has(eventNo)) return false;
    o.reqs.set(eventNo, req);
    const nos = o.nos;
    // Reqs of one origin mostly arrive in order: appending is the common case.
    if (nos.length === 0 || nos[nos.length - 1]! < eventNo) nos.push(eventNo);
    else nos.splice(upperBound(nos, eventNo), 0, eventNo);
    this.count++;
    return true;
  }

  /**
   * Up to `limit` held Reqs whose ids are not in `theirs`, each origin's in ascending event order
   * (so the receiver's contiguous prefix grows and its dots stay few), taken round-robin across
   * origins (so one origin's long backlog does not starve the others), and while their `reqSize`
   * stays within `budget` (the first is taken whatever its size).
   */
  missingFrom(
    theirs: DottedVersionVector,
    limit: number,
    budget = Number.POSITIVE_INFINITY,
  ): Req[] {
    const out: Req[] = [];
    if (limit <= 0) return out;
    let size = 0;
    const cursors: { origin: number; o: OriginReqs; i: number }[] = [];
    for (const origin of [...this.byOrigin.keys()].sort((a, b) => a - b)) {
      const o = this.byOrigin.get(origin)!;
      const i = upperBound(o.nos, theirs.base(origin));
      if (i < o.nos.length) cursors.push({ origin, o, i });
    }
    while (out.length < limit && size < budget && cursors.length > 0) {
      for (let c = 0; c < cursors.length && out.length < limit && size < budget;) {
        const cur = cursors[c]!;
        while (
          cur.i < cur.o.nos.length &&
          theirs.has({ replica: cur.origin, eventNo: cur.o.nos[cur.i]! })
        )
          cur.i++;
        if (cur.i >= cur.o.nos.length) {
          cursors.splice(c, 1);
          continue;
        }
        const req = cur.o.reqs.get(cur.o.nos[cur.i]!)!;
        // The first always goes, so a large Req still travels (alone) rather than never.
        if (out.length > 0 && size + reqSize(req) > budget) return out;
        out.push(req);
        size += reqSize(req);
        cur.i++;
        c++;
      }
    }
    return out;
  }

  /** The lowest event number held of `origin`, or undefined when none is. */
  lowestHeld(origin: number): number | undefined {
    return this.byOrigin.get(origin)?.nos[0];
  }

  /** Every held Req, by origin, each origin's in ascending event order. */
  all(): Req[] {
    const out: Req[] = [];
    for (const origin of [...this.byOrigin.keys()].sort((a, b) => a - b)) {
      const o = this.byOrigin.get(origin)!;
      for (const no of o.nos) out.push(o.reqs.get(no)!);
    }
    return out;
  }

  /**
   * Per origin, drops held Reqs from the lowest event number on while `drop` is true, stopping at
   * the first it keeps; returns how many were dropped. Costs what it drops plus one check per
   * origin, however many Reqs are held behind the first one kept.
   */
  dropPrefixes(drop: (req: Req) => boolean): number {
    let removed = 0;
    for (const [origin, o] of this.byOrigin) {
      let k = 0;
      while (k < o.nos.length && drop(o.reqs.get(o.nos[k]!)!)) o.reqs.delete(o.nos[k++]!);
      if (k === 0) continue;
      removed += k;
      if (k === o.nos.length) this.byOrigin.delete(origin);
      else o.nos.splice(0, k);
    }
    this.count -= removed;
    return removed;
  }
}

/** First index whose value is greater than `x` in an ascending array. */
function upperBound(a: readonly number[], x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const sizes = new WeakMap<Req, number>();

/**
 * About how many characters a Req takes in a gossip frame: its arguments' JSON, its caller's (a
 * token's claims can run to kilobytes), and a margin for the rest (timestamp, id, op name, causal
 * context). Computed once per Req.
 */
export function reqSize(req: Req): number {
  let n = sizes.get(req);
  if (n === undefined) {
    n =
      JSON.stringify(req.args).length +
      200 +
      (req.causalCtx === null ? 0 : 64) +
      (req.user === undefined ? 0 : JSON.stringify(req.user).length);
    sizes.set(req, n);
  }
  return n;
}
