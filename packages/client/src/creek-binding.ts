import { encodeFrame, MAX_IN_FLIGHT_PER_CONNECTION } from '@creek/protocol';
import type { Binding, ConsistencyLevel, ViewSink } from './binding.js';
import { Correctable } from './correctable.js';
import { readStoredSession, type OfflineStorage, type StoredSession } from './offline-storage.js';
import { ClientSession } from './session/client-session.js';
import type { ConnectionStatus, SessionOutput } from './session/session-io.js';
import type { Identity } from './session/sign-in.js';
import type { KnownReplica } from './session/known-replicas.js';
import type { OptimisticChange } from './session/optimistic.js';
import type { WatchSink } from './session/watches.js';
import type { SharedContextIo } from './session/shared-context.js';
import { randomId } from './session-id.js';
import { probeRoundTrip } from './probe.js';
import { socketFactory, type SocketFactory, type SocketLike } from './socket.js';

// The socket driver of a client session: the session (session/client-session.ts) decides, with no
// sockets, timers or clocks of its own; this class owns the WebSocket, the timers, the clock, the
// random session id and the offline storage, feeds the session their events and acts on what it
// asks for (session/session-io.ts).

export type { ConnectionStatus } from './session/session-io.js';
export type { KnownReplica } from './session/known-replicas.js';
export type { WatchSink } from './session/watches.js';
export type { Identity, IdentityState } from './session/sign-in.js';

/**
 * Where a client gets its user's token: the token itself, or a function that returns a token
 * valid now (`connect({ auth })`, `client.setAuth`).
 */
export type AuthSource = string | (() => string | Promise<string>);

/** An op a client took over from the storage of an earlier one (`client.restored()`). */
export interface RestoredOp {
  readonly op: string;
  readonly args: unknown;
  /** Its views from now on (it is sent again, and applied once). */
  readonly correctable: Correctable<unknown>;
}

/** How many ops the offline queue holds by default (`connect({ offline: { maxQueued } })`). */
export const DEFAULT_MAX_QUEUED = 1_000;

