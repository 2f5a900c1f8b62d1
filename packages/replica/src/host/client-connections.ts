import type { AccessDenied } from '@creek/app';
import {
  CLIENT_FRAME_SINCE,
  clientFrameAllowed,
  MAX_IN_FLIGHT_PER_CONNECTION,
  maxSeen,
  negotiateClientVersion,
  seenEntries,
  seenFromWire,
  seenOnWire,
  SPOKEN_CLIENT_VERSIONS,
  type SeenOnWire,
  type ClientFrame,
  type ClientVersions,
  type ErrorCode,
  type ReplicaUrls,
  type ServerFrame,
} from '@creek/protocol';
import type { InvokeRequest } from '../core/replica.js';
import { scopedSession } from '../core/session-dedupe.js';
import type { Response, SessionStamp } from '../core/types.js';
import type {
  ClientConnectionsOptions,
  ClientCounters,
  ClientOp,
  Connection,
  Hello,
} from './client-connection-types.js';
import {
  ConnectionAuth,
  frozenUser,
  NO_USER_TOKENS,
  tokenTooLong,
  type TokenVerdict,
} from './connection-auth.js';
import { ContextAnswers } from './context-answers.js';
import { ContextTokens, NO_CONTEXTS } from './context-tokens.js';
import { LiveQueries } from './live-queries.js';
import { opFrame } from './op-frames.js';
import { RememberedOps } from './remembered-ops.js';

export type { TokenVerdict } from './connection-auth.js';
export type {
  ClientConnectionsOptions,
  ClientCounters,
  ConnectionOutput,
} from './client-connection-types.js';

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
 *
 * Users (with `verifiesTokens`): a hello may carry the user's token. Verifying it is the driver's
 * (keys may have to be fetched): the connection asks (`verify`) and waits, and the verdict comes
 * back as an input (`verified`), so this stays pure and the simulator can drive it. Every op and
 * live query of the connection then runs as that user (InvokeRequest.user), after `access` let it
 * through: a refused op is never ordered. A session is its user's: op ids and `seen` are looked up
 * under the session scoped by its user, so another user naming the session reaches none of it.
 * The replica asks for a fresh token before the connection's expires (`auth-expiring`), takes one
 * of the same user (`reauth`), and closes the connection once its token expired (`auth-expired`).
 */
export class ClientConnections<C> {
  private readonly byTag = new Map<number, ClientOp<C>>();
  /** Ops by key, to answer a retry (the newest REMEMBERED_OPS). */
  private readonly byOpId = new RememberedOps<ClientOp<C>>();
  private readonly connections = new Map<C, Connection<C>>();
  private readonly dirty = new Set<C>();
  private nextTag = 1;
  /** When some connection's token next needs attention (ConnectionAuth.nextDue; may be early). */
  private authDue = Number.POSITIVE_INFINITY;
  readonly counters: ClientCounters = {
    connections: 0,
    invokes: 0,
    retries: 0,
    rejected: 0,
    badFrames: 0,
  };
  /** The live queries of every connection (client frames `watch`, `unwatch`). */
  private readonly live: LiveQueries<C>;
  /** The members the welcomed connections were last told of (`members` option). */
  private toldMembers: ReplicaUrls | null = null;

  /** The client protocol versions this replica speaks, and when each frame kind came. */
  private readonly speaks: ClientVersions;
  private readonly since: ReadonlyMap<string, number>;
  /** Signs and checks context tokens; null when the driver gave no MAC (none are made or taken). */
  private readonly contexts: ContextTokens | null;
  /** Answers context requests, holding those this replica has not caught up with yet. */
  private readonly contextAnswers: ContextAnswers<C>;

