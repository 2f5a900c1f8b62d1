import type { JsonValue, User } from '@creek/app';
import { holdsAll, type ErrorCode, type HeldOwnOps, type ServerFrame } from '@creek/protocol';
import type { InvokeRequest } from '../core/replica.js';
import { sessionKey } from '../core/session-dedupe.js';
import {
  outcomesEqual,
  readSetCovers,
  type Outcome,
  type ReadSet,
  type Response,
  type SessionOpsHeld,
} from '../core/types.js';

/** Live queries one connection may hold at once: a bound on the reads a client makes us run. */
export const MAX_WATCHES_PER_CONNECTION = 64;

type Level = 'tentative' | 'stable';
const LEVELS: readonly Level[] = ['tentative', 'stable'];

/** One level of a live query: its read in flight, what it read last, and what the client has. */
interface Side {
  /** The tag of its read in flight, or null. */
  inFlight: number | null;
  /** A key it read changed while the read was in flight: run it again when it answers. */
  again: boolean;
  reads: ReadSet | null;
  sent: Outcome | null;
  /** The committed position the stable result last sent was read at. */
  sentPosition: number | undefined;
  /** Which of the client session's ops the state of the result last sent held. */
  sentOwn: SessionOpsHeld | undefined;
}

interface Watch<C> {
  readonly conn: C;
  readonly watchId: string;
  readonly op: string;
  readonly args: JsonValue;
  /** Who watches (null: anonymous): its reads run as this user (`tx.user`). */
  user: User | null;
  /** The connection's client session, whose own ops each result says it holds. */
  readonly reader: string | undefined;
  /**
   * What the client's query already shows (the `watch` frame's `shown`), until a read reaches it:
   * results below it are not sent (see `behind`).
   */
  readonly floor: { position: number | undefined; own: HeldOwnOps | undefined };
  readonly sides: Record<Level, Side>;
}

/**
 * The replica's live queries (client frames `watch` / `unwatch`): each is a read-only op read at
 * two levels — the end of the replica's list (tentative) and its committed state (stable) — with
 * the read set the read recorded. When the replica reports keys that may have changed
 * (`Replica.takeChangedKeys`), the reads whose sets they touch run again, and a `watched` frame
 * goes out only when the result differs from the one the client has, or holds more of the client
 * session's own ops (`own`: the client lets a result replace a newer one only if it holds as many,
 * so one that holds them at last must reach it even when its value is the same). `C` is the
 * connection.
 */
export class LiveQueries<C> {
  private readonly byTag = new Map<number, { watch: Watch<C>; level: Level }>();
  private readonly byConn = new Map<C, Map<string, Watch<C>>>();

  constructor(
    /** Runs a read on the replica (InvokeRequest.watch); its response comes to `respond`. */
    private readonly invoke: (request: InvokeRequest) => void,
    private readonly send: (conn: C, frame: ServerFrame) => void,
    /** A fresh tag, shared with the endpoint's ops so that responses route unambiguously. */
    private readonly nextTag: () => number,
    private readonly max = MAX_WATCHES_PER_CONNECTION,
    /**
     * A deliberately broken side that tells the client its stable results hold the session's ops
     * its tentative results held, so that one read before the session's write committed replaces
     * the tentative view that showed it. Exists so a test can show the simulator's checkers catch it.
     */
    private readonly unsafeStableOwnOps = false,
  ) {}

  /** Reads of live queries in flight (asked of the replica, not answered yet). */
  get reading(): number {
    return this.byTag.size;
  }

  /** How many live queries run now, over every connection. */
  get size(): number {
    let n = 0;
    for (const m of this.byConn.values()) n += m.size;
    return n;
  }

  /** A `watch` frame of `conn`, whose client session is `reader` (if it has one: its key as the cluster keeps it, scoped to its user). */
  watch(
    conn: C,
    f: {
      watchId: string;
      op: string;
      args: JsonValue;
      user?: User | null | undefined;
      shown?: { position?: number | undefined; own?: HeldOwnOps | undefined } | undefined;
    },
    reader?: string | null,
  ): void {
    let mine = this.byConn.get(conn);
    if (mine === undefined) this.byConn.set(conn, (mine = new Map()));
    if (mine.has(f.watchId))
      return this.end(conn, f.watchId, 'out-of-order', `watch ${f.watchId} already runs here`);
    if (mine.size >= this.max)
      return this.end(
        conn,
        f.watchId,
        'busy',
        `this connection already holds ${mine.size} live queries (at most ${this.max}): unwatch some first`,
      );
    const side = (): Side => ({
      inFlight: null,
      again: false,
      reads: null,
      sent: null,
      sentPosition: undefined,
      sentOwn: undefined,
    });
    const w: Watch<C> = {
      conn,
      watchId: f.watchId,
      op: f.op,
      args: f.args,
      user: f.user ?? null,
      reader: reader ?? undefined,
      floor: { position: f.shown?.position, own: f.shown?.own },
      sides: { tentative: side(), stable: side() },
    };
    mine.set(f.watchId, w);
    for (const level of LEVELS) this.run(w, level);
  }

  /** The user of `conn` refreshed their token: its live queries' next reads run with it. */
  setUser(conn: C, user: User): void {
    for (const w of this.byConn.get(conn)?.values() ?? []) w.user = user;
  }

  unwatch(conn: C, watchId: string): void {
    const w = this.byConn.get(conn)?.get(watchId);
    if (w !== undefined) this.drop(w);
  }

  /** The connection closed: its live queries end. */
  closed(conn: C): void {
    for (const w of [...(this.byConn.get(conn)?.values() ?? [])]) this.drop(w);
    this.byConn.delete(conn);
  }

