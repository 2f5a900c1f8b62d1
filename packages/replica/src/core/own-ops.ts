import { CLOSE_OP, NOOP_OP } from '@creek/app';
import { scopedSession } from './session-dedupe.js';
import type { Req } from './types.js';

/**
 * How far this replica's own ops have come: committed up to which, and the newest ones a client
 * session cannot resubmit itself. A strong read waits for the own ops before it to be committed
 * (reads.ts), and a session moving to another replica asks `lastOpNotPendingOf`.
 */
export class OwnOps {
  /**
   * The highest event number of this replica's own ops committed or final (they commit in order),
   * also after recovery: a strong read waits for the own ops before it to be committed, and
   * `lastOpNotPendingOf` counts them.
   */
  committedOwnUpTo = 0;
  /**
   * For `lastOpNotPendingOf`, kept as ops are issued and committed instead of found per answer by
   * walking down the session's tentative ops. That walk is as long as the weak ops a session has
   * waiting for a no-op to commit them, so it grew with the load: timed in a replica serving one
   * client, 14 µs per answer with one op outstanding (about 5 % of the origin's CPU per weak op)
   * and 110 µs with 64. Kept, besides `committedOwnUpTo`: the newest own op that is not a no-op,
   * with its session (null: none); and the newest own op before that one that is not a no-op and
   * not of its session.
   */
  private newestOwn: { readonly session: string | null; readonly eventNo: number } = {
    session: null,
    eventNo: 0,
  };
  private newestOwnBefore = 0;

  /**
   * The newest op this replica issued that a session cannot resubmit itself: below the session's
   * own ops still tentative at the top of this replica's ops (and strong no-ops among them, which
   * change nothing). A session moving to another replica resubmits its uncommitted ops, so the
   * other replica need not have them before it serves the session; everything below this one it
   * must have (gossip sends a replica's ops in order, so it has them all or waits for them).
   */
  lastOpNotPendingOf(session: string): number {
    // `session` is scoped to its user (session-dedupe.ts scopedSession), as `issued` keeps it.
    // The ops it may skip are the session's own and no-ops, tentative, at the top: what is left is
    // the newest own op committed (or final) and the newest one, no-ops aside, of another session.
    const other =
      this.newestOwn.session === session ? this.newestOwnBefore : this.newestOwn.eventNo;
    return Math.max(this.committedOwnUpTo, other);
  }

  /**
   * Keeps `newestOwn` and `newestOwnBefore` as this replica (origin `origin`) issues `req` (or
   * recovery brings it back, in event-number order): no-ops change neither.
   */
  issued(req: Req, origin: number): void {
    if (req.id.replica !== origin || req.op === NOOP_OP || req.op === CLOSE_OP) return;
    const session = req.session === undefined ? null : scopedSession(req.session.id, req.user);
    if (session !== this.newestOwn.session) this.newestOwnBefore = this.newestOwn.eventNo;
    this.newestOwn = { session, eventNo: req.id.eventNo };
  }
}
