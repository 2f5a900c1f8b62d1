import {
  MAX_IN_FLIGHT_PER_CONNECTION,
  PROTOCOL_VERSION,
  type ClientFrame,
  type ErrorCode,
  type ServerFrame,
} from '@creek/protocol';
import type { InvokeRequest } from '../core/replica.js';
import { outcomesEqual, type Outcome, type Response, type SessionStamp } from '../core/types.js';
import { LiveQueries } from './live-queries.js';

/** One client-chosen op id: who waits for it and what it was told so far. */
interface ClientOp<C> {
  readonly opId: string;
  /** The op id within its session (op ids are unique per client, not across clients). */
  readonly key: string;
  readonly startedAt: number;
  readonly strong: boolean;
  /** A strong op whose caller wants its stable view alone: tentative outcomes are not sent. */
  readonly stableOnly: boolean;
  /** Its first outcome was observed in the tentative latency histogram. */
  tentativeObserved: boolean;
  /** Its number in the client's session, if the client has one. */
  readonly seq: number | null;
  readonly views: ServerFrame[];
  readonly subscribers: Set<C>;
  lastTentative: Outcome | null;
  /** The client has its last view. */
  done: boolean;
  /** Committed, or never to be ordered (a weak read, a rejection): the session may acknowledge it. */
  settled: boolean;
  /** Connections that will report it in a `committed` frame once it settles. */
  readonly owners: Set<C>;
}

/** One client connection. */
interface Connection<C> {
  /** Numbers connections, so op ids of clients without a session are scoped to their connection. */
  readonly no: number;
  /** Its hello was accepted (version and token): the edge's pre-authentication limits are lifted. */
  passed: boolean;
  greeted: boolean;
  session: string | null;
  inFlight: number;
  /** Session ops submitted here that have not settled (for `committed` frames). */
  readonly unsettled: Set<ClientOp<C>>;
  /** The highest session number submitted here. */
  lastSeq: number;
  /** The last `below` sent in a `committed` frame. */
  committedBelow: number;
  /** A weak op settled since the last `committed` frame (strong ops' stable views say it already). */
  weakSettled: boolean;
  /** Confirmations of this turn, sent together at its end (sessions only). */
  confirms: string[];
  /** The last `seen` vector sent, as a string (views carry it only when it changed). */
  lastSeen: string;
  /** A hello waiting for this replica to catch up with what the session saw elsewhere. */
  waitingHello: { readonly seen: readonly number[]; readonly deadline: number } | null;
}

/**
 * What the replica's side of a connection asks its driver to do, in order: send a frame; count a
 * frame that broke the protocol (the connection stays); lift the edge's limits for a client whose
 * hello passed; refuse one whose token did not (count it and close the connection); close it.
 */
export type ConnectionOutput =
  | { readonly t: 'frame'; readonly frame: ServerFrame }
  | { readonly t: 'violation'; readonly kind: 'badFrame' | 'outOfOrder'; readonly detail: string }
  | { readonly t: 'authenticated' }
  | { readonly t: 'refused'; readonly reason: string }
  | { readonly t: 'close' };

/** What the endpoint counts (the replica's `/status` shows them). */
export interface ClientCounters {
  connections: number;
  invokes: number;
  retries: number;
  rejected: number;
  badFrames: number;
}

/** What the replica's side of its client connections needs from the replica and its driver. */
export interface ClientConnectionsOptions<C> {
  /** The replica's id, which its welcome names. */
  readonly replicaId: number;
  /** The ops a welcome lists, and the read-only ones among them. */
  opNames(): string[];
  readOnlyOps(): string[];
  /** Whether a hello's token lets its client in (no tokens configured: every hello). */
  authorize(token: string | undefined): boolean;
  /** Hands an invocation to the replica; its responses come back to `respond`. */
  invoke(request: InvokeRequest): void;
  /** Why the replica takes no ops now (a message for the client), or null when it does. */
  unavailable(): string | null;
  /**
   * Per origin replica, how many of its ops this replica has without a gap. For a session, this
   * replica's own component stops below the session's own uncommitted ops at the top of its ops
   * (the client resubmits those when it moves, so no replica needs them first).
   */
  seen(session: string | null): number[];
  /** True when this replica has the op with this id (above the gapless prefix too). */
  received(replica: number, eventNo: number): boolean;
  /** Keys whose value may have changed since the last call (Replica.takeChangedKeys). */
  changedKeys(): ReadonlySet<string>;
  /** Seconds from an invoke to its first view ('tentative') or to its stable view ('stable'). */
  observe(level: 'tentative' | 'stable', seconds: number): void;
  /** The driver's clock, in milliseconds (a monotonic one: only differences are used). */
  now(): number;
  /** What the driver does for connection `conn` (see ConnectionOutput). */
  out(conn: C, o: ConnectionOutput): void;
  /**
   * A deliberately broken endpoint that passes no session numbers to the replica, so that a
   * resubmission elsewhere is taken for a new op and applied again. Exists so a test can show the
   * simulator's checkers catch it.
   */
  readonly unsafeDropSessions?: boolean;
}

