import {
  decodeServerFrame,
  helloVersionFields,
  type ClientFrame,
  type ReplicaUrls,
  type ServerFrame,
} from '@creek/protocol';
import type { ConsistencyLevel, ViewSink } from '../binding.js';
import { connectFailure } from '../connect-failure.js';
import { ClientClosed, ProtocolError, SignedOut, type CreekError } from '../errors.js';
import { ContextRequests, type ContextSink } from './context-requests.js';
import type { StoredOp, StoredSession } from '../offline-storage.js';
import { Failover } from './failover.js';
import { isOpAnswer, opAnswered, type AnswerContext } from './op-answers.js';
import { errorNamingNoOp, welcomedAtUnspokenVersion, type RefusalContext } from './refusals.js';
import type { KnownReplica } from './known-replicas.js';
import { OfflineQueue, queue, storedSession } from './offline-queue.js';
import { OpTable, type SessionOp } from './op-table.js';
import type { OptimisticChange } from './optimistic.js';
import type { ClientSessionConfig, ConnectionStatus, SessionOutput } from './session-io.js';
import { SeenVector } from './seen-vector.js';
import { SendWindow } from './send-window.js';
import { SignIn, type Identity } from './sign-in.js';
import { readToken } from './user-token.js';
import { watchFrame, WatchTable, type WatchSink } from './watches.js';

/**
 * The client's side of a Creek session, as a deterministic state machine: no sockets, timers,
 * clocks or randomness; events come in as calls, and what to do about them goes out through
 * `out`. It holds the op table (numbering, retries and resubmission with the same op id and
 * number, abandon), the offline queue, the live queries and the failover policy; a driver owns the
 * connections, the timers and the storage, and a simulator can drive it over its own network and
 * clock. Callers' sinks are called from within the calls, as views and errors arrive.
 *
 * Session guarantees across replicas: views say what their replica had (`seen`); the session keeps
 * the most it has seen and presents it when it reconnects, and a replica welcomes it only once it
 * has caught up (else the session tries the next one): read-your-writes and monotonic reads.
 */
export class ClientSession {
  private readonly ops: OpTable;
  private readonly window: SendWindow;
  private readonly watches = new WatchTable((why) => this.leave(`unavailable: ${why}`));
  private readonly failover: Failover;
  private readonly offline: OfflineQueue;
  private sessionId: string;
  private persistent: boolean;
  private readonly token: string | undefined;
  /** The user's tokens and the identity state (ClientSessionConfig.auth). */
  private readonly signIn: SignIn;
  private readonly newSession: () => string;
  /** The session's ops and live queries are being ended, as its user's: no handles on them. */
  private ending = false;
  /** Numbers of the ops restored from a storage: an earlier client may have sent them. */
  private readonly restoredSeqs = new Set<number>();
  private readonly now: () => number;
  private readonly out: (o: SessionOutput) => void;
  /** What the session has seen (seen-vector.ts). */
  private readonly seen = new SeenVector();
  /** The context token it starts after, and its requests for tokens (`context`). */
  private readonly contexts: ContextRequests;
  /** Counts connections, so that a `committed` frame is applied to ops sent on its connection. */
  private connection = 0;
  /** The session listens to the events of `connection` (false once it left it, or it closed). */
  private attached = false;
  /** That connection's URL, whether it opened, and why it failed if its driver said. */
  private url = '';
  private opened = false;
  private failure: string | undefined;
  /** Welcomed on that connection: ops go out. */
  private ready = false;
  /** Why this session takes no more ops (`close()`, or a refused token); null while it does. */
  private closedBy: ((sent: boolean) => CreekError) | null = null;
  /** What closed it: a refused user may be replaced (`changeAuth`), a closed client not. */
  private closedFor: 'close' | 'cannot-connect' | 'refused' | null = null;
  /** When the current connection last brought a frame (the session's clock). */
  private lastFrameAt = 0;
  /** When it last brought a stable answer or a commit (or was welcomed). */
  private lastStableAt = 0;
  private currentStatus: ConnectionStatus = 'connecting';
  /** The replica that welcomed the current connection (null until then). */
  private replica: number | null = null;