export interface CreekBindingOptions {
  /** Client endpoints of the replicas, e.g. ws://127.0.0.1:7100/client; tried in order on failure. */
  readonly urls: readonly string[];
  readonly token?: string;
  /**
   * The signed-in user's token (a JWT from the app's identity provider), for a cluster that
   * verifies them: ops then run as that user (`tx.user`). A function is called at every
   * connection, and for a fresh token before the current one expires (when half its life is left,
   * at most a minute before its `exp`) or when the replica asks, so it should return a token that
   * is valid now (identity providers' SDKs cache and refresh theirs, e.g. Auth0's
   * getTokenSilently, Clerk's getToken, Firebase's getIdToken). A string cannot be refreshed:
   * once it expires, the session ends with TokenExpired (give a fresh one with `setAuth`).
   * Absent: anonymous. See `client.identity()` and `client.setAuth`.
   */
  readonly auth?: AuthSource;
  /**
   * Start after another client's context: a token from its `client.context()` (a user's other
   * device, or the browser a server renders for). This client is served only by a replica that
   * holds every op the token covers (one that has not caught them up within 3 s sends it to
   * another), so its reads see the other client's writes. A token is checked by the replicas: one
   * another cluster signed, or altered, is refused with Unauthorized. Absent: no such wait.
   */
  readonly after?: string;
  /**
   * Learn the cluster's replicas from the one the client reaches and follow its membership: each
   * replica's welcome lists every member's client URL, and it tells its clients when they change
   * (a replica added, removed, replaced); a client whose replica is no longer a member moves to
   * one that is. Default true. False: the client keeps to `urls` (for replicas whose addresses the
   * client cannot reach, e.g. behind a proxy).
   */
  readonly discover?: boolean;
  /**
   * Measure the round trip to each replica the client knows (three `ping`s on a short connection
   * of its own, at the first welcome, when the members change and every 30 s) and use the nearest
   * one that serves, failing over in order of distance. The client moves to a replica nearer by
   * at least 10 ms and a quarter of the current one's round trip, resubmitting the ops in flight
   * (each applied once). Default true. False: replicas are tried in the order known (`urls`
   * first), as for replicas on one machine, whose differences are load, not distance.
   */
  readonly nearest?: boolean;
  /** How long to keep trying to reach a replica before ops fail with Unavailable. */
  readonly connectTimeoutMs?: number;
  /**
   * Offline ops: once no replica has answered for connectTimeoutMs, ops wait in a queue instead of
   * failing — those waiting then and those invoked later — and are sent, with their session
   * numbers (applied once), when a replica answers again; their Correctables stay `updating` and
   * say `queued`. `maxQueued` (default 1,000) bounds the queue: an op invoked when it is full
   * fails at once with Unavailable (not applied). Off by default: ops fail after the timeout.
   */
  readonly offline?:
    | boolean
    | {
        readonly maxQueued?: number;
        /**
         * Keeps the queue — the session and its ops not known committed — where it outlives the
         * page or the process (`indexedDbStorage()`, or your own: see OfflineStorage). A client
         * started on it takes the session over and sends those ops again, each applied once; their
         * Correctables are `client.restored()`.
         */
        readonly storage?: OfflineStorage;
      };
  /**
   * How long a replica may keep the client's ops waiting without being useful before the client
   * leaves it for the next one, as if the connection had dropped (the ops are resubmitted there and
   * applied once). Not useful: it sent nothing at all while ops waited (a frozen or overloaded
   * process, or one behind a half-open connection keeps its socket open and answers nothing), or
   * no stable answer while strong ops waited for theirs (a replica cut off from the leader still
   * answers tentatively). A replica that refuses an op because it is paused, shutting down or still
   * catching up is left at once. Default 3000 ms; 0 turns the deadlines off. Only with more than one
   * replica known (given, or learnt: `discover`). Where the cluster's strong ops take longer than
   * this (across regions), the deadline doubles for each replica left in a row for a stall, up to
   * 16 times this, and comes back once a strong op is answered within it again.
   */
  readonly stallTimeoutMs?: number;
  /**
   * How many ops the client keeps in flight on its connection (sent, and not yet answered: a weak
   * op until its first view, a strong one until its stable view); those invoked beyond wait in the
   * client and go as answers come, as do the ops it resubmits when it moves to another replica.
   * A replica refuses more than 1,024 from one connection as busy, so 1 to 1,024; default 1,024.
   */
  readonly maxInFlight?: number;
  /** Defaults to the global WebSocket (browsers, React Native, Node ≥ 22) or the `ws` package. */
  readonly WebSocket?: new (url: string) => SocketLike;
  /**
   * For wss:// URLs from Node: the PEM of the CA the replicas' certificates chain to (their
   * `--tls-ca`), when it is not one the system trusts. Browsers and React Native trust what the
   * device trusts and take no CA from a page.
   */
  readonly tls?: { readonly ca: string | Uint8Array };
}

/**
 * The Creek binding (Correctables §5.1) over the wire protocol: one connection to one replica at a
 * time, inside one session. If the connection drops, the binding moves to the next replica and
 * resubmits every op that is not known committed, with the same op id and session number: the
 * cluster applies each op once (core/session-dedupe.ts) and the caller gets its result once.
 *
 * Session guarantees across replicas: views say what their replica had (`seen`); the binding keeps
 * the most it has seen and presents it when it reconnects, and a replica welcomes it only once it
 * has caught up (else the binding tries the next one): read-your-writes and monotonic reads. A
 * replica's `seen` leaves out the session's own uncommitted ops at the top of its own ops, which
 * the binding resubmits: a replica that dies before gossiping what it answered strands no session
 * that saw only its own writes there.
 */
