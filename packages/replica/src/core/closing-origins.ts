import { CLOSE_OP, type JsonValue } from '@creek/app';
import type { Dependencies } from './dependencies.js';
import type { Entry } from './entry.js';
import { opKey, type OpId } from './op-id.js';
import type { Ordering } from './ordering.js';
import type { ReplicaContext } from './replica-context.js';

/**
 * Closing dead origins: every op of an incarnation that will issue no more ends committed or
 * definitely not applied, decided through the log.
 *
 * The problem. An origin's ops commit behind its earlier ones (a strong op's causal context takes
 * each other origin's contiguous prefix, and an origin's own strong ops carry every earlier op of
 * it). When an origin dies (its replica's disk is lost and it comes back under a new incarnation,
 * or the replica is removed) right after an op that reached nobody, its later ops that did reach
 * peers wait for that op forever: tentative at every survivor, and a client shown a tentative
 * answer for one never learns its fate.
 *
 * The close. A replica that holds such stranded ops of an origin it knows is dead (its host knows:
 * a later incarnation of the same replica id has ops, or the id's removal is in force), or where a
 * client waits for an op of it that it lacks (`want`), and has
 * waited `adoptAfterMs` for the missing op to turn up, issues the strong op
 * `creek.close { origin, cut }`, with `cut` the contiguous prefix of the origin's ops it holds, so
 * it can give every op up to the cut to whoever lacks it. The close is ordered as any strong op
 * (gossip, then CAB: the Multi-Paxos log), so every replica commits it at the same position. Where
 * it commits, the first close of an origin there counts, later ones change nothing:
 *
 * - the origin's tentative ops above the cut are dropped, definitely not applied (their writes
 *   withdrawn, a client waiting here told so), and any copy arriving later is refused;
 * - its ops up to the cut stay and commit as usual (weak ones with the next strong op's causal
 *   context, strong ones cast on their origin's behalf: Liveness.adoptOrphans);
 * - its ops above the cut that committed before the close stay committed: an origin's committed
 *   ops are a prefix of its ops, so every replica holds exactly these at that position, and the
 *   only ops dropped are tentative ones above both;
 * - a strong op whose causal context names the origin's ops above the cut needs, from then on,
 *   only those up to it (Dependencies.checkDep); a decided id of the origin above the cut is passed over
 *   (`closedOff`), not delivered.
 *
 * Which ops were dropped is a function of the committed order, so it survives a restart (recovery
 * replays the committed closes) and a checkpoint or state transfer (`ReplicaCheckpoint.closed`).
 * A process of the dead incarnation that comes back (an older copy of its directory) has its ops
 * above the cut refused by every replica that committed the close.
 */
/**
 * The end of the error a client waiting on a dropped op is answered with (after "op R#N"): the op
 * is definitely not applied, anywhere. Checkers that judge answers tell it from a rejection by it.
 */
export const NOT_APPLIED_CLOSED = "was not applied: its replica's incarnation closed without it";