  /** What the rules for refusals (refusals.ts) read and act on. */
  private readonly refusals: RefusalContext;
  /** The same, and what taking the answers to its ops needs (op-answers.ts). */
  private readonly answers: AnswerContext;

  constructor(config: ClientSessionConfig) {
    this.sessionId = config.session;
    this.token = config.token;
    this.now = config.now;
    this.out = config.out;
    let n = 1;
    this.newSession = config.newSession ?? (() => `${config.session.slice(0, 54)}-u${++n}`);
    this.signIn = new SignIn(config.auth === true, {
      askToken: () => this.out({ t: 'token', connection: this.connection }),
      send: (frame) => this.send(frame),
      timer: (afterMs) => this.out({ t: 'refresh', connection: this.connection, afterMs }),
      identity: (identity) => this.out({ t: 'identity', identity }),
    });
    this.persistent = config.persistent;
    this.contexts = new ContextRequests(config.after, {
      send: (frame) => this.send(frame),
      seen: () => this.seen.counts(),
      see: (seen) => this.seen.see(seen),
      // Each op the caller has an answer to must be answered again here first (OpTable).
      mayAsk: () => this.ready && this.ops.answeredAgainOn(this.connection),
      connection: () => this.connection,
    });
    this.ops = new OpTable({
      persist: () => this.persist(),
      closed: () => this.closedBy !== null || this.ending,
      submit: (op, args, levels, sink) => void this.submit(op, args, levels, sink),
      resume: (o) => {
        if (this.ready && this.ops.get(o.opId) === o) this.window.send(o);
      },
    });
    this.window = new SendWindow(config.maxInFlight, (o) => this.sendNow(o));
    this.failover = new Failover(
      config.urls,
      config.connectTimeoutMs,
      config.stallTimeoutMs,
      config.discover ?? true,
      config.nearest ?? true,
    );
    this.offline = new OfflineQueue(config.offline, config.maxQueued);
    this.refusals = {
      failover: this.failover,
      ops: this.ops,
      signIn: this.signIn,
      connection: () => this.connection,
      attached: () => this.attached,
      ready: () => this.ready,
      leave: (problem) => this.leave(problem),
      drop: () => this.drop(),
      refuse: (make) => {
        this.closedBy = make;
        this.closedFor = 'refused';
      },
    };
    this.answers = {
      ...this.refusals,
      window: this.window,
      seen: this.seen,
      release: (opId) => this.release(opId),
      served: () => this.served(),
      stableNow: (to) => {
        this.lastStableAt = this.lastFrameAt;
        if (to?.sentOn === this.connection)
          this.failover.stableAnswered(this.lastFrameAt - to.sentAt);
      },
    };
  }

  /** Where the client stands with the cluster. */
  get status(): ConnectionStatus {
    return this.currentStatus;
  }

  /** The session takes no more ops (closed, or the cluster refused it). */
  get closed(): boolean {
    return this.closedBy !== null;
  }

  /** Where the session stands with its user. */
  get identity(): Identity {
    return this.signIn.identity;
  }

  /** What the session has seen, per origin (sparse above 255): the counts its next hello names. */
  get seenCounts(): readonly number[] {
    return this.seen.counts();
  }

  /** How often the driver should call `tick()`, or null when it need not. */
  get tickEveryMs(): number | null {
    return this.failover.stallCheckEveryMs;
  }

  /** The number the session's next op gets (a simulator names its exactly-once probes by it). */
  get nextSeq(): number {
    return this.ops.nextSeq;
  }

  /** The replicas the session knows, nearest first (KnownReplicas.list). */
  replicas(): KnownReplica[] {
    return this.failover.known.list();
  }

