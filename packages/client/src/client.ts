import { AccuracyTally, type OpAccuracy } from './accuracy.js';
import { encodeFrame, MAX_FRAME_BYTES, MAX_NESTING } from '@creek/protocol';
import type { App } from '@creek/app';
import type { z } from 'zod';
import type { Binding, ConsistencyLevel, ViewSink } from './binding.js';
import { JoinedContext } from './joined-context.js';
import type { OptimisticChange } from './session/optimistic.js';
import { SharedContext, type SharedContextIo } from './session/shared-context.js';
import { Correctable } from './correctable.js';
import {
  CreekBinding,
  type AuthSource,
  type ConnectionStatus,
  type CreekBindingOptions,
  type Identity,
  type KnownReplica,
  type RestoredOp,
  type WatchSink,
} from './creek-binding.js';
import { LiveQuery } from './live-query.js';
import { InvalidArguments, ProtocolError } from './errors.js';
import { WATCH_A_READ } from './watch-refusal.js';
import { collectOptimistic } from './optimistic-views.js';
import { checkJson, type JsonLimits } from './json-check.js';
import { DEFAULT_CACHE_ENTRIES, ResultCache } from './result-cache.js';

export type {
  ArgsOf,
  InvokeOptions,
  OpName,
  OptimisticViews,
  ReadOpName,
  ResultOf,
} from './op-types.js';
import type { ArgsOf, InvokeOptions, OpName, ReadOpName, ResultOf } from './op-types.js';

export interface ConnectOptions<A> extends CreekBindingOptions {
  /** The app definition itself: its Zod schemas then check arguments here, before anything is sent. */
  readonly app?: A;
  /**
   * How many read-only results the client keeps for the `cached` level (default 1,000, the least
   * recently used dropped first; 0 keeps none).
   */
  readonly cacheEntries?: number;
}

/**
 * A Creek client. Every call returns a Correctable: `invoke` gives a preliminary view (the
 * replica's tentative answer) and then the final, stable one; `invokeWeak` and `invokeStrong` give
 * only a final view, at that level. Typed from the app's own definitions:
 *
 * ```ts
 * import app from './app.js';
 * const creek = connect<typeof app>({ urls: ['ws://127.0.0.1:7100/client'], token });
 * const ticket = await creek.invoke('queue.dequeue', { queue: 'tickets' });
 * ```
 */
export class CreekClient<A = App> {
  /** A client over any binding (Correctables §5.1): the Creek one, the in-memory one, a scripted one. */
  constructor(
    private readonly binding: Binding & {
      close?(): void;
      replica?: number | null;
      replicas?(): readonly KnownReplica[];
      context?(): Promise<string>;
      after?(token: string): Promise<string>;
      sharedContextIo?(): SharedContextIo;
      operations?: readonly string[] | null;
      readOnlyOperations?: readonly string[] | null;
      status?: ConnectionStatus;
      onStatus?(listener: (s: ConnectionStatus) => void): () => void;
      restored?(): Promise<readonly RestoredOp[]>;
      watch?(op: string, args: unknown, sink: WatchSink): () => void;
      identity?: Identity;
      onIdentity?(listener: (i: Identity) => void): () => void;
      setAuth?(auth: AuthSource | null): void;
    },
    private readonly options: { readonly app?: A; readonly cacheEntries?: number } = {},
  ) {
    const entries = options.cacheEntries ?? DEFAULT_CACHE_ENTRIES;
    if (!Number.isInteger(entries) || entries < 0)
      throw new RangeError(
        `connect: cacheEntries must be a whole number, 0 or more, not ${String(entries)}`,
      );
    this.cache = new ResultCache(entries);
    // Results read as one user are never shown to the next as a `cached` view.
    let session = binding.identity?.session;
    binding.onIdentity?.((i) => {
      if (i.session !== session) this.cache.clear();
      session = i.session;
    });
  }

  private readonly cache: ResultCache;
  private readonly tally = new AccuracyTally();
  /** `close()` was called: status() says `closed` from then on. */
  private closed = false;
  /** Listeners of onStatus, told `closed` by close() (the binding is silent by then). */
  private readonly statusListeners = new Set<(s: ConnectionStatus) => void>();

  /** The binding's levels, with `cached` below them: the client keeps that one itself. */
  consistencyLevels(): ConsistencyLevel[] {
    const offered = this.binding.consistencyLevels();
    return offered.includes('cached') ? offered : ['cached', ...offered];
  }

  /** Whether `op` only reads: from the app when the client has it, else as the replica said. */
  private readOnly(op: string): boolean {
    const app = this.options.app as App | undefined;
    const def = app?.lookup(op);
    if (def !== undefined) return def.readOnly === true;
    return this.binding.readOnlyOperations?.includes(op) ?? false;
  }