/**
 * Op ids remembered to answer a retry (a client resubmitting after a reconnect does so within
 * seconds). Each costs its views and bookkeeping, about a kilobyte: 100,000 held ~100 MB per
 * replica under steady load; sessions make an older resubmission apply once anyway.
 */
const REMEMBERED_OPS = 10_000;
/** How long a reconnecting session waits for this replica to catch up before it is sent elsewhere. */
const CATCH_UP_MS = 3_000;

/**
 * The replica's side of its client connections, as a pure state machine: hello (protocol version,
 * token, session), then invocations with client-chosen op ids. Views stream back per op; when the
 * stable result equals the last tentative view, a `confirm` replaces it (Correctables §5.2). An
 * invoke whose op id the replica already has (a retry after a reconnect) is answered with that
 * op's views so far, and never applied twice. `C` names a connection: the runtime's driver
 * (node/client-endpoint.ts) uses its sockets, the simulator numbers its links; frames come in
 * decoded, and everything to do goes out through `out`.
 *
 * Sessions (exactly-once and session guarantees across replicas):
 * - each invoke of a session carries its number and what the session acknowledged; the core makes
 *   a resubmission to another replica apply once (core/session-dedupe.ts). `committed` frames tell
 *   the client which of its weak ops are committed, so that it can acknowledge them.
 * - views carry `seen`, what this replica had when it answered; a session reconnecting with `seen`
 *   is welcomed only once this replica has all of it (read-your-writes, monotonic reads), or told
 *   to try another replica after CATCH_UP_MS. A replica's `seen` counts its own ops only up to the
 *   last one the session cannot resubmit itself (see `seen` in the options), so a session whose
 *   replica died before gossiping the session's writes is not stranded.
 */
export class ClientConnections<C> {
  private readonly byTag = new Map<number, ClientOp<C>>();
  private readonly byOpId = new Map<string, ClientOp<C>>();
  /** Keys of remembered ops, oldest first from `rememberedCount % REMEMBERED_OPS` (a ring). */
  private readonly rememberedKeys: (string | undefined)[] = [];
  private rememberedCount = 0;
  private readonly connections = new Map<C, Connection<C>>();
  private readonly dirty = new Set<C>();
  private nextTag = 1;
  readonly counters: ClientCounters = {
    connections: 0,
    invokes: 0,
    retries: 0,
    rejected: 0,
    badFrames: 0,
  };
  /** The live queries of every connection (client frames `watch`, `unwatch`). */
  private readonly live: LiveQueries<C>;

  constructor(private readonly o: ClientConnectionsOptions<C>) {
    this.live = new LiveQueries<C>(
      (request) => this.o.invoke(request),
      (conn, frame) => this.send(conn, frame),
      () => this.nextTag++,
    );
  }

  /** Reads of live queries in flight (asked of the replica, not answered yet). */
  get reading(): number {
    return this.live.reading;
  }

  /** A connection opened; its frames come to `frame`, its end to `closed`. */
  open(conn: C): void {
    this.counters.connections++;
    this.connections.set(conn, {
      no: this.counters.connections,
      passed: false,
      greeted: false,
      session: null,
      inFlight: 0,
      unsettled: new Set(),
      lastSeq: 0,
      committedBelow: 0,
      weakSettled: false,
      confirms: [],
      lastSeen: '',
      waitingHello: null,
    });
  }

  /** The connection closed: its live queries end, and its ops report to it no more. */
  closed(conn: C): void {
    const c = this.connections.get(conn);
    this.live.closed(conn);
    this.connections.delete(conn);
    this.dirty.delete(conn);
    if (c !== undefined) for (const op of c.unsettled) op.owners.delete(conn);
    for (const op of this.byTag.values()) op.subscribers.delete(conn);
  }

  /** A frame the driver could not decode: the client gets an error with the decoder's code. */
  badFrame(conn: C, code: ErrorCode, message: string, opId?: string): void {
    this.counters.badFrames++;
    this.o.out(conn, { t: 'violation', kind: 'badFrame', detail: message });
    this.error(conn, code, message, opId);
  }