  /** Ops of the session not yet acknowledged (answered and committed). */
  unacknowledged(): number {
    return this.ops.size;
  }

  /** What the offline storage should keep now. */
  stored(): StoredSession {
    return storedSession(this.sessionId, this.ops, this.signIn.storedUser);
  }

  // ---- connections ------------------------------------------------------------------------

  /** Connects for the first time (once a stored session, if any, is restored). */
  start(): void {
    this.open();
  }

  /** The wait a `reconnect` output asked for is over. */
  reconnect(): void {
    this.open();
  }

  private open(): void {
    if (this.closedBy !== null) return;
    this.connection++;
    this.attached = true;
    this.url = this.failover.url;
    this.opened = false;
    this.failure = undefined;
    this.signIn.connecting();
    // A new replica counts from nothing; the welcome resubmits what the last one held.
    this.window.reset();
    this.out({ t: 'connect', connection: this.connection, url: this.url });
  }

  /** Events of `connection` count while the session listens to it. */
  private current(connection: number): boolean {
    return this.attached && connection === this.connection;
  }

  /**
   * No connection can be made at all (connect's tls on a browser, say): every call fails so, now
   * and later.
   */
  cannotConnect(message: string): void {
    const err = new ProtocolError(message, { mayHaveTakenEffect: false });
    this.closedBy = () => err;
    this.closedFor = 'cannot-connect';
    this.ops.failAll(() => err);
  }

  /** The connection could not even be started (a URL the WebSocket constructor refuses). */
  connectFailed(connection: number, message: string): void {
    if (!this.current(connection)) return;
    this.attached = false;
    this.failover.problem(this.url, connectFailure(this.url, message));
    this.retry();
  }

  /**
   * The connection opened: the session says hello, naming itself and what it has seen, and its
   * user with a token fresh from the driver (asked for now: a token kept from an earlier
   * connection may have expired since).
   */
  connectionOpened(connection: number): void {
    if (!this.current(connection)) return;
    this.opened = true;
    if (!this.signIn.signsIn) return this.hello(undefined);
    this.signIn.opened();
  }

  private hello(auth: string | undefined): void {
    this.send({
      t: 'hello',
      ...helloVersionFields(),
      ...(this.token === undefined ? {} : { token: this.token }),
      ...(auth === undefined ? {} : { auth }),
      session: this.sessionId,
      ...this.seen.hello(),
      ...this.contexts.hello(),
    });
  }

  /**
   * The user's token the session asked for (`token` output) for `connection`: said in the hello,
   * or sent as a refresh (`reauth`) with the ops in flight left where they are. A fresh token of
   * another user than the session's ends the session (see `switchSession`).
   */
  tokenProvided(connection: number, token: string): void {
    if (!this.current(connection)) return;
    const use = this.signIn.provided(token);
    if (use === 'hello') this.hello(token);
    else if (use === 'other-user')
      this.switchSession(
        true,
        `the auth function gave a token of another user than '${this.signIn.userId ?? ''}'`,
      );
  }

  /**
   * The driver could not get the user's token (the app's `auth` threw, or gave none): the identity
   * says so. At a hello, this replica is left as a failed connection (the next attempt asks
   * again); at a refresh, the connection goes on and SignIn tries again while the token lasts.
   */
  tokenFailed(connection: number, message: string): void {
    if (!this.current(connection)) return;
    if (this.signIn.failed(message, this.now()) === 'hello')
      this.leave(`no user token for the hello: ${message}`);
  }

  /** The refresh timer (`refresh` output) of `connection` went off: ask for a fresh token. */
  refreshDue(connection: number): void {
    if (this.current(connection) && this.closedBy === null) this.signIn.due(this.ready);
  }