  /**
   * Never throws: a bad op name, arguments that are not JSON (see json-check.ts) or fail the app's
   * schema, and bad options end the Correctable with {@link InvalidArguments}, and nothing is sent.
   */
  invoke<K extends OpName<A>>(
    op: K,
    args: ArgsOf<A, K>,
    options: InvokeOptions<A> = {},
  ): Correctable<ResultOf<A, K>> {
    return this.invokeThrough(op, args, options);
  }

  /** `invoke`, its checked op handed to `through` (a shared context's) instead of the binding. */
  private invokeThrough<K extends OpName<A>>(
    op: K,
    args: ArgsOf<A, K>,
    options: InvokeOptions<A>,
    through?: (
      op: string,
      args: unknown,
      levels: ConsistencyLevel[],
      sink: ViewSink<unknown>,
    ) => void,
  ): Correctable<ResultOf<A, K>> {
    const submit = <T>(
      levels: ConsistencyLevel[],
      sink: ViewSink<T>,
      checked: unknown,
      stop?: AbortSignal,
      optimistic?: readonly OptimisticChange[],
    ): void =>
      through === undefined
        ? this.binding.submitOperation(op, checked, levels, sink, stop, optimistic)
        : through(op, checked, levels, sink as ViewSink<unknown>);
    const offered = this.consistencyLevels();
    const refused = invalidOptions(op, options, offered);
    const controller = Correctable.create<ResultOf<A, K>>(
      refused === null ? { signal: options.signal, timeoutMs: options.timeoutMs } : {},
    );
    const checked = refused ?? this.check(op, args);
    if (checked instanceof InvalidArguments) {
      controller.fail(checked);
      return controller.correctable;
    }
    const optimistic =
      options.optimistic === undefined
        ? undefined
        : collectOptimistic(op, options.optimistic as never, (q, a) => this.check(q, a));
    if (optimistic instanceof InvalidArguments) {
      controller.fail(optimistic);
      return controller.correctable;
    }
    // The binding listens to the controller's signal only if the caller can end the op early.
    const stop =
      refused === null && (options.signal !== undefined || options.timeoutMs !== undefined)
        ? controller.signal
        : undefined;
    const levels = options.levels ?? offered;
    const replicaLevels = levels.filter((l) => l !== 'cached');
    // A call that gets a tentative view and then a final one feeds `accuracy(op)`.
    const sink =
      replicaLevels.includes('weak') && replicaLevels.includes('strong')
        ? this.tally.watch(op, controller.sink)
        : controller.sink;
    if (!levels.includes('cached') || !this.readOnly(op)) {
      submit(replicaLevels, sink, checked, stop, optimistic);
      return controller.correctable;
    }
    // A read-only op: its result seen before comes at once, and each new view is kept for later.
    const key = ResultCache.key(op, checked);
    const seen = this.cache.get(key);
    if (seen !== undefined) controller.update(seen.value as ResultOf<A, K>, 'cached');
    submit<ResultOf<A, K>>(
      replicaLevels,
      {
        ...sink,
        view: (v) => {
          this.cache.set(key, v.value);
          sink.view(v);
        },
      },
      checked,
      stop,
    );
    return controller.correctable;
  }

  /**
   * A live query: the replica reads the read-only op `op(args)` now and again whenever a key it
   * read may have changed, at its tentative state (views at level `weak`) and at its committed one
   * (`strong`), and pushes each result that differs from the last. Arguments are checked as for
   * `invoke`; an op that writes is refused (the replica says so). At most 64 per connection.
   */
  watch<K extends ReadOpName<A>>(op: K, args: ArgsOf<A, K>): LiveQuery<ResultOf<A, K>> {
    const checked = this.check(op, args);
    return new LiveQuery<ResultOf<A, K>>((sink) => {
      if (checked instanceof InvalidArguments) {
        sink.error(checked);
        return () => undefined;
      }
      if (!this.readOnly(op) && (this.options.app as App | undefined)?.lookup(op) !== undefined) {
        sink.error(
          new InvalidArguments({
            op,
            field: 'op',
            problem: `'${op}' writes: only read-only ops can be watched`,
            fix: WATCH_A_READ,
          }),
        );
        return () => undefined;
      }
      if (this.binding.watch === undefined)
        throw new Error('live queries need a binding that can watch (the Creek one: connect())');
      return this.binding.watch(op, checked, sink as unknown as WatchSink);
    });
  }