  /** A decoded frame from the client of `conn`. */
  frame(conn: C, f: ClientFrame): void {
    const c = this.connections.get(conn);
    if (c === undefined) return;
    if (f.t === 'hello') {
      // One hello per connection: a second could switch the session under ops in flight.
      if (!c.passed && c.waitingHello === null) return this.hello(conn, c, f);
      this.o.out(conn, { t: 'violation', kind: 'outOfOrder', detail: 'a second hello' });
      return this.error(
        conn,
        'out-of-order',
        'this connection already sent hello: open a new connection for another session',
      );
    }
    if (!c.greeted) {
      this.o.out(conn, { t: 'violation', kind: 'outOfOrder', detail: `${f.t} before welcome` });
      return this.error(
        conn,
        'out-of-order',
        `send hello and wait for welcome before ${f.t === 'invoke' ? 'invoking' : 'watching'}`,
        f.t === 'invoke' ? f.opId : undefined,
      );
    }
    if (f.t === 'watch') {
      const unavailable = this.o.unavailable();
      if (unavailable !== null)
        return this.send(conn, {
          t: 'unwatched',
          watchId: f.watchId,
          code: 'unavailable',
          message: unavailable,
        });
      // The first live query starts the replica's record of changed keys.
      if (this.live.size === 0) this.o.changedKeys();
      return this.live.watch(conn, f);
    }
    if (f.t === 'unwatch') return this.live.unwatch(conn, f.watchId);
    this.invokeFrame(conn, c, f);
  }

  private hello(conn: C, c: Connection<C>, f: Extract<ClientFrame, { t: 'hello' }>): void {
    if (f.version !== PROTOCOL_VERSION) {
      return this.error(
        conn,
        'version',
        `this replica speaks protocol ${PROTOCOL_VERSION}, the client ${f.version}: upgrade the older side`,
      );
    }
    if (!this.o.authorize(f.token)) {
      this.error(
        conn,
        'unauthorized',
        'this cluster needs a token: pass the one `creek dev` printed (or your --token-file) to connect()',
      );
      this.o.out(conn, { t: 'refused', reason: 'no valid token' });
      return;
    }
    c.passed = true;
    this.o.out(conn, { t: 'authenticated' });
    c.session = f.session ?? null;
    if (f.seen !== undefined && !this.caughtUp(f.seen)) {
      c.waitingHello = { seen: f.seen, deadline: this.o.now() + CATCH_UP_MS };
      return;
    }
    this.welcome(conn, c);
  }

  private welcome(conn: C, c: Connection<C>): void {
    c.greeted = true;
    c.waitingHello = null;
    this.send(conn, {
      t: 'welcome',
      version: PROTOCOL_VERSION,
      replica: this.o.replicaId,
      levels: ['weak', 'strong'],
      ops: this.o.opNames(),
      readOnly: this.o.readOnlyOps(),
    });
  }

  private invokeFrame(conn: C, c: Connection<C>, f: Extract<ClientFrame, { t: 'invoke' }>): void {
    const unavailable = this.o.unavailable();
    if (unavailable !== null) return this.error(conn, 'unavailable', unavailable, f.opId);
    // Op ids are the client's, unique per client: scoped by its session, which survives
    // reconnects (a retry is answered, never applied twice), or without one by the connection.
    // Unscoped, a second client reusing an op id got the first one's result and its op never ran.
    const key = c.session === null ? `#${c.no}/${f.opId}` : `${c.session}/${f.opId}`;
    const known = this.byOpId.get(key);
    if (known !== undefined) {
      // A retry: answer with what the op produced so far; later views reach this connection too.
      this.counters.retries++;
      for (const v of known.views) this.send(conn, v);
      if (!known.done) known.subscribers.add(conn);
      if (known.seq !== null && !known.settled && c.session !== null) own(conn, c, known);
      return;
    }
    if (f.tentative === false && f.level !== 'strong')
      return this.error(
        conn,
        'bad-frame',
        'tentative: false is for strong ops only: a weak op answers with its tentative view',
        f.opId,
      );
    if (c.inFlight >= MAX_IN_FLIGHT_PER_CONNECTION) {
      return this.error(
        conn,
        'busy',
        `more than ${MAX_IN_FLIGHT_PER_CONNECTION} invocations in flight on this connection: wait for responses`,
        f.opId,
      );
    }
    this.counters.invokes++;
    const session: SessionStamp | undefined =
      c.session !== null && f.seq !== undefined
        ? { id: c.session, seq: f.seq, acked: f.acked ?? 0 }
        : undefined;
    const op: ClientOp<C> = {
      opId: f.opId,
      key,
      startedAt: this.o.now(),
      strong: f.level === 'strong',
      stableOnly: f.tentative === false,
      tentativeObserved: false,
      seq: session?.seq ?? null,
      views: [],
      subscribers: new Set([conn]),
      lastTentative: null,
      done: false,
      settled: false,
      owners: new Set(),
    };
    const tag = this.nextTag++;
    this.byTag.set(tag, op);
    this.remember(op);
    c.inFlight++;
    if (session !== undefined) own(conn, c, op);
    const request = { op: f.op, args: f.args, strong: op.strong, tag };
    this.o.invoke(
      session === undefined || this.o.unsafeDropSessions === true
        ? request
        : { ...request, session },
    );
  }