  /** A response for one of our reads (true), or not ours (false). */
  respond(r: Response): boolean {
    const mine = this.byTag.get(r.tag);
    if (mine === undefined) return false;
    this.byTag.delete(r.tag);
    const { watch: w, level } = mine;
    const side = w.sides[level];
    side.inFlight = null;
    if (r.level === 'failed') {
      const error = r.outcome.ok ? 'failed' : r.outcome.error;
      this.end(
        w.conn,
        w.watchId,
        error.startsWith('unknown operation') ? 'unknown-op' : 'invalid-arguments',
        error,
      );
      this.drop(w);
      return true;
    }
    side.reads = r.reads ?? { keys: [], prefixes: [] };
    const claimed = w.sides.tentative.sentOwn;
    if (this.unsafeStableOwnOps && level === 'stable' && r.sessionOps && claimed !== undefined)
      r = { ...r, sessionOps: { ...r.sessionOps, upTo: claimed.upTo, missing: claimed.missing } };
    if (this.behind(w, level, r)) {
      // Older than what the client shows: it would not show it. A later read is sent instead,
      // whatever its value (side.sent stays as it was).
    } else if (
      side.sent === null ||
      !outcomesEqual(side.sent, r.outcome) ||
      !sameOwnOps(side.sentOwn, r.sessionOps)
    ) {
      side.sent = r.outcome;
      side.sentPosition = r.position;
      side.sentOwn = r.sessionOps;
      this.push(w, level, side);
      // A tentative result the committed state also reads: the stable result again, after it, so
      // that the client's latest view says the value is confirmed (the two reads answer in either
      // order: at the start the committed reader often answers first).
      const stable = w.sides.stable;
      if (level === 'tentative' && stable.sent !== null && outcomesEqual(stable.sent, r.outcome))
        this.push(w, 'stable', stable);
    }
    if (side.again) {
      side.again = false;
      this.run(w, level);
    }
    return true;
  }

  /** Keys whose value may have changed: reads that read one of them run again. */
  changed(keys: ReadonlySet<string>): void {
    if (keys.size === 0) return;
    const changed = [...keys];
    for (const mine of this.byConn.values())
      for (const w of mine.values())
        for (const level of LEVELS) {
          const side = w.sides[level];
          // Its first read is still in flight, and what it reads is not known yet: it may have
          // read a key before this change (its answer comes after the replica's turn), so it
          // runs again once it answers. Skipping it left a watch on a stale value for good when
          // nothing wrote the key again (the simulator, seed 8 with every fault).
          if (side.reads === null) {
            if (side.inFlight !== null) side.again = true;
            continue;
          }
          if (
            !changed.some((k) => readSetCovers(side.reads!, k)) &&
            !(level === 'tentative' && this.awaitsOwnOps(w, changed))
          )
            continue;
          if (side.inFlight !== null) side.again = true;
          else this.run(w, level);
        }
  }

  /**
   * Whether result `r` is older than what the client's query already showed (before it moved
   * here): a stable one read below the committed position it showed, or a tentative one that holds
   * fewer of the session's own ops (this replica has not got the ones the session resubmits yet).
   * The first read that reaches the floor lifts it: later reads are later still.
   */
  private behind(w: Watch<C>, level: Level, r: Response): boolean {
    const floor = w.floor;
    if (level === 'stable' && floor.position !== undefined && r.position !== undefined) {
      if (r.position < floor.position) return true;
      floor.position = undefined;
    }
    if (level === 'tentative' && floor.own !== undefined && r.sessionOps !== undefined) {
      if (!holdsAll(r.sessionOps, floor.own)) return true;
      floor.own = undefined;
    }
    return false;
  }

  /**
   * A tentative read held back for the session's own ops (`behind`) runs again when one of them
   * arrives: each writes its session record, whatever keys the query reads.
   */
  private awaitsOwnOps(w: Watch<C>, changed: readonly string[]): boolean {
    if (w.floor.own === undefined || w.reader === undefined) return false;
    const records = `${sessionKey(w.reader)}/`;
    return changed.some((k) => k.startsWith(records));
  }

  /** Sends the result `side` last sent (again). */
  private push(w: Watch<C>, level: Level, side: Side): void {
    const own = side.sentOwn;
    this.send(w.conn, {
      t: 'watched',
      watchId: w.watchId,
      level,
      outcome: side.sent as never,
      ...(side.sentPosition === undefined ? {} : { position: side.sentPosition }),
      ...(own === undefined
        ? {}
        : {
            own: {
              upTo: own.upTo,
              ...(own.missing.length === 0 ? {} : { missing: [...own.missing] }),
              ...(own.failed.length === 0 ? {} : { failed: [...own.failed] }),
            },
          }),
    });
  }

  private run(w: Watch<C>, level: Level): void {
    const tag = this.nextTag();
    w.sides[level].inFlight = tag;
    this.byTag.set(tag, { watch: w, level });
    this.invoke({
      op: w.op,
      args: w.args,
      strong: false,
      tag,
      watch: level,
      ...(w.user === null ? {} : { user: w.user }),
      ...(w.reader === undefined ? {} : { reader: w.reader }),
    });
  }

  private drop(w: Watch<C>): void {
    this.byConn.get(w.conn)?.delete(w.watchId);
    for (const level of LEVELS) {
      const tag = w.sides[level].inFlight;
      if (tag !== null) this.byTag.delete(tag);
    }
  }

  private end(conn: C, watchId: string, code: ErrorCode, message: string): void {
    this.send(conn, { t: 'unwatched', watchId, code, message });
  }
}

/** Whether two results hold the same ops of the session (a result that holds others is sent). */
function sameOwnOps(a: SessionOpsHeld | undefined, b: SessionOpsHeld | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return a.upTo === b.upTo && a.missing.join() === b.missing.join();
}