  /**
   * The app changed how the client gets its user's token (`client.setAuth`; `auth` false signs
   * out). A token string of the session's own user is a refresh on the same connection; anything
   * else (another user, a function, signing out) ends the session for a new one (switchSession).
   */
  changeAuth(auth: boolean, token: string | null): void {
    const user = this.signIn.userId;
    if (auth && token !== null && user !== null && this.closedBy === null)
      if (readToken(token)?.sub === user) return this.signIn.due(this.ready);
    this.switchSession(
      auth,
      auth ? 'the client signed in as another user (setAuth)' : 'the client signed out (setAuth)',
    );
  }

  /**
   * Ends the current user's session and starts the next one's (`auth`: a user's tokens, else
   * anonymous) on a new connection, with a new id, numbering from 1. Nothing carries over: ops
   * not answered fail with SignedOut (`mayHaveTakenEffect` if sent: applied, if at all, as the
   * previous user), commits still unknown never will be known, live queries end with SignedOut,
   * and the storage keeps the new, empty session, so no previous user's op is restored later.
   */
  private switchSession(auth: boolean, why: string): void {
    if (this.closedFor === 'close' || this.closedFor === 'cannot-connect') return;
    const end = (sent: boolean): CreekError => new SignedOut(why, { mayHaveTakenEffect: sent });
    this.ending = true;
    this.ops.failAll((o) => end(o.sends > o.refusals || this.restoredSeqs.has(o.seq)));
    this.restoredSeqs.clear();
    this.watches.endAll(() => end(false));
    this.ops.closeAll(end);
    this.ending = false;
    this.ops.nextSeq = 1;
    this.sessionId = this.newSession();
    this.closedBy = null;
    this.closedFor = null;
    this.signIn.restart(auth);
    this.persist();
    if (this.attached) {
      this.attached = false;
      this.out({ t: 'drop', connection: this.connection, terminate: true });
    }
    this.disconnected();
    this.open();
  }

  /** Why the connection failed, as its driver says (a close follows). */
  connectionErrored(connection: number, message: string): void {
    if (this.current(connection)) this.failure = message;
  }

  /** The connection closed: the session tries the next replica. */
  connectionClosed(connection: number): void {
    if (!this.current(connection)) return;
    this.attached = false;
    if (!this.opened) this.failover.problem(this.url, connectFailure(this.url, this.failure));
    // Not to be moved back to on an older measurement (KnownReplicas.unreachable).
    else this.failover.known.unreachable(this.url);
    this.disconnected();
    this.retry();
  }

  /** The replica is gone: no ops go out until the next welcome. */
  private disconnected(): void {
    this.ready = false;
    this.replica = null;
    this.out({ t: 'disconnected' });
    if (this.currentStatus === 'connected') this.setStatus('connecting');
  }

  /**
   * The driver's clock ticked (every `tickEveryMs`): leaves the replica when it has not been
   * useful for stallTimeoutMs (see Failover.stalled).
   */
  tick(): void {
    if (!this.ready || !this.attached) return;
    this.probe(this.failover.probesDue(this.now()));
    if (this.failover.stallTimeoutMs <= 0) return;
    const why = this.failover.stalled(this.now(), {
      ...this.ops.oldestWaiting(this.connection),
      lastFrameAt: this.lastFrameAt,
      lastStableAt: this.lastStableAt,
    });
    if (why === null) return;
    this.failover.leftStalled();
    this.leave(why);
  }

  // ---- nearest replica ----------------------------------------------------------------------

  /** The replica listed the cluster's members (its welcome, or a change): see Failover.learn. */
  private learn(members: ReplicaUrls): void {
    this.probe(this.failover.learn(members, this.now()));
    this.moveIfNearer();
  }

  private probe(urls: readonly string[]): void {
    for (const url of urls) this.out({ t: 'probe', url });
  }

  /** The driver measured the round trip to `url` (a `probe` output): `rttMs`, or null if it failed. */
  probed(url: string, rttMs: number | null): void {
    this.failover.known.measured(url, rttMs);
    this.moveIfNearer();
  }

