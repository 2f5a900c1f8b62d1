import { CLOSE_OP, NOOP_OP } from '@creek/app';
import { closeArgs } from './closing-origins.js';
import type { ReplicaCheckpoint } from './checkpoint.js';
import { Entry, newVersion } from './entry.js';
import { opKey, formatOpId, type OpId } from './op-id.js';
import { END_REQ, type ReplicaContext } from './replica-context.js';
import { compareReq, type DurableRecord, type Req } from './types.js';

/**
 * Rebuilds the list of a fresh replica (Replica.recover) from the records it had made durable, and
 * from `checkpoint` when there is one (then `records` are those written after it). Committed ops go
 * back in their committed order, the rest by timestamp; this replica's own Reqs that are not
 * committed are re-cast (the outputs gathered in `ctx`). Nothing is executed here: the caller runs
 * the execution pipeline next.
 */
export function recoverInto(
  c: ReplicaContext,
  records: readonly DurableRecord[],
  nowMs: number,
  checkpoint?: ReplicaCheckpoint,
): void {
  const reqs = new Map<string, Req>();
  const commits: OpId[][] = [];
  const ownStrong: number[] = [];
  if (checkpoint !== undefined) {
    restore(c, checkpoint);
    for (const req of checkpoint.reqs) reqs.set(opKey(req.id), req);
    if (checkpoint.committedLive > 0)
      commits.push(checkpoint.reqs.slice(0, checkpoint.committedLive).map((q) => q.id));
    // Every own strong op before the checkpoint's Reqs is final: the last one is their prevStrong.
    if (checkpoint.finalizedOwnStrong > 0) ownStrong.push(checkpoint.finalizedOwnStrong);
  }
  for (const rec of records) {
    if (rec.kind === 'req') reqs.set(opKey(rec.req.id), rec.req);
    else commits.push([...rec.ids]);
  }
  for (const req of reqs.values()) {
    c.clock.observe(req.ts);
    if (req.id.replica === c.origin) {
      c.eventNo = Math.max(c.eventNo, req.id.eventNo);
      if (req.strong) ownStrong.push(req.id.eventNo);
    }
    if (!req.strong) c.known.add(req.id);
  }
  ownStrong.sort((a, b) => a - b);
  c.lastStrongEventNo = Math.max(c.lastStrongEventNo, ownStrong[ownStrong.length - 1] ?? 0);
  const committed = new Set<string>();
  for (const group of commits) {
    for (const id of group) {
      const key = opKey(id);
      const req = reqs.get(key);
      if (req === undefined)
        throw new Error(
          `recovery: commit record names ${formatOpId(id)}, whose Req is not on disk`,
        );
      const e = new Entry(req, null, nowMs);
      e.commitSeq = c.committedCount++;
      c.order.push(e);
      c.live.set(key, e);
      committed.add(key);
      if (req.strong) c.known.add(id);
      // A close took effect where it committed (the first of its origin): its origin's ops
      // above the cut still tentative then are not brought back.
      const close = req.op === CLOSE_OP ? closeArgs(req.args) : null;
      if (close !== null && !c.closed.has(close.origin)) c.closed.set(close.origin, close.cut);
    }
  }
  c.committedEnd = c.order.length;
  const tentative = [...reqs.values()]
    .filter(
      (q) =>
        !committed.has(opKey(q.id)) && !(q.id.eventNo > (c.closed.get(q.id.replica) ?? Infinity)),
    )
    .sort(compareReq);
  for (const req of tentative) {
    const e = new Entry(req, null, nowMs);
    c.order.push(e);
    c.live.set(opKey(req.id), e);
    if (req.id.replica === c.origin) {
      c.out.push({ type: 'rbCast', req });
      if (req.strong) {
        const i = ownStrong.indexOf(req.id.eventNo);
        c.out.push({ type: 'cabCast', id: req.id, prevStrong: i > 0 ? ownStrong[i - 1]! : 0 });
        if (req.op === NOOP_OP) c.noopPending = opKey(req.id);
      }
    }
  }
  // lastOpNotPendingOf's bookkeeping: the own ops brought back, in the order they were issued
  // (the ones not brought back are final); and the newest own op committed or final, which a
  // strong read at the restarted replica would otherwise have taken for not committed, waiting
  // for a no-op of its own to commit (the first read after every restart).
  const own = [...reqs.values()].filter((q) => q.id.replica === c.origin);
  for (const req of own.sort((a, b) => a.id.eventNo - b.id.eventNo)) c.own.issued(req, c.origin);
  let top = c.eventNo;
  for (; top > 0; top--) {
    const e = c.live.get(opKey({ replica: c.origin, eventNo: top }));
    if (e === undefined || e.committed) break;
  }
  c.own.committedOwnUpTo = top;
  c.lastCommitAt = nowMs;
}

/** Starts a fresh replica from a checkpoint's finalized prefix (its live Reqs are `recover`'s). */
function restore(c: ReplicaContext, cp: ReplicaCheckpoint): void {
  c.clock.observe(cp.hlc);
  c.known.addAll(cp.known);
  c.eventNo = cp.eventNo;
  c.lastStrongEventNo = cp.lastStrongEventNo;
  c.finalizedOwnStrong = cp.finalizedOwnStrong;
  for (const [origin, cut] of cp.closed ?? []) c.closed.set(origin, cut);
  c.committedCount = cp.finalized;
  // The finalized state as versions of one entry placed before every other.
  const base = new Entry(END_REQ, null, c.nowMs);
  base.commitSeq = -1;
  c.store.install(cp.state.map(([key, value]) => newVersion(base, key, value)));
  c.finals.restart(cp.finalized, cp.state);
}

/**
 * Everything recovery needs about the finalized prefix (Replica.checkpoint, see ReplicaCheckpoint).
 * Pure: it changes nothing.
 */
export function checkpointOf(c: ReplicaContext): ReplicaCheckpoint {
  const finalized = finalizedCount(c);
  // A reader placed right after the finalized prefix sees exactly the finalized versions.
  const reader = new Entry(END_REQ, null, c.nowMs);
  reader.commitSeq = finalized;
  const reqs: Req[] = [];
  for (let i = c.head; i < c.order.length; i++) reqs.push(c.order[i]!.req);
  return {
    finalized,
    state: c.store.stateBefore(reader),
    reqs,
    committedLive: c.committedEnd - c.head,
    known: c.known.clone(),
    hlc: c.clock.current(),
    eventNo: c.eventNo,
    lastStrongEventNo: c.lastStrongEventNo,
    finalizedOwnStrong: c.finalizedOwnStrong,
    ...(c.closed.size === 0 ? {} : { closed: [...c.closed].sort((a, b) => a[0] - b[0]) }),
  };
}

/** How many ops of the committed list are final (they can be summed up by a checkpoint). */
export function finalizedCount(c: ReplicaContext): number {
  return c.committedCount - (c.committedEnd - c.head);
}
