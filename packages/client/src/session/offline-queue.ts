import { Unavailable } from '../errors.js';
import type { StoredSession } from '../offline-storage.js';
import type { OpTable, SessionOp } from './op-table.js';

/**
 * The offline queue (`connect({ offline })`): once no replica has answered for the connect
 * timeout, the ops waiting stay, queued, instead of failing, and so do those invoked later, up to
 * `maxQueued`; they are sent with their session numbers (applied once) when a replica answers
 * again. With a storage, the queue outlives the client: see `storedSession`.
 */
export class OfflineQueue {
  /** `on`: offline ops are wanted; `maxQueued`: how many ops may wait. */
  constructor(
    readonly on: boolean,
    private readonly maxQueued: number,
  ) {}

  /** Why an op invoked while offline is refused (the queue is full), or null if it may wait. */
  refusal(ops: OpTable): Unavailable | null {
    const waiting = ops.waiting();
    if (waiting < this.maxQueued) return null;
    return new Unavailable(
      `offline: no replica answers, and ${waiting} ops already wait in the queue (maxQueued ${this.maxQueued})`,
    );
  }

  /** Offline: every op waiting for its answer stays, queued, to be sent when a replica answers. */
  queueWaiting(ops: OpTable): void {
    for (const o of ops.values()) if (o.views !== null) queue(o, true);
  }

  /** A replica serves the client: the ops of the queue, sent at the welcome, are in its hands. */
  release(ops: OpTable): void {
    for (const o of ops.values()) if (o.queued) queue(o, false);
  }
}

/** Puts an op into the offline queue or takes it out, and tells its Correctable. */
export function queue(o: SessionOp, queued: boolean): void {
  if (o.queued === queued) return;
  o.queued = queued;
  o.sink.queued?.(queued);
}

/**
 * What the offline storage keeps: the session, its user (see StoredSession.user), its numbering,
 * and its ops not known committed (an op being abandoned is not sent again, so it is not kept
 * either).
 */
export function storedSession(
  session: string,
  ops: OpTable,
  user: string | null | undefined,
): StoredSession {
  return {
    version: 1,
    session,
    ...(user === undefined ? {} : { user }),
    nextSeq: ops.nextSeq,
    ops: [...ops.values()]
      .filter((o) => !o.committed && !o.abandoning)
      .map((o) => ({
        seq: o.seq,
        op: o.op,
        args: o.args,
        level: o.level,
        stableOnly: o.stableOnly,
      })),
  };
}