  /**
   * Leaves the current replica for a nearer one, or for a member when it is no longer one; as for
   * a dropped connection, every op not known committed is resubmitted there and applied once.
   */
  private moveIfNearer(): void {
    if (!this.ready || !this.attached || this.replica === null || this.closedBy !== null) return;
    const target = this.failover.known.nearer(this.url, this.replica);
    if (target === null) return;
    this.attached = false;
    this.disconnected();
    this.out({ t: 'drop', connection: this.connection, terminate: true });
    this.failover.moveTo(target);
    this.open();
  }

  /** Drops this connection for the next replica, noting why; its ops are resubmitted there. */
  private leave(problem: string): void {
    if (!this.attached) return;
    this.failover.problem(this.url, problem);
    this.attached = false;
    this.disconnected();
    // `ws` waits up to 30 s for a frozen peer's close handshake; nothing more is read from it.
    this.out({ t: 'drop', connection: this.connection, terminate: true });
    this.retry();
  }

  private retry(): void {
    if (this.closedBy !== null) return;
    const now = this.now();
    const timedOut = this.failover.failing(now);
    if (timedOut && this.offline.on) {
      // Offline: every op waiting stays, queued, to be sent when a replica answers.
      this.setStatus('offline');
      this.offline.queueWaiting(this.ops);
    } else if (timedOut) {
      this.ops.giveUp(this.failover.gaveUp());
      this.persist();
      this.failover.restartFailing(now);
    }
    this.out({ t: 'reconnect', afterMs: this.failover.next() });
  }

  // ---- frames -------------------------------------------------------------------------------

  /** A frame from the replica, as the connection delivered it (validated here). */
  frameReceived(connection: number, data: string): void {
    if (!this.current(connection)) return;
    const url = this.url;
    this.lastFrameAt = this.now();
    const decoded = decodeServerFrame(data);
    if (!decoded.ok)
      return this.ops.failAll(
        () =>
          new ProtocolError(
            `the replica at ${url} sent a frame this client cannot read: ${decoded.message}`,
          ),
      );
    const f: ServerFrame = decoded.frame;
    if (f.t === 'welcome') {
      if (welcomedAtUnspokenVersion(this.refusals, url, f.version)) return;
      // A replica of an older release did not read the token the session starts after.
      if (!this.contexts.welcomed(f.version, url, (seen) => this.seen.see(seen)))
        return this.drop();
      // Not the session's user (the app's auth function gave another's token, or the stored
      // session was another user's): nothing of the session may run as that user.
      const otherUser = this.signIn.welcomed(f.auth?.user, this.lastFrameAt);
      if (otherUser !== null) return this.switchSession(this.signIn.signsIn, otherUser);
      // The storage learns whose session it is.
      this.persist();
      this.ready = true;
      this.out({
        t: 'welcomed',
        replica: f.replica,
        operations: f.ops,
        readOnlyOperations: f.readOnly ?? null,
      });
      this.lastStableAt = this.lastFrameAt;
      // A replica that welcomes and then refuses every op (paused, catching up) is no answer: the
      // connect timeout keeps running until one serves an op, when ops wait.
      if (![...this.ops.values()].some((o) => o.views !== null)) this.served();
      this.failover.welcomed(url);
      this.replica = f.replica;
      this.failover.known.welcomedAs(url, f.replica);
      // Resubmit every op not known committed, answered ones too (their commit must be learnt):
      // same op ids and numbers, so nothing is applied twice.
      for (const o of this.ops.values()) if (!o.committed && !o.abandoning) this.window.send(o);
      for (const frame of this.watches.frames()) this.send(frame);
      if (f.members !== undefined) this.learn(f.members);
      this.probe(this.failover.probesDue(this.now()));
      this.contexts.flush();
      return;
    }
    if (f.t === 'context') return this.contexts.answered(f, url);
    if (f.t === 'members') return this.learn(f.members);
    if (f.t === 'pong') return; // probes go on connections of their own (`probe` output)
    if (isOpAnswer(f)) return opAnswered(this.answers, f);
    if (f.t === 'watched' || f.t === 'unwatched') return this.watches.frame(f);
    // The user's token: the replica asks for a fresh one before it expires, and closes the
    // connection once it has (the next connection gets a fresh one; its ops are resubmitted).
    if (f.t === 'auth-expiring') return this.signIn.expiring();
    if (f.t === 'authed') return this.signIn.authed(f.user, this.lastFrameAt);
    if (f.t === 'auth-refused') return this.signIn.refreshRefused(f.code, f.message, this.now());
    if (f.t === 'auth-expired') {
      this.signIn.expired(f.message);
      return this.leave(`the user token expired: ${f.message}`);
    }
    if (f.t === 'error') return errorNamingNoOp(this.refusals, url, f);
  }