  /** A response from the replica for one of our tags. */
  respond(r: Response): void {
    if (this.live.respond(r)) return;
    const op = this.byTag.get(r.tag);
    if (op === undefined) return;
    if (op.done) {
      // A weak op's stable response: nothing more for the client to see, but it is committed.
      if (r.level === 'stable') this.settle(op, r.tag, true);
      return;
    }
    const seconds = (this.o.now() - op.startedAt) / 1000;
    if (!op.tentativeObserved && r.level !== 'failed') {
      op.tentativeObserved = true;
      this.o.observe('tentative', seconds);
    }
    // Its caller waits for the stable view alone; a speculative failure is not final either.
    if (r.level === 'tentative' && op.stableOnly) return;
    let frame: ServerFrame;
    if (r.level === 'failed') {
      const error = r.outcome.ok ? 'failed' : r.outcome.error;
      const code: ErrorCode = error.startsWith('unknown operation')
        ? 'unknown-op'
        : 'invalid-arguments';
      frame = { t: 'error', opId: op.opId, code, message: error };
      op.done = true;
    } else if (
      r.level === 'stable' &&
      op.lastTentative !== null &&
      outcomesEqual(op.lastTentative, r.outcome)
    ) {
      frame = { t: 'confirm', opId: op.opId };
      op.done = true;
    } else {
      frame = { t: 'view', opId: op.opId, level: r.level, outcome: r.outcome, id: r.id };
      if (r.level === 'tentative') op.lastTentative = r.outcome;
      // A weak op answers once; a strong op is done at its stable view.
      op.done = r.level === 'stable' || !op.strong;
    }
    if (frame.t === 'confirm' || (frame.t === 'view' && frame.level === 'stable'))
      this.o.observe('stable', seconds);
    op.views.push(frame);
    for (const conn of op.subscribers) {
      if (frame.t === 'view') this.send(conn, this.forConnection(conn, frame, op));
      else if (frame.t === 'confirm') this.confirm(conn, op.opId);
      else this.send(conn, frame);
    }
    if (!op.done) return;
    for (const conn of op.subscribers) {
      const c = this.connections.get(conn);
      if (c !== undefined) c.inFlight = Math.max(0, c.inFlight - 1);
    }
    op.subscribers.clear();
    // Settled: committed (a stable answer), or never to be ordered (a weak read, a rejection).
    // The client learns these from the frame itself; a weak op answered tentatively needs a
    // `committed` frame later.
    if (r.level !== 'tentative' || r.id === null || op.seq === null) this.settle(op, r.tag, false);
  }

  /**
   * `afterTurn` may send something: an op's confirms or committed mark, a live query's new result,
   * the welcome of a hello that waited for this replica to catch up.
   */
  sendsThisTurn(): boolean {
    if (this.dirty.size > 0 || this.live.size > 0) return true;
    for (const c of this.connections.values()) if (c.waitingHello !== null) return true;
    return false;
  }

