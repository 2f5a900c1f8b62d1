import type { JsonValue, User } from '@creek/app';
import type { Dependencies } from './dependencies.js';
import type { DottedVersionVector } from './dvv.js';
import { Entry } from './entry.js';
import { opKey, formatOpId, type OpId } from './op-id.js';
import type { ReplicaContext } from './replica-context.js';
import { ORIGIN_UNDECIDED } from './replica-options.js';
import type { Req, SessionStamp } from './types.js';

/**
 * The list `committed · tentative` (Algorithm 1): new Reqs issued here, Reqs RB-delivered from
 * other replicas placed on the tentative list by (timestamp, id), and strong ops CAB-delivered
 * committed together with their causal contexts. Each method only changes the list and says what
 * changed (it moves `frontier` back to the first changed position); the execution pipeline
 * (execution.ts) runs what that makes necessary.
 */
export class Ordering {
  constructor(
    private readonly ctx: ReplicaContext,
    private readonly deps: Dependencies,
  ) {}

  newReq(op: string, args: JsonValue, strong: boolean, session?: SessionStamp, user?: User): Req {
    const c = this.ctx;
    if (c.origin === ORIGIN_UNDECIDED)
      throw new Error('the replica has no origin yet: it numbers no op before adoptOrigin');
    c.eventNo++;
    const id: OpId = { replica: c.origin, eventNo: c.eventNo };
    const ts = c.clock.next(c.nowMs);
    // Line 19: the causal context of a strong op. For other origins we take the contiguous prefix of
    // their ops that this replica knows (a version vector, no dots) rather than every known id: the
    // two differ only behind an origin's not-yet-delivered strong op, and stopping there keeps every
    // origin's invocation order in the committed order (no weak op is stabilized ahead of a strong op
    // its origin invoked earlier). For our own origin we include every earlier op, pending strong ones
    // too: CAB delivers each origin's strong ops in invocation order (`prevStrong`), so they are
    // delivered before this one and checkDep cannot deadlock on them. No known op has a later
    // timestamp than `ts` (the HLC is advanced by every delivery), so line 19's `\ {x | r < x}`
    // removes nothing.
    let causalCtx: DottedVersionVector | null = null;
    if (strong) {
      causalCtx = c.known.prefixes();
      causalCtx.addPrefix(c.origin, id.eventNo - 1);
    }
    return {
      ts,
      id,
      op,
      args,
      strong,
      causalCtx,
      ...(session === undefined ? {} : { session }),
      ...(user === undefined ? {} : { user }),
    };
  }

  /** Lines 16-25 after the Req is built. */
  admit(req: Req, tag: number | null): void {
    const c = this.ctx;
    // The Req is durable before anything about it leaves the replica: a crash must not lose an op
    // that others know of, or its id would be reused.
    c.out.push({ type: 'persist', record: { kind: 'req', req } });
    c.own.issued(req, c.origin);
    // RB-cast before CAB-cast: the Req travels ahead of its id, so the leader holds it when the
    // forward arrives (Paxos proposes and accepts only ids whose Reqs it holds).
    c.out.push({ type: 'rbCast', req });
    if (req.strong) {
      c.out.push({ type: 'cabCast', id: req.id, prevStrong: c.lastStrongEventNo });
      c.lastStrongEventNo = req.id.eventNo;
    } else {
      c.known.add(req.id);
    }
    const local =
      tag === null ? null : { tag, first: null, firstWasTentative: false, lastTentative: null };
    this.insertTentative(new Entry(req, local, c.nowMs));
  }

  /**
   * Algorithm 1 line 26: a Req from another replica was RB-delivered. Duplicates are ignored
   * (false: nothing changed).
   */
  receive(req: Req): boolean {
    const c = this.ctx;
    if (req.id.replica === c.origin || c.known.has(req.id) || c.live.has(opKey(req.id)))
      return false;
    // Above the cut of its closed origin: definitely not applied (core/closing-origins.ts).
    const cut = c.closed.get(req.id.replica);
    if (cut !== undefined && req.id.eventNo > cut) return false;
    c.clock.observe(req.ts);
    if (!req.strong) c.known.add(req.id);
    c.out.push({ type: 'persist', record: { kind: 'req', req } });
    this.insertTentative(new Entry(req, null, c.nowMs));
    return true;
  }