  /** Closes the connection, whose close then comes as for any other (the next replica is tried). */
  private drop(): void {
    if (this.attached) this.out({ t: 'drop', connection: this.connection, terminate: false });
  }

  /**
   * A replica serves this client (it answered an op, or welcomed it with none waiting): connected,
   * and the ops of the offline queue, sent at the welcome, are in its hands.
   */
  private served(): void {
    this.failover.served();
    this.setStatus('connected');
    this.offline.release(this.ops);
  }

  private setStatus(s: ConnectionStatus): void {
    if (this.currentStatus === s) return;
    this.currentStatus = s;
    this.out({ t: 'status', status: s });
  }

  // ---- ops ----------------------------------------------------------------------------------

  /**
   * An op invoked by the caller, numbered next in the session; returns it (for `abort`), or null
   * when it was refused at once (the session is closed, or the offline queue is full), the error
   * given to `sink`.
   */
  submit<T>(
    op: string,
    args: unknown,
    levels: readonly ConsistencyLevel[],
    sink: ViewSink<T>,
    optimistic?: readonly OptimisticChange[],
  ): SessionOp | null {
    if (this.closedBy !== null) {
      sink.error(this.closedBy(false));
      return null;
    }
    if (this.currentStatus === 'offline') {
      const full = this.offline.refusal(this.ops);
      if (full !== null) {
        sink.error(full);
        return null;
      }
    }
    const seq = this.ops.nextSeq++;
    if (optimistic === undefined || optimistic.length === 0)
      return this.track(seq, op, args, levels, sink as ViewSink<unknown>);
    // Its changes show in the live queries they name until the op ends; in each query, until a
    // result holds the op (WatchTable).
    this.watches.optimisticOp(seq, optimistic);
    return this.track(
      seq,
      op,
      args,
      levels,
      this.watches.endingWith(seq, sink as ViewSink<unknown>),
    );
  }

  /** An op of the session, numbered `seq`, from its invocation (or its restoring) on. */
  private track(
    seq: number,
    op: string,
    args: unknown,
    levels: readonly ConsistencyLevel[],
    sink: ViewSink<unknown>,
  ): SessionOp {
    const o = this.ops.track(seq, op, args, levels, sink);
    if (this.currentStatus === 'offline') queue(o, true);
    this.persist();
    if (this.ready) this.window.send(o);
    return o;
  }

  /**
   * The caller stopped listening to `o` (Cancelled, Timeout: `reason`). An op no replica took is
   * forgotten and never sent; one that may have landed is tracked until committed.
   */
  abort(o: SessionOp, reason: unknown): void {
    this.ops.abort(o, reason);
  }