export class ClosingOrigins {
  /** Origins this replica issued a close for, not yet committed here. */
  private readonly proposed = new Set<number>();
  /**
   * Ops a client waits for here that this replica lacks (`want`), per origin: the highest one,
   * when the first of them was asked for, and when last. One entry per origin, gone once held,
   * closed, or no longer asked for.
   */
  private readonly wanted = new Map<number, { upTo: number; since: number; lastAt: number }>();
  private lastScanAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly ctx: ReplicaContext,
    private readonly ordering: Ordering,
    private readonly deps: Dependencies,
    private readonly closeAfterMs: number,
  ) {}

  /** The id is of a closed origin and above its cut: definitely not applied, refused if it comes. */
  closedOff(id: OpId): boolean {
    const cut = this.ctx.closed.get(id.replica);
    return cut !== undefined && id.eventNo > cut && !this.ctx.known.has(id);
  }

  /**
   * Issues a close for each origin `isDead` names that left ops stranded here for `closeAfterMs`
   * (above the contiguous prefix of its ops this replica holds), looked at four times per interval.
   * True when it issued one.
   */
  closeIfDue(nowMs: number, isDead: (origin: number) => boolean): boolean {
    if (nowMs - this.lastScanAt < this.closeAfterMs / 4) return false;
    this.lastScanAt = nowMs;
    const c = this.ctx;
    const due = new Set<number>();
    for (const [origin, w] of this.wanted) {
      // Asked for still (a waiting client asks again every turn), and not held or closed since.
      const stale = nowMs - w.lastAt > this.closeAfterMs;
      if (stale || c.closed.has(origin) || this.deps.receivedUpTo(origin) >= w.upTo) {
        this.wanted.delete(origin);
        continue;
      }
      if (this.proposed.has(origin) || nowMs - w.since < this.closeAfterMs) continue;
      if (isDead(origin)) due.add(origin);
    }
    for (let i = c.committedEnd; i < c.order.length; i++) {
      const { replica, eventNo } = c.order[i]!.req.id;
      if (replica === c.origin || due.has(replica) || c.closed.has(replica)) continue;
      if (this.proposed.has(replica) || nowMs - c.order[i]!.arrivedAt < this.closeAfterMs) continue;
      if (eventNo > this.deps.receivedUpTo(replica) + 1 && isDead(replica)) due.add(replica);
    }
    for (const origin of due) {
      this.proposed.add(origin);
      c.metrics.closesIssued++;
      const req = this.ordering.newReq(
        CLOSE_OP,
        { origin, cut: this.deps.receivedUpTo(origin) },
        true,
      );
      this.ordering.admit(req, null);
    }
    return due.size > 0;
  }

  /**
   * A client waits here for op `eventNo` of `origin`, which this replica lacks: a session welcomed
   * only once its replica holds what it saw elsewhere, or a context token's ops. If the origin is
   * dead and the op has not turned up after `closeAfterMs`, the op exists nowhere a client can be
   * welcomed (it died with its replica's disk before anyone else had it), and nothing else would
   * close the origin (no op of it is stranded above a gap here): this replica closes it at what it
   * holds, so the op ends definitely not applied and the client is welcomed without it. The host
   * asks only while no peer says it holds more of that origin (what a client names is unsigned:
   * ClientView.heldForClient), and again every turn the client waits; a want not asked again
   * within `closeAfterMs` lapses.
   */
  want(origin: number, eventNo: number, nowMs: number): void {
    const c = this.ctx;
    if (origin === c.origin || c.closed.has(origin)) return;
    if (eventNo <= this.deps.receivedUpTo(origin)) return;
    const w = this.wanted.get(origin);
    if (w === undefined) this.wanted.set(origin, { upTo: eventNo, since: nowMs, lastAt: nowMs });
    else {
      w.upTo = Math.max(w.upTo, eventNo);
      w.lastAt = nowMs;
    }
  }

  /**
   * A close committed here (Ordering.commit): the first of its origin drops the origin's tentative
   * ops above the cut. Every replica calls it at the same committed position.
   */
  apply(origin: number, cut: number): void {
    const c = this.ctx;
    this.proposed.delete(origin);
    if (c.closed.has(origin)) return;
    c.closed.set(origin, cut);
    c.metrics.closedOrigins++;
    c.out.push({ type: 'originClosed', origin });
    const kept: Entry[] = [];
    let first = -1;
    for (let i = c.committedEnd; i < c.order.length; i++) {
      const e = c.order[i]!;
      if (e.req.id.replica !== origin || e.req.id.eventNo <= cut) {
        kept.push(e);
        continue;
      }
      if (first < 0) first = i;
      this.drop(e);
    }
    if (first < 0) return;
    c.order.splice(c.committedEnd, c.order.length - c.committedEnd, ...kept);
    if (first < c.frontier) c.frontier = first;
  }

  /** One dropped op: never applied, its writes withdrawn, its waiting client told. */
  private drop(e: Entry): void {
    const c = this.ctx;
    c.metrics.droppedByClose++;
    c.live.delete(opKey(e.req.id));
    e.dropped = true;
    if (e.exec !== null) {
      c.store.remove(e.exec.writes);
      if (c.changedKeys !== null) for (const w of e.exec.writes) c.changedKeys.add(w.key);
      e.exec = null;
    }
    if (e.local !== null)
      c.out.push({
        type: 'respond',
        tag: e.local.tag,
        id: e.req.id,
        level: 'failed',
        outcome: {
          ok: false,
          error: `op ${e.req.id.replica}#${e.req.id.eventNo} ${NOT_APPLIED_CLOSED}`,
        },
        notApplied: true,
      });
  }
}

/** A close's arguments (`creek.close`), or null if they are not an origin and a cut. */
export function closeArgs(args: JsonValue): { origin: number; cut: number } | null {
  if (args === null || typeof args !== 'object' || Array.isArray(args)) return null;
  const { origin, cut } = args as { origin?: unknown; cut?: unknown };
  return Number.isInteger(origin) && Number.isInteger(cut)
    ? { origin: origin as number, cut: cut as number }
    : null;
}