  /** Algorithm 1 line 32: CAB delivered a strong op's id (only ever when `checkDep(id)` holds). */
  deliverStrong(id: OpId): void {
    const c = this.ctx;
    const e = c.live.get(opKey(id));
    if (e === undefined || !this.deps.checkDep(id)) {
      throw new Error(
        `CAB-deliver of ${formatOpId(id)} while checkDep is false: the CAB driver broke its contract`,
      );
    }
    c.known.add(id);
    this.commit(e);
    c.lastCommitAt = c.nowMs;
    if (c.noopPending === opKey(id)) c.noopPending = null;
  }

  /** Line 36, adjustTentativeOrder: place the entry by (timestamp, id). */
  private insertTentative(e: Entry): void {
    const c = this.ctx;
    c.live.set(opKey(e.req.id), e);
    const order = c.order;
    const last = order.length > c.committedEnd ? order[order.length - 1]! : null;
    if (last === null || compareEntries(last, e) < 0) {
      order.push(e);
      return;
    }
    let lo = c.committedEnd;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareEntries(order[mid]!, e) < 0) lo = mid + 1;
      else hi = mid;
    }
    order.splice(lo, 0, e);
    if (lo < c.frontier) c.frontier = lo;
  }

  /** Line 48, commit: stabilize the causal context, then append the strong op. */
  private commit(r: Entry): void {
    const c = this.ctx;
    const causalCtx = r.req.causalCtx!;
    const order = c.order;
    const start = c.committedEnd;
    const stabilized: Entry[] = [];
    const stays: Entry[] = [];
    // How many stabilized ops come before the first op that stays tentative: up to there the list
    // keeps its order, and so do the executions.
    let leading = 0;
    // Every op of the context has a smaller timestamp than r, so it sits before r on the list.
    for (let i = start; order[i] !== r; i++) {
      if (i >= order.length)
        throw new Error(`commit: ${formatOpId(r.req.id)} is not on the tentative list`);
      const x = order[i]!;
      if (causalCtx.has(x.req.id)) {
        stabilized.push(x);
        if (stays.length === 0) leading++;
      } else {
        stays.push(x);
      }
    }
    stabilized.push(r);
    for (const x of stabilized) {
      x.commitSeq = c.committedCount++;
      if (x.req.id.replica === c.origin)
        c.own.committedOwnUpTo = Math.max(c.own.committedOwnUpTo, x.req.id.eventNo);
    }
    c.store.noteCommitted(stabilized);
    // The committed state changed by what these wrote (executed or not yet: then at execution).
    if (c.changedKeys !== null)
      for (const x of stabilized)
        if (x.exec !== null) for (const v of x.exec.writes) c.changedKeys.add(v.key);
    c.committedEnd = start + stabilized.length;
    c.out.push({
      type: 'persist',
      record: { kind: 'commit', ids: stabilized.map((x) => x.req.id) },
    });
    if (stays.length === 0) return; // the ideal case: the head of tentative simply became committed
    // committed · committedExt · [r] · (the rest of tentative), relative orders kept (lines 49-52).
    let j = start;
    for (const x of stabilized) order[j++] = x;
    for (const x of stays) order[j++] = x;
    c.metrics.reorderingCommits++;
    c.frontier = Math.min(c.frontier, start + leading);
    const keys = new Set<string>();
    for (const x of stabilized) if (x.exec !== null) for (const v of x.exec.writes) keys.add(v.key);
    c.store.reposition(keys);
  }
}

function compareEntries(a: Entry, b: Entry): number {
  if (a.commitSeq !== b.commitSeq) return a.commitSeq < b.commitSeq ? -1 : 1;
  const x = a.req;
  const y = b.req;
  if (x.ts !== y.ts) return x.ts < y.ts ? -1 : 1;
  if (x.id.replica !== y.id.replica) return x.id.replica - y.id.replica;
  return x.id.eventNo - y.id.eventNo;
}