export class CreekBinding implements Binding {
  private readonly session: ClientSession;
  /** The socket of the session's latest connection, and that connection's number. */
  private socket: SocketLike | null = null;
  private socketConnection = 0;
  /** Where the queue is kept (offline.storage), until close(); null: nowhere. */
  private storage: OfflineStorage | null;
  /** Loading it: ops invoked meanwhile wait here, to be numbered after the restored ones. */
  private restoring: Promise<void> | null = null;
  private readonly beforeRestore: (() => void)[] = [];
  private restoredOps: Promise<readonly RestoredOp[]> = Promise.resolve([]);
  private saving: Promise<void> | null = null;
  private saveAgain = false;
  private persistDue = false;
  private readonly factory: Promise<SocketFactory>;
  private stallTimer: ReturnType<typeof setInterval> | null = null;
  /** `close()` was called. */
  private closed = false;
  /** Where the user's tokens come from (`auth`, `setAuth`); null: the client is anonymous. */
  private auth: AuthSource | null;
  /** The timer of the next token refresh (SessionOutput `refresh`). */
  private refreshTimer: ReturnType<typeof setTimeout> | null = null;
  /** Where the client stands with its user, and who wants to hear when that changes. */
  identity: Identity;
  private readonly identityListeners = new Set<(i: Identity) => void>();
  /** The replica this client is talking to, once welcomed. */
  replica: number | null = null;
  /** The ops its app offers, as its welcome listed them (the last replica's, while reconnecting). */
  operations: readonly string[] | null = null;
  /** The read-only ones among them (welcomes from older replicas do not say: null). */
  readOnlyOperations: readonly string[] | null = null;
  /** Where the client stands, and who wants to hear when that changes. */
  status: ConnectionStatus = 'connecting';
  private readonly statusListeners = new Set<(s: ConnectionStatus) => void>();

  constructor(options: CreekBindingOptions) {
    // First: a runtime that cannot make a session id says so whatever else is wrong.
    const sessionId = randomId();
    if (options.urls.length === 0) throw new Error('connect: give at least one replica URL');
    for (const name of ['connectTimeoutMs', 'stallTimeoutMs'] as const) {
      const v: unknown = options[name];
      // Milliseconds; Infinity is allowed (never). A string or NaN would silently mean 0 or never.
      if (v !== undefined && (typeof v !== 'number' || Number.isNaN(v) || v < 0))
        throw new RangeError(
          `connect: ${name} must be a number of milliseconds, 0 or more, not ${typeof v === 'string' ? JSON.stringify(v) : String(v)}`,
        );
    }
    for (const name of ['discover', 'nearest'] as const) {
      const v: unknown = options[name];
      // A string such as 'false' would be taken for true.
      if (v !== undefined && typeof v !== 'boolean')
        throw new TypeError(
          `connect: ${name} must be true or false, not ${typeof v === 'string' ? JSON.stringify(v) : String(v)}`,
        );
    }
    const offline = options.offline ?? false;
    const maxQueued =
      typeof offline === 'object' ? (offline.maxQueued ?? DEFAULT_MAX_QUEUED) : DEFAULT_MAX_QUEUED;
    if (!Number.isInteger(maxQueued) || maxQueued < 0)
      throw new RangeError(
        `connect: offline.maxQueued must be a whole number, 0 or more, not ${String(maxQueued)}`,
      );
    this.storage = typeof offline === 'object' ? (offline.storage ?? null) : null;
    if (this.storage !== null) {
      const restored = this.restore(this.storage);
      this.restoredOps = restored;
      // Settled here, so a client that never asks for restored() leaves no unhandled rejection.
      this.restoring = restored.then(
        () => undefined,
        () => undefined,
      );
    }
    const maxInFlight: unknown = options.maxInFlight ?? MAX_IN_FLIGHT_PER_CONNECTION;
    if (
      typeof maxInFlight !== 'number' ||
      !Number.isInteger(maxInFlight) ||
      maxInFlight < 1 ||
      maxInFlight > MAX_IN_FLIGHT_PER_CONNECTION
    )
      throw new RangeError(
        `connect: maxInFlight must be a whole number from 1 to ${MAX_IN_FLIGHT_PER_CONNECTION} (a replica refuses more), not ${typeof maxInFlight === 'string' ? JSON.stringify(maxInFlight) : String(maxInFlight)}`,
      );
    if (options.auth !== undefined) checkAuth('connect: auth', options.auth);
    this.auth = options.auth ?? null;
    this.factory = socketFactory(options.WebSocket, options.tls);
    this.session = new ClientSession({
      urls: options.urls,
      token: options.token,
      auth: this.auth !== null,
      after: options.after,
      session: sessionId,
      newSession: randomId,
      discover: options.discover ?? true,
      nearest: options.nearest ?? true,
      connectTimeoutMs: options.connectTimeoutMs,
      stallTimeoutMs: options.stallTimeoutMs,
      maxInFlight,
      offline: offline !== false,
      maxQueued,
      persistent: this.storage !== null,
      now: () => Date.now(),
      out: (o) => this.output(o),
    });
    this.identity = this.session.identity;
    const every = this.session.tickEveryMs;
    if (every !== null) {
      this.stallTimer = setInterval(() => this.session.tick(), every);
      // A check pending must not keep a Node process alive.
      (this.stallTimer as { unref?: () => void }).unref?.();
    }
    void this.start();
  }