  /**
   * Call once per turn of the driver, after responses: re-runs the live queries whose keys changed,
   * sends the turn's `committed` frames and confirmations, and welcomes (or turns away) sessions
   * that were waiting for this replica to catch up.
   */
  afterTurn(): void {
    if (this.live.size > 0) this.live.changed(this.o.changedKeys());
    for (const conn of this.dirty) {
      const c = this.connections.get(conn);
      if (c === undefined) continue;
      if (c.confirms.length === 1) this.send(conn, { t: 'confirm', opId: c.confirms[0]! });
      else if (c.confirms.length > 1) this.send(conn, { t: 'confirms', opIds: c.confirms });
      c.confirms = [];
      if (!c.weakSettled) continue;
      let below = c.lastSeq + 1;
      for (const op of c.unsettled) if (op.seq! < below) below = op.seq!;
      if (below > c.committedBelow) {
        c.committedBelow = below;
        c.weakSettled = false;
        this.send(conn, { t: 'committed', below });
      }
    }
    this.dirty.clear();
    for (const [conn, c] of this.connections) {
      if (c.waitingHello === null) continue;
      if (this.caughtUp(c.waitingHello.seen)) this.welcome(conn, c);
      else if (this.o.now() > c.waitingHello.deadline) {
        c.waitingHello = null;
        this.error(
          conn,
          'unavailable',
          'this replica has not caught up with what your session saw at another replica: try another replica',
        );
        this.o.out(conn, { t: 'close' });
      }
    }
  }

  /** Invocations still waiting for their last view. */
  pending(): number {
    let n = 0;
    for (const op of this.byTag.values()) if (!op.done) n++;
    return n;
  }

  /**
   * A session's confirmations of one turn go out in one frame at its end, after the turn's views;
   * a client without a session gets each at once.
   */
  private confirm(conn: C, opId: string): void {
    const c = this.connections.get(conn);
    if (c === undefined || c.session === null) return this.send(conn, { t: 'confirm', opId });
    c.confirms.push(opId);
    this.dirty.add(conn);
  }

  private settle(op: ClientOp<C>, tag: number, report: boolean): void {
    this.byTag.delete(tag);
    if (op.settled) return;
    op.settled = true;
    for (const conn of op.owners) {
      const c = this.connections.get(conn);
      if (c === undefined) continue;
      c.unsettled.delete(op);
      if (report) c.weakSettled = true;
      this.dirty.add(conn);
    }
    op.owners.clear();
  }

  /**
   * True when this replica has every op a session saw (`seen`, per origin a count): its gapless
   * prefix, then the ops it has past a gap. Stops at the first op missing, so a replica far behind
   * costs one step per origin.
   */
  private caughtUp(seen: readonly number[]): boolean {
    const have = this.o.seen(null);
    for (let origin = 0; origin < seen.length; origin++)
      for (let e = (have[origin] ?? 0) + 1; e <= seen[origin]!; e++)
        if (!this.o.received(origin, e)) return false;
    return true;
  }

  /**
   * A view as this connection gets it. A session gets `seen` when it differs from the last one it
   * got, and an op id only on a weak op that is ordered: that one the client must see committed
   * before it acknowledges it, while a weak read never is, and a strong op's stable view says so.
   * (Fewer bytes per op, Correctables §6.)
   */
  private forConnection(
    conn: C,
    frame: Extract<ServerFrame, { t: 'view' }>,
    op: ClientOp<C>,
  ): ServerFrame {
    const c = this.connections.get(conn);
    if (c === undefined || c.session === null) return frame;
    const { id, ...rest } = frame;
    const view = !op.strong && id !== null && id !== undefined ? frame : rest;
    const seen = this.o.seen(c.session);
    const key = seen.join(',');
    if (key === c.lastSeen) return view;
    c.lastSeen = key;
    return { ...view, seen };
  }

  /**
   * Remembers the op for retries, forgetting the oldest beyond REMEMBERED_OPS. The order lives in
   * a ring of keys: taking a Map's first key instead walks past every deleted entry V8 has not
   * compacted yet, which made this the hottest line of a busy replica.
   */
  private remember(op: ClientOp<C>): void {
    const slot = this.rememberedCount++ % REMEMBERED_OPS;
    const oldest = this.rememberedKeys[slot];
    if (oldest !== undefined) this.byOpId.delete(oldest);
    this.rememberedKeys[slot] = op.key;
    this.byOpId.set(op.key, op);
  }

  private send(conn: C, frame: ServerFrame): void {
    this.o.out(conn, { t: 'frame', frame });
  }

  private error(conn: C, code: ErrorCode, message: string, opId?: string): void {
    this.counters.rejected++;
    this.send(
      conn,
      opId === undefined ? { t: 'error', code, message } : { t: 'error', opId, code, message },
    );
  }
}

/** Connection `conn` reports `op` in a `committed` frame once it settles. */
function own<C>(conn: C, c: Connection<C>, op: ClientOp<C>): void {
  c.unsettled.add(op);
  op.owners.add(conn);
  if (op.seq! > c.lastSeq) c.lastSeq = op.seq!;
}
