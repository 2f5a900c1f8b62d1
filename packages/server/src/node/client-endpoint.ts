import { LiveQueries } from '@creek/replica/host/live-queries.js';
import {
  decodeClientFrame,
  encodeFrame,
  MAX_IN_FLIGHT_PER_CONNECTION,
  PROTOCOL_VERSION,
  type ClientFrame,
  type ErrorCode,
  type ServerFrame,
} from '@creek/protocol';
import type { Logger } from 'pino';
import WebSocket, { type WebSocketServer } from 'ws';
import type { InvokeRequest } from '@creek/replica/core/replica.js';
import { CLOSE_CODE, ConnectionGuard, type Gate } from './connection-guard.js';
import { DEFAULT_EDGE_LIMITS } from './edge-limits.js';
import { newViolations, type EdgeEndpoint } from './edge-violations.js';
import { tokenMatches } from './bearer.js';
import { TurnCork } from './turn-cork.js';
import {
  outcomesEqual,
  type Outcome,
  type Response,
  type SessionStamp,
} from '@creek/replica/core/types.js';

/** One client-chosen op id: who waits for it and what it was told so far. */
interface ClientOp {
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
  readonly subscribers: Set<WebSocket>;
  lastTentative: Outcome | null;
  /** The client has its last view. */
  done: boolean;
  /** Committed, or never to be ordered (a weak read, a rejection): the session may acknowledge it. */
  settled: boolean;
  /** Connections that will report it in a `committed` frame once it settles. */
  readonly owners: Set<WebSocket>;
}

/** One client connection. */
interface Connection {
  /** Numbers connections, so op ids of clients without a session are scoped to their connection. */
  readonly no: number;
  greeted: boolean;
  session: string | null;
  inFlight: number;
  /** Session ops submitted here that have not settled (for `committed` frames). */
  readonly unsettled: Set<ClientOp>;
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
 * Op ids remembered to answer a retry (a client resubmitting after a reconnect does so within
 * seconds). Each costs its views and bookkeeping, about a kilobyte: 100,000 held ~100 MB per
 * replica under steady load; sessions make an older resubmission apply once anyway.
 */
const REMEMBERED_OPS = 10_000;
/** How long a reconnecting session waits for this replica to catch up before it is sent elsewhere. */
const CATCH_UP_MS = 3_000;

/**
 * Clients on `/client`: hello (protocol version, token, session), then invocations with
 * client-chosen op ids. Views stream back per op; when the stable result equals the last tentative
 * view, a `confirm` replaces it (Correctables §5.2). An invoke whose op id the replica already has
 * (a retry after a reconnect) is answered with that op's views so far, and never applied twice.
 *
 * Sessions (exactly-once and session guarantees across replicas):
 * - each invoke of a session carries its number and what the session acknowledged; the core makes
 *   a resubmission to another replica apply once (core/session-dedupe.ts). `committed` frames tell
 *   the client which of its weak ops are committed, so that it can acknowledge them.
 * - views carry `seen`, what this replica had when it answered; a session reconnecting with `seen`
 *   is welcomed only once this replica has all of it (read-your-writes, monotonic reads), or told
 *   to try another replica after CATCH_UP_MS. A replica's `seen` counts its own ops only up to the
 *   last one the session cannot resubmit itself (see `seen` below), so a session whose replica
 *   died before gossiping the session's writes is not stranded.
 */
export class ClientEndpoint {
  private readonly byTag = new Map<number, ClientOp>();
  private readonly byOpId = new Map<string, ClientOp>();
  /** Keys of remembered ops, oldest first from `rememberedCount % REMEMBERED_OPS` (a ring). */
  private readonly rememberedKeys: (string | undefined)[] = [];
  private rememberedCount = 0;
  private readonly connections = new Map<WebSocket, Connection>();
  private readonly dirty = new Set<WebSocket>();
  private nextTag = 1;
  private readonly cork = new TurnCork();
  readonly counters = {
    connections: 0,
    invokes: 0,
    retries: 0,
    rejected: 0,
    badFrames: 0,
    /** Per kind, connections that broke the protocol or an edge limit (ConnectionGuard). */
    violations: newViolations(),
  };
  /** This endpoint as the connection guard counts it. */
  readonly edge: EdgeEndpoint = { name: 'client', violations: this.counters.violations };