  /** Connects once the storage, if any, is loaded: the hello names the session it brings back. */
  private async start(): Promise<void> {
    if (this.restoring !== null) await this.restoring;
    this.session.start();
  }

  /** Does what the session asks, at once. */
  private output(o: SessionOutput): void {
    switch (o.t) {
      case 'connect':
        void this.open(o.connection, o.url);
        return;
      case 'send':
        if (o.connection === this.socketConnection) this.socket?.send(encodeFrame(o.frame));
        return;
      case 'drop':
        if (o.connection === this.socketConnection && this.socket !== null)
          drop(this.socket, o.terminate);
        return;
      case 'reconnect':
        setTimeout(() => this.session.reconnect(), o.afterMs);
        return;
      case 'probe':
        return void this.probe(o.url);
      case 'status':
        this.status = o.status;
        for (const l of [...this.statusListeners]) l(o.status);
        return;
      case 'welcomed':
        this.replica = o.replica;
        this.operations = o.operations;
        this.readOnlyOperations = o.readOnlyOperations;
        return;
      case 'disconnected':
        this.replica = null;
        return;
      case 'persist':
        return this.persist();
      case 'token':
        return void this.userToken(o.connection);
      case 'refresh': {
        if (this.refreshTimer !== null) clearTimeout(this.refreshTimer);
        const connection = o.connection;
        this.refreshTimer = setTimeout(() => {
          this.refreshTimer = null;
          this.session.refreshDue(connection);
        }, o.afterMs);
        // A refresh pending must not keep a Node process alive.
        (this.refreshTimer as { unref?: () => void }).unref?.();
        return;
      }
      case 'identity':
        this.identity = o.identity;
        for (const l of [...this.identityListeners]) l(o.identity);
        return;
    }
  }

  /**
   * Changes how the client gets its user's token (`client.setAuth`); null signs out. Checked as
   * connect checks `auth`. The same source again changes nothing.
   */
  setAuth(auth: AuthSource | null): void {
    if (auth !== null) checkAuth('setAuth', auth);
    // The same source again changes nothing, unless its session ended (refused, expired).
    if (this.closed || (auth === this.auth && !this.session.closed)) return;
    this.auth = auth;
    if (this.refreshTimer !== null) clearTimeout(this.refreshTimer);
    this.refreshTimer = null;
    this.session.changeAuth(auth !== null, typeof auth === 'string' ? auth : null);
  }

  /** Calls `listener` whenever the identity changes; returns the function that stops it. */
  onIdentity(listener: (i: Identity) => void): () => void {
    this.identityListeners.add(listener);
    return () => void this.identityListeners.delete(listener);
  }