  invokeWeak<K extends OpName<A>>(
    op: K,
    args: ArgsOf<A, K>,
    options: Omit<InvokeOptions<A>, 'levels'> = {},
  ): Correctable<ResultOf<A, K>> {
    return this.invoke(op, args, { ...options, levels: ['weak'] });
  }

  invokeStrong<K extends OpName<A>>(
    op: K,
    args: ArgsOf<A, K>,
    options: Omit<InvokeOptions<A>, 'levels'> = {},
  ): Correctable<ResultOf<A, K>> {
    return this.invoke(op, args, { ...options, levels: ['strong'] });
  }

  /** The replica this client is connected to now (null while it connects). */
  replica(): number | null {
    return this.binding.replica ?? null;
  }

  /**
   * The replicas this client knows, nearest first: the URLs it was given and those the cluster
   * lists (`connect({ discover })`), with the round trip last measured to each. The client uses
   * the first that serves. Empty for a binding without replicas (in memory).
   */
  /**
   * How often this client saw op `op`'s tentative answer confirmed: of its `invoke` calls that got
   * a tentative view and then their final one, how many final answers were the tentative one. An
   * app may choose to wait for the final answer of ops whose tentative answers it often saw
   * corrected. Counted since this client was made, by this client only; the replicas count over
   * all clients (`/status` `metrics.byOp`).
   */
  accuracy(op: OpName<A>): OpAccuracy {
    return this.tally.of(op);
  }

  replicas(): readonly KnownReplica[] {
    return this.binding.replicas?.() ?? [];
  }

  /**
   * A context token: what this client has seen and the ops it has answers to, signed by its
   * replica, for another client to start after (`connect({ after: token })`) — the user's other
   * device, or a server rendering a page for this browser, whose reads then see this client's
   * writes. Resolves once a replica serves this client. A short string (`ct1.<counts>.<mac>`, tens
   * of characters for a small cluster) safe to put in a header or a URL; it says how many ops each
   * replica had, nothing of their contents. Rejects with ProtocolError on a binding or a replica
   * without context tokens, and with ClientClosed once the client is closed.
   */
  context(): Promise<string> {
    if (this.binding.context === undefined)
      return Promise.reject(
        new ProtocolError('this client has no replicas to sign a context token (in memory)', {
          mayHaveTakenEffect: false,
        }),
      );
    return this.binding.context();
  }

  /**
   * This client goes on after another client's context token (from its `context()`): resolves once
   * this client's replica holds every op the token covers, and from then on this client's ops run
   * after them and its reads see them, at this replica and any it moves to — as for a client
   * started with `connect({ after: token })`, without a new connection. Ops invoked before it
   * resolves are not held back. Resolves with a token covering both clients' contexts.
   *
   * Rejects with TypeError for a malformed token, with Unavailable when the replica has not caught
   * up with the token within 3 s (ask again, or the client moves on), with ProtocolError on a
   * binding or a replica without context tokens, and with ClientClosed once the client is closed.
   * The replica does not check the token's signature here, since nothing waits on it but this
   * client: a token naming ops that do not exist fails as Unavailable.
   */
  after(token: string): Promise<string> {
    if (this.binding.after === undefined)
      return Promise.reject(
        new ProtocolError(
          'this client has no replicas to go on after a context token (in memory)',
          {
            mayHaveTakenEffect: false,
          },
        ),
      );
    return this.binding.after(token);
  }

  /**
   * Joins shared context `id` (at most 128 characters): the returned handle's ops and those of
   * every other client that joined `id` are seen by one another in order — an op runs after, and
   * reads, every op of the context acknowledged before it began, whichever replicas the clients
   * use (a customer's two branches, a document's editors). See JoinedContext. Joining sends
   * nothing; each op in the context reads the context's state then. Throws TypeError for a bad id,
   * and Error on a binding without replicas (in memory).
   */
  joinContext(id: string): JoinedContext<A> {
    const io = this.binding.sharedContextIo?.();
    if (io === undefined)
      throw new Error(
        'joinContext: this client has no replicas to share a context through (in memory)',
      );
    return new JoinedContext<A>(new SharedContext(id, io), (op, args, options, submit) =>
      this.invokeThrough(op, args, options, submit),
    );
  }

  /**
   * Where the client stands with the cluster: `connecting` (no replica serves it yet, or it lost the
   * one that did), `connected` (a replica serves it), `offline` (none has answered for
   * connectTimeoutMs; with `offline` on, ops wait in the queue meanwhile), `closed` (after
   * `close()`). A binding without a network (in memory) is `connected` until then.
   */
  status(): ConnectionStatus {
    if (this.closed) return 'closed';
    return this.binding.status ?? 'connected';
  }