  constructor(
    private readonly replicaId: number,
    private readonly opNames: () => string[],
    private readonly tokens: ReadonlySet<string> | null,
    private readonly invoke: (request: InvokeRequest) => void,
    /** Why the replica takes no ops now (a message for the client), or null when it does. */
    private readonly unavailable: () => string | null,
    private readonly log: Logger,
    /** Seconds from an invoke to its first view ('tentative') or to its stable view ('stable'). */
    private readonly observe: (level: 'tentative' | 'stable', seconds: number) => void = () =>
      undefined,
    /**
     * Per origin replica, how many of its ops this replica has without a gap. For a session, this
     * replica's own component stops below the session's own uncommitted ops at the top of its ops
     * (the client resubmits those when it moves, so no replica needs them first).
     */
    private readonly seen: (session: string | null) => number[] = () => [],
    /** True when this replica has the op with this id (above the gapless prefix too). */
    private readonly received: (replica: number, eventNo: number) => boolean = () => false,
    /** The read-only ones among the ops: a client may show a cached result of those at once. */
    private readonly readOnlyOps: () => string[] = () => [],
    /** Keys whose value may have changed since the last call (Replica.takeChangedKeys). */
    private readonly changedKeys: () => ReadonlySet<string> = () => new Set(),
  ) {
    this.live = new LiveQueries<WebSocket>(
      (request) => this.invoke(request),
      (ws, frame) => this.send(ws, frame),
      () => this.nextTag++,
    );
  }

  /** The live queries of every connection (client frames `watch`, `unwatch`). */
  private readonly live: LiveQueries<WebSocket>;

  /**
   * Serves the connections of `wss`. Until its hello is accepted a connection is held to the
   * guard's limits (a deadline, a small frame size, a frame budget); the replica passes the guard
   * that also capped its upgrade, a bare server (tests) gets one with the default limits.
   */
  attach(
    wss: WebSocketServer,
    guard: ConnectionGuard = new ConnectionGuard(DEFAULT_EDGE_LIMITS, this.log),
  ): void {
    wss.on('connection', (ws, req) => {
      this.counters.connections++;
      const conn: Connection = {
        no: this.counters.connections,
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
      };
      this.connections.set(ws, conn);
      const gate = guard.gate(ws, req, this.edge);
      // A frame ws refuses (invalid UTF-8, over maxPayload, a bad opcode) is an 'error' on this
      // socket, which ws then closes with the matching code; unhandled, it would end the process.
      ws.on('error', (err) => guard.wsError(ws, this.edge, err));
      ws.on('message', (data, isBinary) => {
        if (!gate.admit(data)) return;
        const decoded = decodeClientFrame(isBinary ? data : data.toString());
        if (!decoded.ok) {
          this.counters.badFrames++;
          gate.record('badFrame', decoded.message);
          return this.error(ws, decoded.code, decoded.message, decoded.opId);
        }
        const f = decoded.frame;
        if (f.t === 'hello') {
          // One hello per connection: a second could switch the session under ops in flight.
          if (!gate.authenticated && conn.waitingHello === null)
            return this.hello(ws, conn, f, gate);
          gate.record('outOfOrder', 'a second hello');
          return this.error(
            ws,
            'out-of-order',
            'this connection already sent hello: open a new connection for another session',
          );
        }
        if (!conn.greeted) {
          gate.record('outOfOrder', `${f.t} before welcome`);
          return this.error(
            ws,
            'out-of-order',
            `send hello and wait for welcome before ${f.t === 'invoke' ? 'invoking' : 'watching'}`,
            f.t === 'invoke' ? f.opId : undefined,
          );
        }
        if (f.t === 'watch') {
          const unavailable = this.unavailable();
          if (unavailable !== null)
            return this.send(ws, {
              t: 'unwatched',
              watchId: f.watchId,
              code: 'unavailable',
              message: unavailable,
            });
          // The first live query starts the replica's record of changed keys.
          if (this.live.size === 0) this.changedKeys();
          return this.live.watch(ws, f);
        }
        if (f.t === 'unwatch') return this.live.unwatch(ws, f.watchId);
        this.invokeFrame(ws, conn, f);
      });
      ws.on('close', () => {
        this.live.closed(ws);
        this.connections.delete(ws);
        this.dirty.delete(ws);
        for (const op of conn.unsettled) op.owners.delete(ws);
        for (const op of this.byTag.values()) op.subscribers.delete(ws);
      });
    });
  }

