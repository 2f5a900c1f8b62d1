import {
  decodeServerFrame,
  encodeFrame,
  MAX_IN_FLIGHT_PER_CONNECTION,
  PROTOCOL_VERSION,
  type ServerFrame,
} from '@creek/protocol';
import type { Binding, ConsistencyLevel, ViewSink } from './binding.js';
import { OpViews } from './op-views.js';
import {
  ClientClosed,
  CreekError,
  errorFromWire,
  OperationFailed,
  ProtocolError,
  Unauthorized,
  Unavailable,
  type Fate,
  type Indeterminate,
} from './errors.js';
import { settleIndeterminacy } from './indeterminacy.js';
import type { Outcome } from './op-views.js';
import { Correctable } from './correctable.js';
import { readStoredSession, type OfflineStorage, type StoredSession } from './offline-storage.js';

/** An op a client took over from the storage of an earlier one (`client.restored()`). */
export interface RestoredOp {
  readonly op: string;
  readonly args: unknown;
  /** Its views from now on (it is sent again, and applied once). */
  readonly correctable: Correctable<unknown>;
}
import { connectFailure } from './connect-failure.js';

/** The subset of the WebSocket API both the browser's and `ws` provide. */
interface SocketLike {
  readyState: number;
  send(data: string): void;
  close(): void;
  // `never` parameters: the browser's WebSocket, `ws` and their subclasses all fit.
  onopen: ((ev: never) => void) | null;
  onmessage: ((ev: never) => void) | null;
  onclose: ((ev: never) => void) | null;
  onerror: ((ev: never) => void) | null;
}
type SocketFactory = (url: string) => SocketLike;

/** Where a live query's results go (`CreekBinding.watch`). */
export interface WatchSink {
  /** A new result at a level (`weak`: the replica's tentative state; `strong`: its committed one). */
  view(v: { value: unknown; level: 'weak' | 'strong'; final: false }): void;
  /** The read failed (the op threw) at a level; the query goes on. */
  failed(e: CreekError, level: 'weak' | 'strong'): void;
  /** The query ended (the replica refused it, or the client was closed). */
  error(e: CreekError): void;
}

/** Where the client stands with the cluster (`client.status()`). */
export type ConnectionStatus = 'connecting' | 'connected' | 'offline';

/** How many ops the offline queue holds by default (`connect({ offline: { maxQueued } })`). */
export const DEFAULT_MAX_QUEUED = 1_000;