  /** Asks `auth` for the user's token, for the session's `connection`. */
  private async userToken(connection: number): Promise<void> {
    const auth = this.auth;
    if (auth === null) return;
    let token: unknown;
    try {
      token = typeof auth === 'string' ? auth : await auth();
    } catch (e) {
      return this.session.tokenFailed(connection, e instanceof Error ? e.message : String(e));
    }
    if (typeof token !== 'string' || token.length === 0)
      return this.session.tokenFailed(
        connection,
        `connect's auth function returned ${typeof token === 'string' ? 'an empty string' : typeof token}, not a token`,
      );
    this.session.tokenProvided(connection, token);
  }

  /** Measures the round trip to the replica at `url` for the session (probe.ts). */
  private async probe(url: string): Promise<void> {
    const make = await this.factory.catch(() => null);
    if (make === null || this.closed) return;
    probeRoundTrip(make, url, now, (rttMs) => {
      if (!this.closed) this.session.probed(url, rttMs);
    });
  }

  /** Opens the session's connection number `connection` to `url`, and reports its events. */
  private async open(connection: number, url: string): Promise<void> {
    let make: SocketFactory;
    try {
      make = await this.factory;
    } catch (e) {
      // No way to open a socket at all (connect's tls on a browser, say): every call fails so.
      return this.session.cannotConnect(e instanceof Error ? e.message : String(e));
    }
    let ws: SocketLike;
    try {
      ws = make(url);
    } catch (e) {
      // A URL the WebSocket constructor refuses (not ws:// or wss://, malformed).
      return this.session.connectFailed(connection, e instanceof Error ? e.message : String(e));
    }
    this.socket = ws;
    this.socketConnection = connection;
    ws.onopen = () => this.session.connectionOpened(connection);
    ws.onmessage = (ev: { data: unknown }) =>
      this.session.frameReceived(
        connection,
        typeof ev.data === 'string' ? ev.data : String(ev.data),
      );
    // A close follows; `ws` says why the connection failed (browsers do not).
    ws.onerror = (ev: { message?: unknown }) => {
      if (typeof ev.message === 'string') this.session.connectionErrored(connection, ev.message);
    };
    ws.onclose = () => this.session.connectionClosed(connection);
  }

  consistencyLevels(): ConsistencyLevel[] {
    return ['weak', 'strong'];
  }

  submitOperation<T>(
    op: string,
    args: unknown,
    levels: ConsistencyLevel[],
    sink: ViewSink<T>,
    signal?: AbortSignal,
    optimistic?: readonly OptimisticChange[],
  ): void {
    if (this.restoring !== null && !this.session.closed) {
      // Numbered after the ops the storage brings back; a call cancelled meanwhile is not sent.
      this.beforeRestore.push(() => {
        if (signal?.aborted !== true)
          this.submitOperation(op, args, levels, sink, signal, optimistic);
      });
      return;
    }
    const o = this.session.submit(op, args, levels, sink, optimistic);
    if (o === null || signal === undefined) return;
    // The caller stops listening (Cancelled, Timeout: the signal's reason).
    signal.addEventListener('abort', () => this.session.abort(o, signal.reason), { once: true });
  }

  /** Calls `listener` whenever the status changes; returns the function that stops it. */
  onStatus(listener: (s: ConnectionStatus) => void): () => void {
    this.statusListeners.add(listener);
    return () => void this.statusListeners.delete(listener);
  }

  /**
   * A live query (the replica's `watch`): `sink` hears the read's result at the replica's tentative
   * state and at its committed one, each time it changes; returns the function that ends it.
   */
  watch(op: string, args: unknown, sink: WatchSink): () => void {
    return this.session.watch(op, args, sink);
  }

  /** The ops taken over from the storage (their Correctables), once it is loaded. */
  restored(): Promise<readonly RestoredOp[]> {
    return this.restoredOps;
  }