  private hello(
    ws: WebSocket,
    conn: Connection,
    f: Extract<ClientFrame, { t: 'hello' }>,
    gate: Gate,
  ): void {
    if (f.version !== PROTOCOL_VERSION) {
      return this.error(
        ws,
        'version',
        `this replica speaks protocol ${PROTOCOL_VERSION}, the client ${f.version}: upgrade the older side`,
      );
    }
    if (this.tokens !== null && (f.token === undefined || !tokenMatches(f.token, this.tokens))) {
      this.error(
        ws,
        'unauthorized',
        'this cluster needs a token: pass the one `creek dev` printed (or your --token-file) to connect()',
      );
      gate.refuse('auth', CLOSE_CODE.policy, 'no valid token');
      return;
    }
    gate.pass();
    conn.session = f.session ?? null;
    if (f.seen !== undefined && !this.caughtUp(f.seen)) {
      conn.waitingHello = { seen: f.seen, deadline: performance.now() + CATCH_UP_MS };
      return;
    }
    this.welcome(ws, conn);
  }

  private welcome(ws: WebSocket, conn: Connection): void {
    conn.greeted = true;
    conn.waitingHello = null;
    this.send(ws, {
      t: 'welcome',
      version: PROTOCOL_VERSION,
      replica: this.replicaId,
      levels: ['weak', 'strong'],
      ops: this.opNames(),
      readOnly: this.readOnlyOps(),
    });
  }