  /**
   * Takes over the session a storage kept: its id, its numbering, and its ops not known
   * committed, which are sent again at the next connection (each applied once); `sinkFor` gives
   * each op's sink.
   */
  restore(stored: StoredSession, sinkFor: (op: StoredOp) => ViewSink<unknown>): void {
    this.sessionId = stored.session;
    this.signIn.expect(stored.user);
    for (const s of stored.ops) this.restoredSeqs.add(s.seq);
    this.ops.nextSeq = stored.nextSeq;
    for (const s of stored.ops) {
      const levels: ConsistencyLevel[] =
        s.level === 'weak' ? ['weak'] : s.stableOnly ? ['strong'] : ['weak', 'strong'];
      this.track(s.seq, s.op, s.args, levels, sinkFor(s));
    }
  }

  /** The stored session changed: the driver saves it (several changes of one turn in one save). */
  private persist(): void {
    if (this.persistent) this.out({ t: 'persist' });
  }

  // ---- sending ------------------------------------------------------------------------------

  private send(frame: ClientFrame): void {
    this.out({ t: 'send', connection: this.connection, frame });
  }

  /** An op of this connection is done for its replica: the next ones kept back go. */
  private release(opId: string): void {
    this.window.release(
      opId,
      () => this.ready,
      // Settled meanwhile (abandoned, cancelled before it went): nothing to send.
      (o) => this.ops.get(o.opId) === o && !o.committed && !o.abandoning,
    );
    this.contexts.flush();
  }

  /** Sends `o` on this connection (the window has room for it). */
  private sendNow(o: SessionOp): void {
    o.sentOn = this.connection;
    o.sentAt = this.now();
    o.sends++;
    this.send({
      t: 'invoke',
      opId: o.opId,
      op: o.op,
      args: o.args as never,
      level: o.level,
      ...(o.stableOnly ? { tentative: false as const } : {}),
      seq: o.seq,
      acked: this.ops.acked(),
    });
  }

  // ---- live queries -------------------------------------------------------------------------

  /**
   * A live query: `sink` hears the read's result at the replica's tentative state and at its
   * committed one, each time it changes; returns the function that ends it.
   */
  watch(op: string, args: unknown, sink: WatchSink): () => void {
    if (this.closedBy !== null) {
      sink.error(this.closedBy(false));
      return () => undefined;
    }
    const watchId = this.watches.add(op, args, sink);
    if (this.ready) this.send(watchFrame(watchId, op, args));
    return () => {
      if (this.watches.delete(watchId) && this.ready && this.attached)
        this.send({ t: 'unwatch', watchId });
    };
  }

  // ---- context tokens -----------------------------------------------------------------------

  /**
   * Asks for a context token covering what this session has seen and the ops whose answers it
   * has (context-requests.ts); `sink` gets it, or the error that stops it.
   */
  context(sink: ContextSink): void {
    if (this.closedBy !== null) return sink.error(this.closedBy(false));
    this.contexts.ask(sink, this.url, this.ready);
  }

  /** The session goes on after another client's token (ContextRequests.after). */
  after(token: string, sink: ContextSink): void {
    if (this.closedBy !== null) return sink.error(this.closedBy(false));
    this.contexts.after(token, sink, this.url, this.ready);
  }

  /** The session goes on after ops counted by origin (ContextRequests.afterSeen). */
  afterSeen(seen: readonly number[], sink: ContextSink): void {
    if (this.closedBy !== null) return sink.error(this.closedBy(false));
    this.contexts.afterSeen(seen, sink, this.url, this.ready);
  }

  // ---- closing ------------------------------------------------------------------------------

  /** Ends the session; unanswered ops fail with ClientClosed, and so does every later call. */
  close(): void {
    // What is stored stays as it was: a client started later on the same storage sends its ops.
    this.persistent = false;
    if (this.closedBy === null) this.closedBy = (sent) => new ClientClosed(sent);
    this.closedFor = 'close';
    this.drop();
    this.ops.failAll((o) => new ClientClosed(o.sentOn > 0));
    this.watches.endAll(() => new ClientClosed(false));
    this.contexts.closed();
    this.ops.closeAll();
  }
}