export interface CreekBindingOptions {
  /** Client endpoints of the replicas, e.g. ws://127.0.0.1:7100/client; tried in order on failure. */
  readonly urls: readonly string[];
  readonly token?: string;
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
   * URL.
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

/** An op of this client's session, from its submission until the cluster may forget it. */
interface SessionOp {
  readonly opId: string;
  /** Its number in the session (exactly-once across replicas). */
  readonly seq: number;
  readonly op: string;
  readonly args: unknown;
  readonly level: 'weak' | 'strong';
  /** A strong op asked for its stable view alone (`invokeStrong`): the replica sends no other. */
  readonly stableOnly: boolean;
  /** The views still to deliver; null once the caller has its answer (or gave up). */
  views: OpViews<unknown> | null;
  /** The caller's sink, which also hears of the op's commit (Correctable.committed). */
  readonly sink: ViewSink<unknown>;
  /** Known committed (or never to be ordered): with `views` null, it may be acknowledged. */
  committed: boolean;
  /** The connection it was last sent on (`committed` frames speak for that connection only). */
  sentOn: number;
  /** When it was last sent (Date.now()), for the stall check. */
  sentAt: number;
  /**
   * How many times it was sent, and how many of those the replica refused (busy, unavailable):
   * while the two are equal no replica took it, so it certainly did not take effect.
   */
  sends: number;
  refusals: number;
  /** Its stable outcome, once a replica sent it (or confirmed its last tentative one). */
  outcome: Outcome | null;
  /** Its last tentative outcome: what a confirmation confirms. */
  tentative: Outcome | null;
  /** What became of it, once known (Indeterminate), and who waits to learn it. */
  fate: Fate | null;
  readonly waiting: { resolve(f: Fate): void; reject(e: CreekError): void }[];
  /** Its client asked the cluster to abandon it: it is not resubmitted any more. */
  abandoning: boolean;
  /** It waits in the offline queue (its Correctable says so). */
  queued: boolean;
}

/** The op the cluster abandons an earlier op of the session with (the server's session-dedupe.ts). */
const ABANDON_OP = 'creek.abandon';

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
  private socket: SocketLike | null = null;
  private ready = false;
  private urlIndex = 0;
  /** Session ops by op id, until committed and answered. */
  private readonly ops = new Map<string, SessionOp>();
  private session = randomId();
  private nextSeq = 1;
  /** Where the queue is kept (offline.storage), until close(); null: nowhere. */
  private storage: OfflineStorage | null;
  /** Loading it: ops invoked meanwhile wait here, to be numbered after the restored ones. */
  private restoring: Promise<void> | null = null;
  private readonly beforeRestore: (() => void)[] = [];
  private restoredOps: Promise<readonly RestoredOp[]> = Promise.resolve([]);
  private saving: Promise<void> | null = null;
  private saveAgain = false;
  private persistDue = false;
  /** Live queries by watch id: sent again on every connection (a new replica reads them anew). */
  private readonly watches = new Map<
    string,
    { readonly op: string; readonly args: unknown; readonly sink: WatchSink }
  >();
  private nextWatch = 1;
  /** Per origin replica, how many of its ops this session has seen. */
  private readonly seen: number[] = [];
  /** Counts connections, so that a `committed` frame is applied to ops sent on its connection. */
  private connection = 0;
  /**
   * Ops sent on this connection that its replica still counts as in flight (weak: until their
   * first view; strong: until their stable one; any: until an error), by op id, with their level.
   */
  private readonly inFlight = new Map<string, 'weak' | 'strong'>();
  /** Ops waiting for a slot among those, in the order they were to be sent. */
  private readonly backlog: SessionOp[] = [];
  /** How many ops this connection may have in flight (a replica refuses more as busy). */
  private readonly maxInFlight: number;
  /** Why this binding takes no more ops (`close()`, or a refused token); null while it does. */
  private closedBy: ((sent: boolean) => CreekError) | null = null;
  /** Per URL, why the last attempt to use it failed: the Unavailable error after a timeout says. */
  private readonly problems = new Map<string, string>();
  private failingSince: number | null = null;
  private backoffMs = 50;
  private readonly factory: Promise<SocketFactory>;
  /** The replica this client is talking to, once welcomed. */
  replica: number | null = null;
  /** The ops its app offers, as its welcome listed them (the last replica's, while reconnecting). */
  operations: readonly string[] | null = null;
  /** The read-only ones among them (welcomes from older replicas do not say: null). */
  readOnlyOperations: readonly string[] | null = null;
  /** When the current connection last brought a frame (Date.now()). */
  private lastFrameAt = 0;
  /** When it last brought a stable answer or a commit (or was welcomed), Date.now(). */
  private lastStableAt = 0;
  private readonly stallTimeoutMs: number;
  private stallTimer: ReturnType<typeof setInterval> | null = null;
  /** Offline ops on (options.offline), and how many may wait. */
  private readonly offlineQueue: boolean;
  private readonly maxQueued: number;
  /** Where the client stands, and who wants to hear when that changes. */
  status: ConnectionStatus = 'connecting';
  private readonly statusListeners = new Set<(s: ConnectionStatus) => void>();