  /**
   * The ops this client took over from its offline storage (`connect({ offline: { storage } })`):
   * ops an earlier client on that storage had not seen committed, sent again with their session
   * numbers (applied once), each with its Correctable. Empty without storage. Rejects, saying why,
   * when the storage could not be read (the client then runs with a new session).
   */
  restored(): Promise<readonly RestoredOp[]> {
    return this.binding.restored?.() ?? Promise.resolve([]);
  }

  /**
   * Where the client stands with its user (see {@link Identity}): `signed-out` (anonymous),
   * `signing-in`, `signed-in` (with the user a replica accepted), `expired`, `refused`, and the
   * last error about the user's token. A binding without users (in memory) is `signed-out`.
   */
  identity(): Identity {
    return this.binding.identity ?? SIGNED_OUT;
  }

  /** Calls `listener` with each new identity; returns the function that stops it. */
  onIdentity(listener: (i: Identity) => void): () => void {
    if (this.closed) return () => undefined;
    return this.binding.onIdentity?.(listener) ?? (() => undefined);
  }

  /**
   * Signs another user in, or signs out (null): `auth` as connect takes it (the user's token, or a
   * function that returns one). The session of the previous user ends: its ops not yet answered
   * fail with SignedOut (`mayHaveTakenEffect` if they were sent: they may still be applied, as the
   * previous user; if not, they never will be), its live queries end with SignedOut, and nothing
   * it read is shown to the next user; the next user's session starts on a new connection. One
   * exception: a token string of the user already signed in is a refresh — the session goes on,
   * and the replica takes the new token on the same connection.
   */
  setAuth(auth: AuthSource | null): void {
    if (this.binding.setAuth === undefined)
      throw new Error(
        'setAuth needs a binding with signed-in users (the Creek one: connect()); the in-memory one has none',
      );
    this.binding.setAuth(auth);
  }

  /** Calls `listener` with each new status; returns the function that stops it. */
  onStatus(listener: (s: ConnectionStatus) => void): () => void {
    if (this.closed) return () => undefined;
    const stop = this.binding.onStatus?.(listener) ?? (() => undefined);
    this.statusListeners.add(listener);
    return () => {
      this.statusListeners.delete(listener);
      stop();
    };
  }

  /**
   * The names of the ops the cluster's app offers, built-in ones included, as the replica listed
   * them when it welcomed this client; null before any did. For tools that invoke ops by name (a
   * console, the visualizer's workload panel); typed code knows its ops from the app.
   */
  operations(): readonly string[] | null {
    return this.binding.operations ?? null;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.binding.close?.();
    // The binding says nothing once closed: the client tells its own listeners.
    const listeners = [...this.statusListeners];
    this.statusListeners.clear();
    for (const l of listeners) l('closed');
  }

  /**
   * The op name and arguments as they will be sent, or why they cannot be: the arguments must be
   * JSON the replicas accept unchanged; with the app at hand, they must also pass its schema, whose
   * output (defaults applied) is what is sent, and is checked again.
   */
  private check(op: string, args: unknown): unknown {
    const badName = invalidOpName(op);
    if (badName !== null) return new InvalidArguments({ field: 'op', problem: badName });
    const notJson = jsonProblem(op, args);
    if (notJson !== null) return notJson;
    const app = this.options.app as App | undefined;
    if (app === undefined) return args;
    const def = app.lookup(op);
    if (def === undefined)
      return new InvalidArguments({
        op,
        field: 'op',
        problem: `unknown operation '${op}'; this app has: ${app.names().join(', ')}`,
        fix: "check the op name: it must be one of the app's ops",
      });
    let parsed: ReturnType<z.ZodType['safeParse']>;
    try {
      parsed = (def.args as z.ZodType).safeParse(args);
    } catch (e) {
      // A schema's own refine or transform threw: the arguments it was given are the cause.
      return new InvalidArguments(
        { op, problem: `the app's schema threw: ${e instanceof Error ? e.message : String(e)}` },
        { cause: e },
      );
    }
    if (!parsed.success) {
      const problems = parsed.error.issues.map(
        (i) => `${i.path.length > 0 ? i.path.map(String).join('.') : '(arguments)'}: ${i.message}`,
      );
      return new InvalidArguments(`invalid arguments for '${op}': ${problems.join('; ')}`);
    }
    return parsed.data === args ? args : (jsonProblem(op, parsed.data) ?? parsed.data);
  }
}