  constructor(private readonly o: ClientConnectionsOptions<C>) {
    this.speaks = o.versions?.speaks ?? SPOKEN_CLIENT_VERSIONS;
    this.since = o.versions?.since ?? CLIENT_FRAME_SINCE;
    this.contexts = o.contextMac === undefined ? null : new ContextTokens(o.contextMac);
    this.contextAnswers = new ContextAnswers<C>(this.contexts, {
      caughtUp: (seen) => this.caughtUp(seen),
      have: () => this.o.seen(null),
      now: () => this.o.now(),
      send: (conn, frame) => this.send(conn, frame),
      waitMs: CATCH_UP_MS,
      unsafeAnswerUnheld: o.unsafeAnswerUnheld === true,
    });
    this.live = new LiveQueries<C>(
      (request) => this.o.invoke(request),
      (conn, frame) => this.send(conn, frame),
      () => this.nextTag++,
      undefined,
      o.unsafeStableOwnOps === true,
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
      sessionKey: null,
      auth: new ConnectionAuth(),
      pendingHello: null,
      inFlight: 0,
      unsettled: new Set(),
      lastSeq: 0,
      committedBelow: 0,
      weakSettled: false,
      confirms: [],
      lastSeen: '',
      waitingHello: null,
      waitingContexts: [],
      version: this.speaks.oldest,
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
    // Before hello too: a client measures each replica's distance on a short connection of its own.
    if (f.t === 'ping') return this.send(conn, { t: 'pong', n: f.n });
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
    // A fresh token is welcome once the hello passed: the replica asks for one as soon as it took
    // the hello's token, which may be before its welcome (a session waiting for it to catch up).
    if (f.t === 'reauth' && c.passed) return this.refresh(conn, c, f.token);
    if (!c.greeted) {
      this.o.out(conn, { t: 'violation', kind: 'outOfOrder', detail: `${f.t} before welcome` });
      const what = {
        invoke: 'invoking',
        watch: 'watching',
        unwatch: 'unwatching',
        reauth: 'sending a fresh token',
        context: 'asking for a context token',
      };
      return this.error(
        conn,
        'out-of-order',
        `send hello and wait for welcome before ${what[f.t]}`,
        f.t === 'invoke' ? f.opId : undefined,
      );
    }
    if (f.t === 'reauth') return this.refresh(conn, c, f.token); // greeted: passed too
    // A token that expired lets nothing more in: the connection is closing (afterTurn says so).
    if (c.auth.expired(this.o.now())) return this.expire(conn, c);
    if (f.t === 'watch') {
      const unavailable = this.o.unavailable();
      const denied = unavailable === null ? this.denied(f.op, f.args, c) : null;
      if (unavailable !== null || denied !== null)
        return this.send(conn, {
          t: 'unwatched',
          watchId: f.watchId,
          code: denied?.code ?? 'unavailable',
          message: denied?.message ?? unavailable!,
        });
      // The first live query starts the replica's record of changed keys.
      if (this.live.size === 0) this.o.changedKeys();
      // It runs as the user who watches.
      return this.live.watch(conn, { ...f, user: c.auth.user }, c.sessionKey);
    }
    if (f.t === 'unwatch') return this.live.unwatch(conn, f.watchId);
    if (f.t === 'context') return this.context(conn, c, f.n, seenFromWire(f));
    this.invokeFrame(conn, c, f);
  }

  private hello(conn: C, c: Connection<C>, f: Hello): void {
    // From here on `seen` is the whole seen vector, later incarnations' origins included.
    const seen = seenFromWire(f);
    f = { ...f, ...(seen === undefined ? {} : { seen }) };
    const negotiated = negotiateClientVersion(this.speaks, f);
    if (!negotiated.ok) return this.error(conn, 'version', negotiated.message);
    c.version = negotiated.version;
    if (!this.o.authorize(f.token)) {
      this.error(
        conn,
        'unauthorized',
        'this cluster needs a token: pass the one `creek dev` printed (or your --token-file) to connect()',
      );
      this.o.out(conn, { t: 'refused', reason: 'no valid token' });
      return;
    }
    if (f.after !== undefined) {
      // The session starts after another client's context: wait for its ops as for its own.
      const opened = this.contexts?.open(f.after) ?? { ok: false, message: NO_CONTEXTS };
      if (!opened.ok) {
        this.error(conn, 'unauthorized', opened.message);
        this.o.out(conn, { t: 'refused', reason: 'context token refused' });
        return;
      }
      if (this.o.unsafeIgnoreAfter !== true) f = { ...f, seen: maxSeen(f.seen, opened.seen) };
    }
    c.passed = true;
    this.o.out(conn, { t: 'authenticated' });
    if (f.auth === undefined) return this.greet(conn, c, f);
    const refusal = this.o.verifiesTokens === true ? tokenTooLong(f.auth) : NO_USER_TOKENS;
    if (refusal !== null) return this.refuse(conn, 'unauthorized', refusal);
    // The session and what it saw wait for the user: the session is that user's.
    c.auth.verifying = 'hello';
    c.pendingHello = f;
    this.o.out(conn, { t: 'verify', token: f.auth });
  }

  /**
   * The driver's verdict on the token of a hello or a refresh of `conn`. A hello's: the
   * connection's ops run as its user, or the hello is refused. A refresh's: the connection's token
   * is the fresh one, or it keeps its previous one until that one expires.
   */
  verified(conn: C, v: TokenVerdict): void {
    const c = this.connections.get(conn);
    if (c === undefined || c.auth.verifying === null) return;
    const purpose = c.auth.verifying;
    c.auth.verifying = null;
    const now = this.o.now();
    if (purpose === 'hello') {
      const hello = c.pendingHello!;
      c.pendingHello = null;
      if (!v.ok) return this.refuse(conn, v.code, v.message);
      c.auth.accept(frozenUser(v.user), v.validForMs, now);
      this.authDue = Math.min(this.authDue, c.auth.nextDue());
      return this.greet(conn, c, hello);
    }
    if (!v.ok) return this.send(conn, { t: 'auth-refused', code: v.code, message: v.message });
    const was = c.auth.user!.id;
    if (v.user.id !== was)
      return this.send(conn, {
        t: 'auth-refused',
        code: 'unauthorized',
        message: `the fresh token is for user '${v.user.id}', this connection's for '${was}': a session is one user's, so sign in as another user on a new connection`,
      });
    const user = frozenUser(v.user);
    c.auth.accept(user, v.validForMs, now);
    this.authDue = Math.min(this.authDue, c.auth.nextDue());
    // Its live queries run with the fresh claims from their next read on.
    this.live.setUser(conn, user);
    this.send(conn, { t: 'authed', user: user.id, expiresInMs: c.auth.remaining(now)! });
  }

  /** A client asks for a context token covering `seen` (ContextAnswers.request). */
  private context(conn: C, c: Connection<C>, n: number, seen: number[] | undefined): void {
    if (!clientFrameAllowed(c.version, 'context', this.since))
      return this.error(
        conn,
        'out-of-order',
        `context tokens came with client protocol ${this.since.get('context') ?? '?'}; this connection runs at ${c.version}`,
      );
    this.contextAnswers.request(conn, c, n, seen);
  }

  /** A client's fresh token (client frame `reauth`): the driver verifies it, or it is refused now. */
  private refresh(conn: C, c: Connection<C>, token: string): void {
    const refusal: [ErrorCode, string] | null =
      this.o.verifiesTokens !== true
        ? ['unauthorized', NO_USER_TOKENS]
        : c.auth.user === null
          ? [
              'unauthorized',
              'this connection is anonymous: a session is one user’s, so sign in on a new connection',
            ]
          : c.auth.verifying !== null
            ? ['busy', 'a fresh token of this connection is being verified: wait for its answer']
            : tokenTooLong(token) === null
              ? null
              : ['unauthorized', tokenTooLong(token)!];
    if (refusal !== null)
      return this.send(conn, { t: 'auth-refused', code: refusal[0], message: refusal[1] });
    c.auth.verifying = 'refresh';
    this.o.out(conn, { t: 'verify', token });
  }

  /** A hello refused: why, then the connection closes (unavailable: try another replica). */
  private refuse(conn: C, code: 'unauthorized' | 'unavailable', message: string): void {
    this.error(conn, code, message);
    if (code === 'unavailable') this.o.out(conn, { t: 'close' });
    else this.o.out(conn, { t: 'refused', reason: 'user token refused' });
  }

  /** The connection's token expired unrefreshed: it is told so, and closed. */
  private expire(conn: C, c: Connection<C>): void {
    if (c.auth.closing) return;
    c.auth.closing = true;
    this.send(conn, {
      t: 'auth-expired',
      message: `the token of user '${c.auth.user?.id ?? ''}' expired and no fresh one came: reconnect with a fresh token (ops sent here stay in their session)`,
    });
    this.o.out(conn, { t: 'close' });
  }

  /** Why the connection's user may not call `op(args)`, or null when it may. */
  private denied(op: string, args: unknown, c: Connection<C>): AccessDenied | null {
    return this.o.access?.(op, c.auth.user, args) ?? null;
  }

  /** The hello of `c` goes on, its user known: its session, then welcome once caught up. */
  private greet(conn: C, c: Connection<C>, f: Hello): void {
    c.session = f.session ?? null;
    c.sessionKey =
      f.session === undefined ? null : scopedSession(f.session, c.auth.user ?? undefined);
    if (f.seen !== undefined && !this.caughtUp(f.seen)) {
      c.waitingHello = { seen: f.seen, deadline: this.o.now() + CATCH_UP_MS };
      return;
    }
    this.welcome(conn, c);
  }

  private welcome(conn: C, c: Connection<C>): void {
    c.greeted = true;
    c.waitingHello = null;
    const members = this.o.members?.();
    if (members !== undefined) this.toldMembers ??= members;
    this.send(conn, {
      t: 'welcome',
      version: c.version,
      replica: this.o.replicaId,
      levels: ['weak', 'strong'],
      ops: this.o.opNames(),
      readOnly: this.o.readOnlyOps(),
      ...(this.o.verifiesTokens === true
        ? {
            auth: {
              user: c.auth.user?.id ?? null,
              ...(c.auth.remaining(this.o.now()) === undefined
                ? {}
                : { expiresInMs: c.auth.remaining(this.o.now())! }),
            },
          }
        : {}),
      ...(members === undefined ? {} : { members }),
    });
  }

  private invokeFrame(conn: C, c: Connection<C>, f: Extract<ClientFrame, { t: 'invoke' }>): void {
    const unavailable = this.o.unavailable();
    if (unavailable !== null) return this.error(conn, 'unavailable', unavailable, f.opId);
    // Op ids are the client's, unique per client: scoped by its session, which survives
    // reconnects (a retry is answered, never applied twice), or without one by the connection.
    // Unscoped, a second client reusing an op id got the first one's result and its op never ran.
    const key = c.sessionKey === null ? `#${c.no}/${f.opId}` : `${c.sessionKey}/${f.opId}`;
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
    // Before it is ordered: a refused op never takes effect (a retry above was let in before).
    const denied = this.denied(f.op, f.args, c);
    if (denied !== null) return this.error(conn, denied.code, denied.message, f.opId);
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
    this.byOpId.remember(op.key, op);
    c.inFlight++;
    if (session !== undefined) own(conn, c, op);
    const user = c.auth.user;
    const request: InvokeRequest = {
      op: f.op,
      args: f.args,
      strong: op.strong,
      tag,
      ...(user === null ? {} : { user }),
    };
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
    const frame = opFrame(op, r);
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
    if (this.membersChanged()) return true;
    if (this.o.now() >= this.authDue) return true;
    for (const c of this.connections.values())
      if (c.waitingHello !== null || c.waitingContexts.length > 0) return true;
    return false;
  }

  /**
   * Call once per turn of the driver, after responses: re-runs the live queries whose keys changed,
   * sends the turn's `committed` frames and confirmations, and welcomes (or turns away) sessions
   * that were waiting for this replica to catch up.
   */
  afterTurn(): void {
    if (this.live.size > 0) this.live.changed(this.o.changedKeys());
    if (this.membersChanged()) this.tellMembers();
    for (const conn of this.dirty) {
      const c = this.connections.get(conn);
      if (c === undefined) continue;
      // With what the replica has now, the confirmed ops included (their views did not count them).
      const seen = c.confirms.length === 0 ? {} : this.seenIfChanged(c);
      if (c.confirms.length === 1) this.send(conn, { t: 'confirm', opId: c.confirms[0]!, ...seen });
      else if (c.confirms.length > 1)
        this.send(conn, { t: 'confirms', opIds: c.confirms, ...seen });
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
    if (this.o.now() >= this.authDue) this.tokensDue();
    for (const [conn, c] of this.connections) {
      if (c.waitingContexts.length > 0) this.contextAnswers.afterTurn(conn, c);
      if (c.waitingHello === null) continue;
      if (this.caughtUp(c.waitingHello.seen)) this.welcome(conn, c);
      else if (this.o.now() > c.waitingHello.deadline) {
        c.waitingHello = null;
        this.error(
          conn,
          'unavailable',
          'this replica has not caught up with what your session saw at another replica (or the context token it started after): try another replica',
        );
        this.o.out(conn, { t: 'close' });
      }
    }
  }

  /** The members changed since the welcomed connections were last told (`members` option). */
  private membersChanged(): boolean {
    const members = this.o.members?.();
    if (members === undefined || members === this.toldMembers) return false;
    if (this.toldMembers !== null && sameMembers(members, this.toldMembers)) {
      this.toldMembers = members;
      return false;
    }
    return true;
  }

  /** Tells every welcomed connection the members' client URLs now (a replacement, say). */
  private tellMembers(): void {
    const members = this.o.members!();
    this.toldMembers = members;
    for (const [conn, c] of this.connections)
      if (c.greeted) this.send(conn, { t: 'members', members });
  }

  /** Asks for fresh tokens before they expire, and closes connections whose token expired. */
  private tokensDue(): void {
    const now = this.o.now();
    let next = Number.POSITIVE_INFINITY;
    for (const [conn, c] of this.connections) {
      const due = c.auth.due(now);
      if (due === 'ask') this.send(conn, { t: 'auth-expiring', inMs: c.auth.remaining(now)! });
      else if (due === 'expired') this.expire(conn, c);
      if (!c.auth.closing) next = Math.min(next, c.auth.nextDue());
    }
    this.authDue = next;
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
   * costs one step per origin. Where reads see only the committed state, those ops must also be
   * committed here (`readsSee`).
   */
  private caughtUp(seen: readonly number[]): boolean {
    const have = this.o.seen(null);
    for (const [origin, n] of seenEntries(seen))
      for (let e = (have[origin] ?? 0) + 1; e <= n; e++)
        if (!this.o.received(origin, e)) return false;
    // Held is not enough where reads see only the committed state: the ops must be committed here.
    return this.o.readsSee?.(seen) ?? true;
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
    return { ...view, ...this.seenIfChanged(c) };
  }

  /** What this replica has for `c`'s session (ClientConnectionsOptions.seen), if it changed. */
  private seenIfChanged(c: Connection<C>): SeenOnWire {
    if (c.session === null) return {};
    const seen = this.o.seen(c.sessionKey);
    const key = seen.join(',');
    if (key === c.lastSeen) return {};
    c.lastSeen = key;
    return seenOnWire(seen);
  }

  /**
   * Every frame to a client goes here, and a kind newer than the connection's version is held
   * back (CLIENT_FRAME_SINCE): the code that adds a kind must serve older clients without it.
   */
  private send(conn: C, frame: ServerFrame): void {
    if (this.since.size > 0) {
      const c = this.connections.get(conn);
      if (c !== undefined && !clientFrameAllowed(c.version, frame.t, this.since)) return;
    }
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

/** The same replicas at the same URLs, in the same order. */
function sameMembers(a: ReplicaUrls, b: ReplicaUrls): boolean {
  return a.length === b.length && a.every((m, i) => m.id === b[i]!.id && m.url === b[i]!.url);
}