  constructor(private readonly options: CreekBindingOptions) {
    if (options.urls.length === 0) throw new Error('connect: give at least one replica URL');
    for (const name of ['connectTimeoutMs', 'stallTimeoutMs'] as const) {
      const v: unknown = options[name];
      // Milliseconds; Infinity is allowed (never). A string or NaN would silently mean 0 or never.
      if (v !== undefined && (typeof v !== 'number' || Number.isNaN(v) || v < 0))
        throw new RangeError(
          `connect: ${name} must be a number of milliseconds, 0 or more, not ${typeof v === 'string' ? JSON.stringify(v) : String(v)}`,
        );
    }
    const offline = options.offline ?? false;
    this.offlineQueue = offline !== false;
    this.maxQueued =
      typeof offline === 'object' ? (offline.maxQueued ?? DEFAULT_MAX_QUEUED) : DEFAULT_MAX_QUEUED;
    if (!Number.isInteger(this.maxQueued) || this.maxQueued < 0)
      throw new RangeError(
        `connect: offline.maxQueued must be a whole number, 0 or more, not ${String(this.maxQueued)}`,
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
    this.maxInFlight = maxInFlight;
    this.factory = socketFactory(options.WebSocket, options.tls);
    this.stallTimeoutMs = options.urls.length > 1 ? (options.stallTimeoutMs ?? 3_000) : 0;
    if (this.stallTimeoutMs > 0) {
      this.stallTimer = setInterval(
        () => this.checkStall(),
        Math.max(50, Math.min(1_000, this.stallTimeoutMs / 4)),
      );
      // A check pending must not keep a Node process alive.
      (this.stallTimer as { unref?: () => void }).unref?.();
    }
    void this.open();
  }

  /**
   * Leaves the replica when it has not been useful for stallTimeoutMs (Correctables' bindings may
   * pick any replica; the session's guarantees hold across the move as for a dropped connection):
   * - ops wait on this connection, the oldest sent at least that long ago, and it sent nothing
   *   since (frozen, overloaded, half-open);
   * - strong ops wait for their stable view, the oldest sent at least that long ago, and it
   *   delivered no stable answer since (cut off from the leader, or from a majority: it still
   *   answers tentatively, so the first rule does not see it). A cluster with no majority at all
   *   has the client move from replica to replica at this pace, its ops resubmitted each time and
   *   applied once.
   */
  private checkStall(): void {
    if (!this.ready || this.socket === null) return;
    let oldest = Number.POSITIVE_INFINITY;
    let oldestStrong = Number.POSITIVE_INFINITY;
    for (const o of this.ops.values()) {
      if (o.views === null || o.sentOn !== this.connection) continue;
      oldest = Math.min(oldest, o.sentAt);
      if (o.level === 'strong') oldestStrong = Math.min(oldestStrong, o.sentAt);
    }
    const now = Date.now();
    if (now - Math.max(this.lastFrameAt, oldest) >= this.stallTimeoutMs)
      this.leave(`sent nothing for ${this.stallTimeoutMs} ms while ops waited`);
    else if (now - Math.max(this.lastStableAt, oldestStrong) >= this.stallTimeoutMs)
      this.leave(
        `gave no stable answer for ${this.stallTimeoutMs} ms while strong ops waited (cut off from the leader?)`,
      );
  }

  /** Drops this connection for the next replica, noting why; its ops are resubmitted there. */
  private leave(problem: string): void {
    const ws = this.socket;
    if (ws === null) return;
    const url = this.options.urls[this.urlIndex % this.options.urls.length]!;
    this.problems.set(url, problem);
    this.socket = null;
    this.ready = false;
    this.replica = null;
    if (this.status === 'connected') this.setStatus('connecting');
    // `ws` waits up to 30 s for a frozen peer's close handshake; nothing more is read from it.
    const t = ws as SocketLike & { terminate?: () => void };
    if (typeof t.terminate === 'function') t.terminate();
    else ws.close();
    this.retry();
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
  ): void {
    if (this.closedBy !== null) return sink.error(this.closedBy(false));
    if (this.restoring !== null) {
      // Numbered after the ops the storage brings back; a call cancelled meanwhile is not sent.
      this.beforeRestore.push(() => {
        if (signal?.aborted !== true) this.submitOperation(op, args, levels, sink, signal);
      });
      return;
    }
    if (this.status === 'offline') {
      const waiting = [...this.ops.values()].filter((x) => x.views !== null).length;
      if (waiting >= this.maxQueued)
        return sink.error(
          new Unavailable(
            `offline: no replica answers, and ${waiting} ops already wait in the queue (maxQueued ${this.maxQueued})`,
          ),
        );
    }
    this.track(this.nextSeq++, op, args, levels, sink, signal);
  }

  /** An op of the session, numbered `seq`, from its invocation (or its restoring) on. */
  private track<T>(
    seq: number,
    op: string,
    args: unknown,
    levels: ConsistencyLevel[],
    sink: ViewSink<T>,
    signal: AbortSignal | undefined,
  ): void {
    const o: SessionOp = {
      // Unique within the session, which is all op ids need to be; short, since every frame
      // about the op carries it.
      opId: String(seq),
      seq,
      op,
      args,
      level: levels.includes('strong') ? 'strong' : 'weak',
      stableOnly: levels.includes('strong') && !levels.includes('weak'),
      views: null,
      sink: sink as ViewSink<unknown>,
      committed: false,
      sentOn: 0,
      sentAt: 0,
      sends: 0,
      refusals: 0,
      outcome: null,
      tentative: null,
      fate: null,
      waiting: [],
      abandoning: false,
      queued: false,
    };
    o.views = new OpViews(levels, {
      view: (v) => sink.view(v as never),
      error: (e) => {
        this.settleError(o, e);
        sink.error(e);
      },
    });
    this.ops.set(o.opId, o);
    if (this.status === 'offline') this.queue(o, true);
    this.persist();
    // The caller stops listening (Cancelled, Timeout: the signal's reason). An op no replica took
    // is forgotten and never sent; one that may have landed is tracked until committed.
    signal?.addEventListener(
      'abort',
      () => {
        const reason: unknown = signal.reason;
        const taken = o.refusals < o.sends;
        if (!taken) {
          o.committed = true;
          o.sink.neverCommits?.(reason instanceof CreekError ? reason : undefined);
        }
        if (reason instanceof CreekError)
          settleIndeterminacy(reason, taken, taken ? this.handle(o) : null);
        this.answered(o);
      },
      { once: true },
    );
    if (this.ready) this.send(o);
  }

  /**
   * Says on an op's error whether the op may have taken effect, with a handle on it if so: a weak
   * op's failure is its tentative answer (it still runs where it is committed, unless it is never
   * ordered), a strong op's stable one is final; other errors say for themselves.
   */
  private settleError(o: SessionOp, e: CreekError): void {
    const may =
      e instanceof OperationFailed ? o.level === 'weak' && !o.committed : e.mayHaveTakenEffect;
    settleIndeterminacy(e, may, may && this.closedBy === null ? this.handle(o) : null);
  }

  /** The handle on an op whose fate the caller does not know (errors' `indeterminate`). */
  private handle(o: SessionOp): Indeterminate {
    return { settled: () => this.fateOf(o), abandon: () => this.abandon(o) };
  }

  private fateOf(o: SessionOp): Promise<Fate> {
    if (o.fate !== null) return Promise.resolve(o.fate);
    if (this.closedBy !== null) return Promise.reject(new ClientClosed(true));
    return new Promise((resolve, reject) => o.waiting.push({ resolve, reject }));
  }

  /** What became of an op is known: tell whoever waits. */
  private settle(o: SessionOp, fate: Fate): void {
    if (o.fate !== null) return;
    o.fate = fate;
    for (const w of o.waiting.splice(0)) w.resolve(fate);
  }

  /**
   * Asks the cluster to abandon `o` for good (`creek.abandon`, strong, the session's next op): it
   * is no longer resubmitted, and wherever the abandon lands in the committed order decides.
   */
  private abandon(o: SessionOp): Promise<Fate> {
    if (o.fate !== null) return Promise.resolve(o.fate);
    if (o.committed) return Promise.resolve({ fate: 'committed', outcome: o.outcome });
    o.abandoning = true;
    return new Promise<Fate>((resolve, reject) => {
      this.submitOperation<{ abandoned: boolean; outcome?: Outcome | null }>(
        ABANDON_OP,
        { seq: o.seq },
        ['strong'],
        {
          view: (v) => {
            if (!v.final) return;
            const fate: Fate = v.value.abandoned
              ? { fate: 'abandoned' }
              : { fate: 'committed', outcome: v.value.outcome ?? o.outcome };
            this.settle(o, fate);
            if (fate.fate === 'abandoned') o.sink.neverCommits?.();
            else o.sink.committed?.();
            // Settled either way: nothing of it is left to resubmit or wait for, and the session
            // may acknowledge past it.
            o.committed = true;
            o.abandoning = false;
            if (o.views === null) this.ops.delete(o.opId);
            this.persist();
            resolve(o.fate!);
          },
          error: reject,
        },
      );
    });
  }

  /**
   * A replica serves this client (it answered an op, or welcomed it with none waiting): connected,
   * and the ops of the offline queue, sent at the welcome, are in its hands.
   */
  private served(): void {
    this.failingSince = null;
    this.setStatus('connected');
    for (const o of this.ops.values()) if (o.queued) this.queue(o, false);
  }

  /** Puts an op into the offline queue or takes it out, and tells its Correctable. */
  private queue(o: SessionOp, queued: boolean): void {
    if (o.queued === queued) return;
    o.queued = queued;
    o.sink.queued?.(queued);
  }

  private setStatus(s: ConnectionStatus): void {
    if (this.status === s) return;
    this.status = s;
    for (const l of [...this.statusListeners]) l(s);
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
    if (this.closedBy !== null) {
      sink.error(this.closedBy(false));
      return () => undefined;
    }
    const watchId = `w${this.nextWatch++}`;
    this.watches.set(watchId, { op, args, sink });
    if (this.ready) this.sendWatch(watchId, op, args);
    return () => {
      if (this.watches.delete(watchId) && this.ready && this.socket !== null)
        this.socket.send(encodeFrame({ t: 'unwatch', watchId }));
    };
  }

  private sendWatch(watchId: string, op: string, args: unknown): void {
    this.socket!.send(encodeFrame({ t: 'watch', watchId, op, args: args as never }));
  }

  private watchFrame(f: Extract<ServerFrame, { t: 'watched' | 'unwatched' }>): void {
    const w = this.watches.get(f.watchId);
    if (w === undefined) return;
    if (f.t === 'unwatched') {
      // A replica that takes nothing for now (paused, catching up): the query stays, and is sent
      // again at the next connection, as ops are.
      if (f.code === 'unavailable') return;
      this.watches.delete(f.watchId);
      return w.sink.error(errorFromWire(f.code, f.message));
    }
    const level = f.level === 'stable' ? 'strong' : 'weak';
    if (f.outcome.ok) w.sink.view({ value: f.outcome.value, level, final: false });
    else w.sink.failed(new OperationFailed(f.outcome.error), level);
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
    if (stored !== null) {
      this.session = stored.session;
      this.nextSeq = stored.nextSeq;
      for (const s of stored.ops) {
        const c = Correctable.create<unknown>();
        const levels: ConsistencyLevel[] =
          s.level === 'weak' ? ['weak'] : s.stableOnly ? ['strong'] : ['weak', 'strong'];
        this.track(s.seq, s.op, s.args, levels, c.sink, undefined);
        out.push({ op: s.op, args: s.args, correctable: c.correctable });
      }
    }
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
    const storage = this.storage;
    const snapshot: StoredSession = {
      version: 1,
      session: this.session,
      nextSeq: this.nextSeq,
      ops: [...this.ops.values()]
        .filter((o) => !o.committed && !o.abandoning)
        .map((o) => ({
          seq: o.seq,
          op: o.op,
          args: o.args,
          level: o.level,
          stableOnly: o.stableOnly,
        })),
    };
    this.saving = storage
      .save(snapshot)
      .catch(() => undefined) // a failed save is retried with the next change
      .then(() => {
        this.saving = null;
        if (this.saveAgain) {
          this.saveAgain = false;
          this.save();
        }
      });
  }

  /** Ops of the session not yet acknowledged (answered and committed). */
  unacknowledged(): number {
    return this.ops.size;
  }

  /** Ends the connection; unanswered ops fail with ClientClosed, and so does every later invoke. */
  close(): void {
    // What is stored stays as it was: a client started later on the same storage sends its ops.
    this.storage = null;
    if (this.closedBy === null) this.closedBy = (sent) => new ClientClosed(sent);
    if (this.stallTimer !== null) clearInterval(this.stallTimer);
    this.socket?.close();
    this.failAll((o) => new ClientClosed(o.sentOn > 0));
    for (const w of this.watches.values()) w.sink.error(new ClientClosed(false));
    this.watches.clear();
    for (const o of this.ops.values()) {
      for (const w of o.waiting.splice(0)) w.reject(new ClientClosed(true));
      if (!o.committed) o.sink.neverCommits?.(new ClientClosed(o.sentOn > 0));
    }
    this.ops.clear();
  }

  /**
   * Sends `o` on this connection, or, while as many ops as a replica takes from one connection
   * are in flight there, keeps it until one is done: a failover resubmits every op not known
   * committed, answered weak ops included, and a burst above the replica's limit had it refuse the
   * rest as busy, failing ops that had already been answered once.
   */
  private send(o: SessionOp): void {
    if (this.inFlight.size >= this.maxInFlight) {
      this.backlog.push(o);
      return;
    }
    this.sendNow(o);
  }

  /** An op of this connection is done for its replica: the next ones kept back go. */
  private release(opId: string): void {
    if (!this.inFlight.delete(opId)) return;
    while (this.backlog.length > 0 && this.inFlight.size < this.maxInFlight && this.ready) {
      const o = this.backlog.shift()!;
      // Settled meanwhile (abandoned, cancelled before it went): nothing to send.
      if (this.ops.get(o.opId) !== o || o.committed || o.abandoning) continue;
      this.sendNow(o);
    }
  }

  private sendNow(o: SessionOp): void {
    this.inFlight.set(o.opId, o.level);
    o.sentOn = this.connection;
    o.sentAt = Date.now();
    o.sends++;
    this.socket!.send(
      encodeFrame({
        t: 'invoke',
        opId: o.opId,
        op: o.op,
        args: o.args as never,
        level: o.level,
        ...(o.stableOnly ? { tentative: false as const } : {}),
        seq: o.seq,
        acked: this.acked(),
      }),
    );
  }

  /** Every op of the session numbered below this is answered and committed. */
  private acked(): number {
    let min = this.nextSeq;
    for (const o of this.ops.values()) if (o.seq < min) min = o.seq;
    return min;
  }

  private async open(): Promise<void> {
    if (this.closedBy !== null) return;
    // The hello names the session: the one the storage brings back, if any.
    if (this.restoring !== null) await this.restoring;
    if (this.closedBy !== null) return;
    let make: SocketFactory;
    try {
      make = await this.factory;
    } catch (e) {
      // No way to open a socket at all (connect's tls on a browser, say): every call fails so.
      const err = new ProtocolError(e instanceof Error ? e.message : String(e), {
        mayHaveTakenEffect: false,
      });
      this.closedBy = () => err;
      return this.failAll(() => err);
    }
    const url = this.options.urls[this.urlIndex % this.options.urls.length]!;
    let ws: SocketLike;
    try {
      ws = make(url);
    } catch (e) {
      // A URL the WebSocket constructor refuses (not ws:// or wss://, malformed).
      this.problems.set(url, connectFailure(url, e instanceof Error ? e.message : String(e)));
      return this.retry();
    }
    this.socket = ws;
    this.connection++;
    // A new replica counts from nothing; the welcome resubmits what the last one held.
    this.inFlight.clear();
    this.backlog.length = 0;
    let opened = false;
    let failure: string | undefined;
    ws.onopen = () => {
      opened = true;
      ws.send(
        encodeFrame({
          t: 'hello',
          version: PROTOCOL_VERSION,
          token: this.options.token,
          session: this.session,
          ...(this.seen.some((n) => n > 0) ? { seen: [...this.seen] } : {}),
        }),
      );
    };
    ws.onmessage = (ev: { data: unknown }) => {
      // A connection left for a stall may still deliver what was in flight: not ours any more.
      if (this.socket !== ws) return;
      this.onFrame(url, typeof ev.data === 'string' ? ev.data : String(ev.data));
    };
    // A close follows; `ws` says why the connection failed (browsers do not).
    ws.onerror = (ev: { message?: unknown }) => {
      if (typeof ev.message === 'string') failure = ev.message;
    };
    ws.onclose = () => {
      if (this.socket !== ws) return;
      if (!opened) this.problems.set(url, connectFailure(url, failure));
      this.ready = false;
      this.replica = null;
      if (this.status === 'connected') this.setStatus('connecting');
      this.retry();
    };
  }

  private retry(): void {
    if (this.closedBy !== null) return;
    const now = Date.now();
    this.failingSince ??= now;
    const timeoutMs = this.options.connectTimeoutMs ?? 10_000;
    if (now - this.failingSince > timeoutMs && this.offlineQueue) {
      // Offline: every op waiting stays, queued, to be sent when a replica answers.
      this.setStatus('offline');
      for (const o of this.ops.values()) if (o.views !== null) this.queue(o, true);
    } else if (now - this.failingSince > timeoutMs) {
      const tried = this.options.urls
        .map((u) => `${u} (${this.problems.get(u) ?? 'no answer'})`)
        .join('; ');
      this.failAll((o) => {
        const mayHaveTakenEffect = o.refusals < o.sends;
        // Never taken by a replica: forgotten, so that it is not resubmitted behind the caller.
        if (!mayHaveTakenEffect) o.committed = true;
        return new Unavailable(
          `no replica answered for ${timeoutMs} ms; tried ${tried}${
            mayHaveTakenEffect
              ? '; the client resubmits this op once a replica answers, and it is applied once'
              : ''
          }`,
          { mayHaveTakenEffect },
        );
      });
      for (const o of [...this.ops.values()])
        if (o.views === null && o.committed) this.ops.delete(o.opId);
      this.persist();
      this.failingSince = now;
    }
    this.urlIndex++;
    setTimeout(() => void this.open(), this.backoffMs);
    this.backoffMs = Math.min(this.backoffMs * 2, 1000);
  }

  private onFrame(url: string, text: string): void {
    this.lastFrameAt = Date.now();
    const decoded = decodeServerFrame(text);
    if (!decoded.ok)
      return this.failAll(
        () =>
          new ProtocolError(
            `the replica at ${url} sent a frame this client cannot read: ${decoded.message}`,
          ),
      );
    const f: ServerFrame = decoded.frame;
    if (f.t === 'welcome') {
      this.ready = true;
      this.replica = f.replica;
      this.operations = f.ops;
      this.readOnlyOperations = f.readOnly ?? null;
      this.lastStableAt = this.lastFrameAt;
      // A replica that welcomes and then refuses every op (paused, catching up) is no answer: the
      // connect timeout keeps running until one serves an op, when ops wait.
      if (![...this.ops.values()].some((o) => o.views !== null)) this.served();
      this.problems.delete(url);
      this.backoffMs = 50;
      // Resubmit every op not known committed, answered ones too (their commit must be learnt):
      // same op ids and numbers, so nothing is applied twice.
      for (const o of this.ops.values()) if (!o.committed && !o.abandoning) this.send(o);
      for (const [watchId, w] of this.watches) this.sendWatch(watchId, w.op, w.args);
      return;
    }
    if (f.t === 'committed' || f.t === 'confirms') this.lastStableAt = this.lastFrameAt;
    if (f.t === 'committed') {
      for (const o of [...this.ops.values()])
        if (o.seq < f.below && o.sentOn === this.connection) this.commit(o);
      return;
    }
    if (f.t === 'confirms') {
      for (const opId of f.opIds) this.release(opId);
      for (const opId of f.opIds) {
        const o = this.ops.get(opId);
        if (o === undefined) continue;
        this.committed(o, o.tentative);
        if (o.views?.confirm() === true) this.answered(o);
      }
      return;
    }
    if (f.t === 'watched' || f.t === 'unwatched') return this.watchFrame(f);
    if (f.t === 'error' && f.opId === undefined) return this.connectionError(url, f);
    // What the replica counts as done (client-endpoint.ts): a weak op at its first view, a strong
    // one at its stable view or confirm, any op at an error.
    if (f.t !== 'view' || f.level === 'stable' || this.inFlight.get(f.opId) === 'weak')
      this.release(f.opId!);
    const o = this.ops.get(f.opId!);
    if (o === undefined) return;
    if (f.t === 'view' || f.t === 'confirm') this.served();
    if (f.t === 'view') {
      this.see(f.seen);
      if (f.level === 'stable') this.lastStableAt = this.lastFrameAt;
      // A stable view is of a committed op. A weak view without an op id is of an op that is never
      // ordered (a read, answered from the replica's state): the cluster keeps nothing to forget.
      if (f.level === 'tentative') o.tentative = f.outcome;
      if (f.level === 'stable') this.committed(o, f.outcome);
      else if (o.level === 'weak' && (f.id ?? null) === null) {
        // Never ordered (a read answered from the replica's state): done at its answer.
        o.committed = true;
        o.sink.committed?.();
      }
      if (o.views?.outcome(f.level, f.outcome) === true) this.answered(o);
    } else if (f.t === 'confirm') {
      this.lastStableAt = this.lastFrameAt;
      this.committed(o, o.tentative);
      if (o.views?.confirm() === true) this.answered(o);
    } else if (f.code === 'busy' || f.code === 'unavailable') {
      this.refused(url, o, f.code, f.message);
    } else {
      // Refused arguments, op names or frames are refused everywhere: never ordered.
      if (
        f.code === 'invalid-arguments' ||
        f.code === 'unknown-op' ||
        f.code === 'bad-frame' ||
        f.code === 'out-of-order'
      )
        o.committed = true;
      o.views?.error(errorFromWire(f.code, f.message));
      this.answered(o);
    }
  }

  /**
   * The replica did not take the op (busy, or unavailable: paused, shutting down, catching up).
   * Unavailable with another replica to try: leave this one, and the op goes there. Otherwise the
   * caller gets the error, saying whether the op may still take effect: if no replica took it
   * (every send refused) it is forgotten, never resubmitted, so a caller retrying as told does not
   * apply it twice; if an earlier send may have landed, it stays and is resubmitted (applied once).
   */
  private refused(url: string, o: SessionOp, code: 'busy' | 'unavailable', message: string): void {
    if (o.sentOn !== this.connection) return; // an answer to an earlier send, since resubmitted
    o.refusals++;
    if (code === 'unavailable' && this.options.urls.length > 1) {
      if (this.socket !== null) this.leave(`unavailable: ${message}`);
      return;
    }
    const mayHaveTakenEffect = o.refusals < o.sends;
    if (!mayHaveTakenEffect) o.committed = true; // never ordered: nothing to resubmit or wait for
    o.views?.error(errorFromWire(code, message, mayHaveTakenEffect));
    this.answered(o);
  }

  /**
   * Keeps the most the session has seen. A view's own id is not counted: the session's own ops
   * that are not committed are resubmitted when it moves, so no replica needs to have them first.
   */
  private see(seen: readonly number[] | undefined): void {
    if (seen === undefined) return;
    for (let i = 0; i < seen.length; i++) this.seen[i] = Math.max(this.seen[i] ?? 0, seen[i]!);
  }

  /** The caller has its answer (or stopped listening): the op is forgotten once committed. */
  private answered(o: SessionOp): void {
    o.views = null;
    if (o.committed && !o.abandoning) this.ops.delete(o.opId);
    this.persist();
  }

  private commit(o: SessionOp): void {
    this.committed(o, null);
    // An op being abandoned stays until the abandon's answer: the session must not acknowledge
    // past it before, or the abandon could no longer find which came first.
    if (o.views === null && !o.abandoning) this.ops.delete(o.opId);
    this.persist();
  }

  /**
   * A replica says the op is committed: its fate is known, with its outcome there if it said. Not
   * for an op being abandoned: a copy of it committed after the abandon is committed as a no-op,
   * and only the abandon's answer says which came first.
   */
  private committed(o: SessionOp, outcome: Outcome | null): void {
    o.committed = true;
    if (outcome !== null) o.outcome = outcome;
    if (o.abandoning) return;
    this.settle(o, { fate: 'committed', outcome: o.outcome });
    o.sink.committed?.();
  }

  /**
   * An error frame that names no op: about the connection, or about a frame the replica could not
   * read far enough to find its op id (protocol codec.ts names it whenever it can).
   */
  private connectionError(url: string, f: Extract<ServerFrame, { t: 'error' }>): void {
    this.problems.set(url, `${f.code}: ${f.message}`);
    if (f.code === 'unauthorized') {
      const e = new Unauthorized(f.message);
      this.closedBy = () => e;
      return this.failAll(() => e);
    }
    // The replica closes the connection (it has not caught up with this session, or it is
    // shutting down), and the binding tries the next one.
    if (f.code === 'unavailable') return;
    if (f.code === 'version') {
      // Another replica may speak this client's version; if none does, ops fail after the
      // connect timeout, with this problem in the message.
      this.socket?.close();
      return;
    }
    if (!this.ready) {
      // The hello was refused: this client cannot use this replica. Its ops fail now, rather than
      // at the connect timeout; the binding goes on to the next replica.
      const why = `the replica at ${url} refused this client's hello (${f.code}: ${f.message})`;
      this.failAll((o) => new ProtocolError(why, { mayHaveTakenEffect: o.sentOn > 0 }));
      this.socket?.close();
      return;
    }
    // One of the frames sent on this connection was refused, and nothing says which: fail every op
    // sent on it that has no answer yet, and stop tracking them, so that the refused frame is not
    // resubmitted at the next connection.
    const why = `the replica at ${url} refused a frame without naming its op (${f.code}: ${f.message}); this op had no answer yet: if its frame was the one refused it was not applied, otherwise it may still be`;
    for (const o of [...this.ops.values()]) {
      if (o.views === null || o.sentOn !== this.connection) continue;
      o.views.error(new ProtocolError(why));
      this.ops.delete(o.opId);
    }
  }

  /** Ends every op still waiting for its answer with the error `fail` gives for it. */
  private failAll(fail: (o: SessionOp) => CreekError): void {
    for (const o of this.ops.values()) {
      o.views?.error(fail(o));
      o.views = null;
    }
  }
}

/**
 * A random session id. `randomUUID` exists only in secure contexts (https, localhost), and neither
 * it nor `getRandomValues` in React Native's Hermes without a polyfill.
 */
function randomId(): string {
  const c = (
    globalThis as {
      crypto?: { randomUUID?: () => string; getRandomValues?: (a: Uint8Array) => Uint8Array };
    }
  ).crypto;
  if (typeof c?.randomUUID === 'function') return c.randomUUID();
  if (typeof c?.getRandomValues === 'function') {
    const bytes = c.getRandomValues(new Uint8Array(16));
    return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  }
  throw new Error(
    'connect: this runtime has no crypto.getRandomValues, which the client needs for its random session id; ' +
      "on React Native, install react-native-get-random-values and import it first in your app's entry file",
  );
}

async function socketFactory(
  given: CreekBindingOptions['WebSocket'],
  tls: CreekBindingOptions['tls'],
): Promise<SocketFactory> {
  if (tls !== undefined) {
    if (given !== undefined)
      throw new Error(
        'connect: give either tls or WebSocket (a WebSocket class brings its own TLS)',
      );
    // Only the `ws` package takes a CA; the browser's and Node 22's global WebSocket do not.
    const ws = await import('ws').catch(() => null);
    if (ws === null || typeof ws.default !== 'function')
      throw new Error(
        "connect: tls.ca needs Node and the 'ws' package; a browser trusts the CAs of its system",
      );
    const WS = ws.default as unknown as new (url: string, o: { ca: unknown }) => SocketLike;
    return (url) => new WS(url, { ca: tls.ca });
  }
  if (given !== undefined) return (url) => new given(url);
  const global = (globalThis as { WebSocket?: new (url: string) => SocketLike }).WebSocket;
  if (global !== undefined) return (url) => new global(url);
  // Node before 22 has no global WebSocket: use the `ws` package.
  const ws = (await import('ws')).default as unknown as new (url: string) => SocketLike;
  return (url) => new ws(url);
}