/**
 * What one invoke's arguments may be: nested one level less than a frame (the invoke frame wraps
 * them), and as large as MAX_FRAME_BYTES leaves once the rest of the frame is written — counted
 * for the largest rest there can be (an op name of 256 characters that each take 6 bytes escaped,
 * the largest op and session numbers), so the limit is the same for every call of an op name.
 */
const ARGS_LIMITS: JsonLimits = {
  maxNesting: MAX_NESTING - 1,
  maxBytes:
    MAX_FRAME_BYTES -
    encodeFrame({
      t: 'invoke',
      opId: String(Number.MAX_SAFE_INTEGER),
      op: '\u0000'.repeat(256),
      args: 0,
      level: 'strong',
      tentative: false,
      seq: Number.MAX_SAFE_INTEGER,
      acked: Number.MAX_SAFE_INTEGER,
    }).length +
    1, // the placeholder `0` of args
};

/** Arguments that are not JSON the replicas would accept unchanged, as the error to report. */
function jsonProblem(op: string, args: unknown): InvalidArguments | null {
  let r: ReturnType<typeof checkJson>;
  try {
    r = checkJson(args, 'args', ARGS_LIMITS);
  } catch (e) {
    // A getter or a proxy trap of the value threw while it was read.
    const why = e instanceof Error ? e.message : String(e);
    return new InvalidArguments(
      { op, field: 'args', problem: `reading the arguments threw: ${why}`, fix: 'pass plain data' },
      { cause: e },
    );
  }
  return r.ok
    ? null
    : new InvalidArguments({
        op,
        field: r.path,
        problem: r.problem,
        fix: 'send only JSON values (the wire carries JSON)',
      });
}

/** InvokeSchema's bounds: 1 to 256 characters, counted in code points as its Zod schema counts. */
function invalidOpName(op: unknown): string | null {
  if (typeof op !== 'string')
    return `the op name must be a string, got ${op === null ? 'null' : typeof op}`;
  const length = op.length > 512 ? op.length : [...op].length;
  if (length === 0) return 'the op name is empty; name an operation of the app';
  if (length > 256)
    return `the op name has ${length} characters; op names have at most 256 (InvokeSchema)`;
  return null;
}

/** The invoke options' problem, if any: levels offered by the binding, a valid timeout and signal. */
function invalidOptions(
  op: string,
  options: InvokeOptions<never>,
  offered: readonly ConsistencyLevel[],
): InvalidArguments | null {
  const refuse = (field: string, problem: string, fix: string) =>
    new InvalidArguments({ op: typeof op === 'string' ? op : undefined, field, problem, fix });
  // Runtime checks: callers in plain JavaScript (or with casts) reach here too.
  const { levels, timeoutMs, signal } = options as {
    levels?: unknown;
    timeoutMs?: unknown;
    signal?: unknown;
  };
  const choose = `pass levels from ${offered.map((l) => `'${l}'`).join(', ')}, weakest first (or leave levels out for all of them)`;
  if (levels !== undefined) {
    if (!Array.isArray(levels) || levels.length === 0)
      return refuse('levels', 'levels must be a non-empty array of consistency levels', choose);
    for (let i = 0; i < levels.length; i++) {
      const l: unknown = levels[i];
      if (!offered.includes(l as ConsistencyLevel))
        return refuse(
          `levels[${i}]`,
          `${typeof l === 'string' ? `'${l}'` : String(l)} is not a consistency level this client offers`,
          choose,
        );
    }
    if (levels.every((l) => l === 'cached'))
      return refuse(
        'levels',
        "'cached' alone is no answer: a cached result is only shown until a replica's comes",
        "add 'weak' or 'strong' (or both)",
      );
  }
  if (timeoutMs !== undefined && (typeof timeoutMs !== 'number' || !(timeoutMs >= 0)))
    return refuse(
      'timeoutMs',
      `timeoutMs must be a number ≥ 0, got ${String(timeoutMs)}`,
      'pass a number of milliseconds, or leave timeoutMs out',
    );
  const signalLike = signal as { aborted?: unknown; addEventListener?: unknown } | null;
  if (
    signal !== undefined &&
    (typeof signalLike?.aborted !== 'boolean' || typeof signalLike.addEventListener !== 'function')
  )
    return refuse(
      'signal',
      'signal must be an AbortSignal',
      'pass controller.signal of an AbortController',
    );
  return null;
}

/** The identity of a client without users. */
const SIGNED_OUT: Identity = Object.freeze({
  state: 'signed-out',
  user: null,
  error: null,
  session: 1,
});

/** Connects to a Creek cluster (any of `urls`; it fails over to the others). */
export function connect<A = App>(options: ConnectOptions<A>): CreekClient<A> {
  return new CreekClient<A>(new CreekBinding(options), options);
}