  /**
   * Takes over the session the storage kept: its id, its numbering, and its ops not known
   * committed, which are sent again at the next connection (each applied once). What the storage
   * holds is checked; if it cannot be read, the client goes on with a new session and
   * `restored()` rejects saying why (the ops it held are not sent).
   */
  private async restore(storage: OfflineStorage): Promise<readonly RestoredOp[]> {
    let problem: string | null = null;
    let stored: StoredSession | null = null;
    try {
      const raw = await storage.load();
      if (raw !== null) {
        const checked = readStoredSession(raw);
        if (typeof checked === 'string')
          problem = `the offline storage holds no session: ${checked}`;
        else stored = checked;
      }
    } catch (e) {
      problem = `the offline storage could not be read: ${e instanceof Error ? e.message : String(e)}`;
    }
    const out: RestoredOp[] = [];
    if (stored !== null)
      this.session.restore(stored, (s) => {
        const c = Correctable.create<unknown>();
        out.push({ op: s.op, args: s.args, correctable: c.correctable });
        return c.sink;
      });
    this.restoring = null;
    for (const submit of this.beforeRestore.splice(0)) submit();
    if (problem !== null) throw new Error(problem);
    return out;
  }

  /**
   * Saves the session and its ops not known committed to the storage, one save at a time: a
   * change during a save is saved by the next one.
   */
  private persist(): void {
    if (this.storage === null || this.persistDue) return;
    // Every change of one turn (a frame confirming many ops, a burst of invokes) in one save.
    this.persistDue = true;
    queueMicrotask(() => {
      this.persistDue = false;
      this.save();
    });
  }

  private save(): void {
    if (this.storage === null) return;
    if (this.saving !== null) {
      this.saveAgain = true;
      return;
    }
    this.saving = this.storage
      .save(this.session.stored())
      .catch(() => undefined) // a failed save is retried with the next change
      .then(() => {
        this.saving = null;
        if (this.saveAgain) {
          this.saveAgain = false;
          this.save();
        }
      });
  }

  /** The replicas the client knows, nearest first (`client.replicas()`). */
  replicas(): readonly KnownReplica[] {
    return this.session.replicas();
  }

  /** A context token for this client's session (`client.context()`). */
  context(): Promise<string> {
    return new Promise((resolve, reject) =>
      this.session.context({ token: resolve, error: reject }),
    );
  }

  /** This client's session goes on after another client's token (`client.after(token)`). */
  after(token: string): Promise<string> {
    return new Promise((resolve, reject) =>
      this.session.after(token, { token: resolve, error: reject }),
    );
  }

  /** Shared contexts (SharedContext): the session's ops, its tokens and its waits, unchanged. */
  sharedContextIo(): SharedContextIo {
    return {
      submit: (op, args, levels, sink) => this.submitOperation(op, args, levels, sink),
      context: (sink) => this.session.context(sink),
      afterSeen: (seen, sink) => this.session.afterSeen(seen, sink),
    };
  }

  /** Ops of the session not yet acknowledged (answered and committed). */
  unacknowledged(): number {
    return this.session.unacknowledged();
  }

  /** Ends the connection; unanswered ops fail with ClientClosed, and so does every later invoke. */
  close(): void {
    // What is stored stays as it was: a client started later on the same storage sends its ops.
    this.storage = null;
    if (this.stallTimer !== null) clearInterval(this.stallTimer);
    if (this.refreshTimer !== null) clearTimeout(this.refreshTimer);
    this.closed = true;
    this.session.close();
  }
}

/** Refuses an `auth` that is neither a non-empty string nor a function (`what` names the call). */
function checkAuth(what: string, auth: unknown): void {
  if (typeof auth === 'function' || (typeof auth === 'string' && auth.length > 0)) return;
  throw new TypeError(
    `${what} must be the user's token (a non-empty string) or a function that returns one${what === 'setAuth' ? ', or null to sign out' : ''}, not ${typeof auth === 'string' ? 'an empty string' : auth === null ? 'null' : typeof auth}`,
  );
}

/** Closes a socket; `terminate`: at once, without waiting for the peer (`ws` has terminate()). */
function drop(ws: SocketLike, terminate: boolean): void {
  const t = ws as SocketLike & { terminate?: () => void };
  if (terminate && typeof t.terminate === 'function') t.terminate();
  else ws.close();
}

/** A clock for round trips: monotonic where the runtime has one. */
function now(): number {
  return typeof performance === 'undefined' ? Date.now() : performance.now();
}