  private invokeFrame(
    ws: WebSocket,
    conn: Connection,
    f: Extract<ClientFrame, { t: 'invoke' }>,
  ): void {
    const unavailable = this.unavailable();
    if (unavailable !== null) return this.error(ws, 'unavailable', unavailable, f.opId);
    // Op ids are the client's, unique per client: scoped by its session, which survives
    // reconnects (a retry is answered, never applied twice), or without one by the connection.
    // Unscoped, a second client reusing an op id got the first one's result and its op never ran.
    const key = conn.session === null ? `#${conn.no}/${f.opId}` : `${conn.session}/${f.opId}`;
    const known = this.byOpId.get(key);
    if (known !== undefined) {
      // A retry: answer with what the op produced so far; later views reach this socket too.
      this.counters.retries++;
      for (const v of known.views) this.send(ws, v);
      if (!known.done) known.subscribers.add(ws);
      if (known.seq !== null && !known.settled && conn.session !== null) own(ws, conn, known);
      return;
    }
    if (f.tentative === false && f.level !== 'strong')
      return this.error(
        ws,
        'bad-frame',
        'tentative: false is for strong ops only: a weak op answers with its tentative view',
        f.opId,
      );
    if (conn.inFlight >= MAX_IN_FLIGHT_PER_CONNECTION) {
      return this.error(
        ws,
        'busy',
        `more than ${MAX_IN_FLIGHT_PER_CONNECTION} invocations in flight on this connection: wait for responses`,
        f.opId,
      );
    }
    this.counters.invokes++;
    const session: SessionStamp | undefined =
      conn.session !== null && f.seq !== undefined
        ? { id: conn.session, seq: f.seq, acked: f.acked ?? 0 }
        : undefined;
    const op: ClientOp = {
      opId: f.opId,
      key,
      startedAt: performance.now(),
      strong: f.level === 'strong',
      stableOnly: f.tentative === false,
      tentativeObserved: false,
      seq: session?.seq ?? null,
      views: [],
      subscribers: new Set([ws]),
      lastTentative: null,
      done: false,
      settled: false,
      owners: new Set(),
    };
    const tag = this.nextTag++;
    this.byTag.set(tag, op);
    this.remember(op);
    conn.inFlight++;
    if (session !== undefined) own(ws, conn, op);
    const request = { op: f.op, args: f.args, strong: op.strong, tag };
    this.invoke(session === undefined ? request : { ...request, session });
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
    const seconds = (performance.now() - op.startedAt) / 1000;
    if (!op.tentativeObserved && r.level !== 'failed') {
      op.tentativeObserved = true;
      this.observe('tentative', seconds);
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
      this.observe('stable', seconds);
    op.views.push(frame);
    for (const ws of op.subscribers) {
      if (frame.t === 'view') this.send(ws, this.forConnection(ws, frame, op));
      else if (frame.t === 'confirm') this.confirm(ws, op.opId);
      else this.send(ws, frame);
    }
    if (!op.done) return;
    for (const ws of op.subscribers) {
      const conn = this.connections.get(ws);
      if (conn !== undefined) conn.inFlight = Math.max(0, conn.inFlight - 1);
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
    for (const conn of this.connections.values()) if (conn.waitingHello !== null) return true;
    return false;
  }

  /**
   * Call once per turn of the event loop, after responses: sends the turn's `committed` frames and
   * welcomes (or turns away) sessions that were waiting for this replica to catch up.
   */
  afterTurn(): void {
    if (this.live.size > 0) this.live.changed(this.changedKeys());
    this.sendTurnFrames();
    // Every frame of the turn, views included, leaves now: one write per connection.
    this.cork.release();
  }

  private sendTurnFrames(): void {
    for (const ws of this.dirty) {
      const conn = this.connections.get(ws);
      if (conn === undefined) continue;
      if (conn.confirms.length === 1) this.send(ws, { t: 'confirm', opId: conn.confirms[0]! });
      else if (conn.confirms.length > 1) this.send(ws, { t: 'confirms', opIds: conn.confirms });
      conn.confirms = [];
      if (!conn.weakSettled) continue;
      let below = conn.lastSeq + 1;
      for (const op of conn.unsettled) if (op.seq! < below) below = op.seq!;
      if (below > conn.committedBelow) {
        conn.committedBelow = below;
        conn.weakSettled = false;
        this.send(ws, { t: 'committed', below });
      }
    }
    this.dirty.clear();
    for (const [ws, conn] of this.connections) {
      if (conn.waitingHello === null) continue;
      if (this.caughtUp(conn.waitingHello.seen)) this.welcome(ws, conn);
      else if (performance.now() > conn.waitingHello.deadline) {
        conn.waitingHello = null;
        this.error(
          ws,
          'unavailable',
          'this replica has not caught up with what your session saw at another replica: try another replica',
        );
        ws.close();
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
  private confirm(ws: WebSocket, opId: string): void {
    const conn = this.connections.get(ws);
    if (conn === undefined || conn.session === null) return this.send(ws, { t: 'confirm', opId });
    conn.confirms.push(opId);
    this.dirty.add(ws);
  }

  private settle(op: ClientOp, tag: number, report: boolean): void {
    this.byTag.delete(tag);
    if (op.settled) return;
    op.settled = true;
    for (const ws of op.owners) {
      const conn = this.connections.get(ws);
      if (conn === undefined) continue;
      conn.unsettled.delete(op);
      if (report) conn.weakSettled = true;
      this.dirty.add(ws);
    }
    op.owners.clear();
  }

  /**
   * True when this replica has every op a session saw (`seen`, per origin a count): its gapless
   * prefix, then the ops it has past a gap. Stops at the first op missing, so a replica far behind
   * costs one step per origin.
   */
  private caughtUp(seen: readonly number[]): boolean {
    const have = this.seen(null);
    for (let origin = 0; origin < seen.length; origin++)
      for (let e = (have[origin] ?? 0) + 1; e <= seen[origin]!; e++)
        if (!this.received(origin, e)) return false;
    return true;
  }

  /**
   * A view as this connection gets it. A session gets `seen` when it differs from the last one it
   * got, and an op id only on a weak op that is ordered: that one the client must see committed
   * before it acknowledges it, while a weak read never is, and a strong op's stable view says so.
   * (Fewer bytes per op, Correctables §6.)
   */
  private forConnection(
    ws: WebSocket,
    frame: Extract<ServerFrame, { t: 'view' }>,
    op: ClientOp,
  ): ServerFrame {
    const conn = this.connections.get(ws);
    if (conn === undefined || conn.session === null) return frame;
    const { id, ...rest } = frame;
    const view = !op.strong && id !== null && id !== undefined ? frame : rest;
    const seen = this.seen(conn.session);
    const key = seen.join(',');
    if (key === conn.lastSeen) return view;
    conn.lastSeen = key;
    return { ...view, seen };
  }

  /**
   * Remembers the op for retries, forgetting the oldest beyond REMEMBERED_OPS. The order lives in
   * a ring of keys: taking a Map's first key instead walks past every deleted entry V8 has not
   * compacted yet, which made this the hottest line of a busy replica.
   */
  private remember(op: ClientOp): void {
    const slot = this.rememberedCount++ % REMEMBERED_OPS;
    const oldest = this.rememberedKeys[slot];
    if (oldest !== undefined) this.byOpId.delete(oldest);
    this.rememberedKeys[slot] = op.key;
    this.byOpId.set(op.key, op);
  }

  private send(ws: WebSocket, frame: ServerFrame): void {
    if (ws.readyState !== WebSocket.OPEN) return;
    this.cork.hold(ws);
    ws.send(encodeFrame(frame));
  }

  private error(ws: WebSocket, code: ErrorCode, message: string, opId?: string): void {
    this.counters.rejected++;
    this.send(
      ws,
      opId === undefined ? { t: 'error', code, message } : { t: 'error', opId, code, message },
    );
  }
}

/** Connection `ws` reports `op` in a `committed` frame once it settles. */
function own(ws: WebSocket, conn: Connection, op: ClientOp): void {
  conn.unsettled.add(op);
  op.owners.add(ws);
  if (op.seq! > conn.lastSeq) conn.lastSeq = op.seq!;
}
