import {
  checkArgs,
  CLOSE_OP,
  NOOP_OP,
  canonicalJson,
  toFrozenJson,
  type App,
  type JsonValue,
  type User,
} from '@creek/app';
import type { ReplicaCheckpoint } from './checkpoint.js';
import { closeArgs, ClosingOrigins } from './closing-origins.js';
import { Dependencies } from './dependencies.js';
import type { FinalDigests } from './final-digests.js';
import { ExecutionPipeline } from './execution.js';
import { Liveness } from './liveness.js';
import type { ReplicaMetrics } from './metrics.js';
import { opKey, type OpId } from './op-id.js';
import { Ordering } from './ordering.js';
import { Reads } from './reads.js';
import { checkpointOf, finalizedCount, recoverInto } from './recovery.js';
import { ReplicaContext } from './replica-context.js';
import { ORIGIN_UNDECIDED, type ReplicaOptions } from './replica-options.js';
import type { DurableRecord, ExecutionResult, Output, Req, SessionStamp } from './types.js';

export { ORIGIN_UNDECIDED, type ReplicaOptions };

export interface InvokeRequest {
  readonly op: string;
  readonly args: unknown;
  readonly strong: boolean;
  /** Echoed in every response to this invocation. */
  readonly tag: number;
  /** The client session's numbering of the op, for exactly-once across replicas. */
  readonly session?: SessionStamp;
  /**
   * Who invokes it, as the client's endpoint verified it (absent: anonymous). The endpoint also
   * checked that this user may call the op: the replica runs what it is handed.
   */
  readonly user?: User;
  /**
   * A live query's read (a read-only op, never ordered): at the end of the list like a weak read
   * (`tentative`), or at the committed state (`stable`: once every committed op is executed, read
   * before the first tentative entry). Its response carries what it read (Response.reads).
   */
  readonly watch?: 'tentative' | 'stable';
  /**
   * A live query's client session: its responses say which of the session's own ops the state
   * read holds (Response.own).
   */
  readonly reader?: string;
}

/**
 * A Creek replica (Algorithm 1) as a pure, deterministic state machine. Every input method returns
 * the outputs it caused: messages to RB-cast and CAB-cast, executions to run, responses, and records
 * to make durable. Nothing here reads a clock, draws a random number or does I/O.
 *
 * This class is the facade; each concern is a part of its own, sharing the state of
 * replica-context.ts (where the list `committed · tentative` and its validation frontier are
 * described): ordering.ts (the list, Algorithm 1's insertion and commit), dependencies.ts (what is
 * received, CAB's predicate), execution.ts (multiversion execution, validation, answers), reads.ts
 * (read-only ops and live queries' reads), liveness.ts (no-ops and adoption), recovery.ts
 * (checkpoints and recovery) and own-ops.ts (how far this replica's own ops have come). An input
 * changes the list through its part, then runs the execution pipeline (or notes that it is due),
 * then returns the outputs gathered.
 */
export class Replica {
  private readonly ctx: ReplicaContext;
  private readonly app: App;
  private readonly deps: Dependencies;
  private readonly ordering: Ordering;
  private readonly reads: Reads;
  private readonly liveness: Liveness;
  private readonly closing: ClosingOrigins;
  private readonly pipeline: ExecutionPipeline;
  readonly metrics: ReplicaMetrics;

  /**
   * The origin of this replica's op ids (core/op-id.ts `originOf`); ORIGIN_UNDECIDED while its
   * host still learns which incarnation it is (it then numbers no op: `adoptOrigin`).
   */
  get id(): number {
    return this.ctx.origin;
  }

  constructor(options: ReplicaOptions) {
    this.ctx = new ReplicaContext(options);
    this.metrics = this.ctx.metrics;
    this.app = options.app;
    this.deps = new Dependencies(this.ctx);
    this.ordering = new Ordering(this.ctx, this.deps);
    this.reads = new Reads(this.ctx, options.readIndex ?? true);
    this.liveness = new Liveness(this.ctx, this.ordering, this.deps, this.reads, {
      noopIntervalMs: options.noopIntervalMs ?? 100,
      adoptAfterMs: options.adoptAfterMs ?? 1000,
      unchained: options.unsafeUnchainedAdoption === true,
    });
    this.closing = new ClosingOrigins(
      this.ctx,
      this.ordering,
      this.deps,
      options.adoptAfterMs ?? 1000,
    );
    this.pipeline = new ExecutionPipeline(this.ctx, this.reads, {
      executionSlots: options.executionSlots ?? 1,
      deferExecution: options.deferExecution ?? false,
      mirrored: options.storeObserver !== undefined,
      invariants:
        options.checkInvariants === true && Object.keys(options.app.invariants).length > 0
          ? options.app.invariants
          : null,
    });
  }

  /**
   * Rebuilds a replica after a crash from the records it had made durable: the Reqs it received or
   * issued and its commit records. Volatile state (executions, versions, waiting clients) is
   * recomputed: committed ops are re-executed in their committed order, the rest re-ordered by
   * timestamp. The returned outputs re-cast this replica's own strong ops that are not committed yet
   * (in their order), since the CAB may never have received them, and re-gossip its own tentative
   * Reqs, since their first broadcast may never have left.
   *
   * With `checkpoint` (see `checkpoint()`), `records` are those written after it: the replica
   * starts from the checkpoint's finalized state and Reqs instead of the records it superseded.
   */
  static recover(
    options: ReplicaOptions,
    records: readonly DurableRecord[],
    nowMs: number,
    checkpoint?: ReplicaCheckpoint,
  ): { replica: Replica; outputs: Output[] } {
    const r = new Replica(options);
    r.ctx.advanceTime(nowMs);
    recoverInto(r.ctx, records, nowMs, checkpoint);
    r.pipeline.pump();
    return { replica: r, outputs: r.ctx.flush() };
  }

  // ---------------------------------------------------------------- checkpoints

  /**
   * Everything recovery needs about the finalized prefix, so that the records written before this
   * call can be dropped (see ReplicaCheckpoint). The driver must have made every earlier `persist`
   * output durable no later than the checkpoint itself: the checkpoint refers to Reqs and commits
   * those records hold. Pure: it changes nothing.
   */
  checkpoint(): ReplicaCheckpoint {
    return checkpointOf(this.ctx);
  }

  /** How many ops of the committed list are final (they can be summed up by a checkpoint). */
  finalizedCount(): number {
    return finalizedCount(this.ctx);
  }

  /**
   * True once the op is final here: delivered, committed and executed at its final position. Its
   * Req is no longer needed by this replica (gossip may drop it once every peer has it).
   */
  isFinal(id: OpId): boolean {
    return (this.ctx.known.has(id) && !this.ctx.live.has(opKey(id))) || this.closing.closedOff(id);
  }

  /**
   * The op is of a closed origin and above its cut (core/closing-origins.ts): definitely not
   * applied. A decided id for which this holds is passed over, not delivered.
   */
  closedOff(id: OpId): boolean {
    return this.closing.closedOff(id);
  }

  /** A client waits here for op `id`, which this replica lacks (ClosingOrigins.want). */
  want(id: OpId, nowMs: number): void {
    this.closing.want(id.replica, id.eventNo, nowMs);
  }

  /** The cut of `origin`'s close, if a close of it committed here (core/closing-origins.ts). */
  closedCut(origin: number): number | undefined {
    return this.ctx.closed.get(origin);
  }

  // ---------------------------------------------------------------- inputs

  /**
   * The replica's physical clock advanced. Issues a strong no-op when a weak op has waited on the
   * tentative list for the interval and nothing was committed meanwhile (§4.4). Only weak ops count:
   * strong ones, other replicas' no-ops included, commit through CAB by themselves (counting them
   * made replicas answer each other's no-ops with no-ops, forever). `mayIssue` false: the replica
   * must not number ops of its own yet (its host still learns whether its disk was lost and which
   * ids it used: ReplicaHost.learningFromPeers), so it issues no no-op either, nor a close.
   *
   * `isDead`: whether an origin will issue no more ops (its host knows: a later incarnation of its
   * replica, or the replica's removal in force). Ops of such an origin stranded here behind one
   * nobody gave it are closed (core/closing-origins.ts).
   */
  tick(
    nowMs: number,
    mayIssue = true,
    isDead: (origin: number) => boolean = () => false,
  ): Output[] {
    this.ctx.advanceTime(nowMs);
    if (mayIssue && this.liveness.noopDue(nowMs)) {
      this.liveness.issueNoop();
      this.pipeline.changed();
    }
    if (mayIssue && this.closing.closeIfDue(nowMs, isDead)) this.pipeline.changed();
    this.liveness.adoptIfDue(nowMs);
    return this.ctx.flush();
  }

  /** Algorithm 1 line 15: a client invokes an op at this replica. */
  invoke(nowMs: number, request: InvokeRequest): Output[] {
    this.ctx.advanceTime(nowMs);
    const def = this.app.lookup(request.op);
    if (def === undefined || request.op === NOOP_OP || request.op === CLOSE_OP) {
      this.reject(
        request,
        `unknown operation '${request.op}'; this app has: ${this.app
          .names()
          .filter((n) => n !== NOOP_OP && n !== CLOSE_OP)
          .join(', ')}`,
      );
      return this.ctx.flush();
    }
    const checked = checkArgs(request.op, def, request.args);
    if (!checked.ok) {
      this.reject(request, checked.error);
      return this.ctx.flush();
    }
    let args: JsonValue;
    try {
      args = toFrozenJson(checked.args, 'arguments');
    } catch (err) {
      this.reject(request, `invalid arguments for '${request.op}': ${(err as Error).message}`);
      return this.ctx.flush();
    }
    if (request.watch !== undefined) {
      if (def.readOnly !== true) {
        this.reject(request, `'${request.op}' writes: only read-only ops can be watched`);
        return this.ctx.flush();
      }
      this.reads.watch(
        request.tag,
        { op: request.op, args, user: request.user },
        request.watch,
        request.reader,
      );
      this.pipeline.changed();
      return this.ctx.flush();
    }
    // The SMR baseline of §6 (ReplicaOptions.orderOnArrival) orders every update as soon as it
    // arrives, weak ones too: left to the timestamp order, a weak op would wait for a later
    // strong op (or the no-op interval) to commit it, and the baseline would pay that wait rather
    // than one consensus round. Its one response is stable either way. Weak reads still read the
    // committed state here, as a replicated state machine's local reads do.
    const strong = request.strong || this.ctx.orderOnArrival;
    if (!request.strong && def.readOnly === true) {
      // §4.4: weak read-only ops are answered from local state, never ordered or gossiped.
      this.metrics.invoked.readOnly++;
      this.reads.weak(request.tag, { op: request.op, args, user: request.user });
      this.pipeline.changed();
      return this.ctx.flush();
    }
    if (strong && def.readOnly === true && this.reads.readIndex) {
      // Answered without a log write: tentatively at the end of the list as a weak read would be,
      // stably at the committed state once its read index is delivered here (cab/read-index.ts).
      this.metrics.invoked.strong++;
      this.reads.strong(request.tag, { op: request.op, args, user: request.user });
      this.pipeline.changed();
      return this.ctx.flush();
    }
    if (strong) this.metrics.invoked.strong++;
    else this.metrics.invoked.weak++;
    this.ordering.admit(
      this.ordering.newReq(request.op, args, strong, request.session, request.user),
      request.tag,
    );
    this.pipeline.changed();
    return this.ctx.flush();
  }

  /**
   * Every instance below the read index of the strong read `tag` is delivered here: it reads the
   * committed state once this replica's own earlier ops are committed too.
   */
  readIndexReached(tag: number): Output[] {
    if (this.reads.indexReached(tag)) this.pipeline.changed();
    return this.ctx.flush();
  }

  /**
   * A strong read waits for this replica's own ops to commit and no no-op is on its way: the next
   * `tick` casts one. A driver whose ticks are far apart ticks at once when this holds (the
   * runtime; the simulator's ticks are close enough).
   */
  get noopWanted(): boolean {
    return this.liveness.noopWanted;
  }

  /** Algorithm 1 line 26: a Req from another replica was RB-delivered. Duplicates are ignored. */
  deliverReq(req: Req): Output[] {
    if (this.ordering.receive(req)) this.pipeline.changed();
    return this.ctx.flush();
  }

  /**
   * CAB's predicate (Algorithm 1 line 10, `checkDep`): the strong op's Req and every op in its causal
   * context have been delivered here.
   */
  checkDep(id: OpId): boolean {
    return this.deps.checkDep(id);
  }

  /**
   * What this replica still lacks before `checkDep(id)` can hold: the Req itself, or the ops of its
   * causal context (at most `limit`). The driver asks gossip for them ("no loss", Creek §5).
   */
  missingDeps(id: OpId, limit = 256): OpId[] {
    return this.deps.missingDeps(id, limit);
  }

  /**
   * What `id` waits for before it can be delivered, or null when it lacks nothing: its own Req, or
   * of the first origin whose ops of its causal context it lacks, that origin's prefix up to the
   * last of them (see Dependencies.awaitedDep).
   */
  awaitedDep(id: OpId): { readonly id: OpId; readonly prefix: boolean } | null {
    return this.deps.awaitedDep(id);
  }

  /** Algorithm 1 line 32: CAB delivered a strong op's id (only ever when `checkDep(id)` holds). */
  deliverStrong(id: OpId): Output[] {
    const req = this.ctx.live.get(opKey(id))?.req;
    this.ordering.deliverStrong(id);
    // A close takes effect where it commits: the same position at every replica.
    const close = req?.op === CLOSE_OP ? closeArgs(req.args) : null;
    if (close !== null) this.closing.apply(close.origin, close.cut);
    this.pipeline.changed();
    return this.ctx.flush();
  }

  /** An execution requested by an `execute` output finished. */
  executed(result: ExecutionResult): Output[] {
    this.pipeline.executed(result);
    return this.ctx.flush();
  }

  /**
   * With `deferExecution`: runs what the inputs since the last call made necessary (validations,
   * executions, answers). Call it once per batch of inputs, e.g. at the end of each event-loop
   * turn; `executionDue` says whether there is anything to do.
   */
  runDeferred(): Output[] {
    this.pipeline.runDeferred();
    return this.ctx.flush();
  }

  get executionDue(): boolean {
    return this.pipeline.executionDue;
  }

  /**
   * The keys whose value at the end of the list or in the committed state may have changed since
   * the last call (over-approximated: every write, withdrawal and commit): a driver re-runs the
   * live queries whose read sets they touch.
   */
  takeChangedKeys(): Set<string> {
    return this.reads.takeChangedKeys();
  }

  /** Ops committed so far (`stats().committed`, without building the rest of the stats). */
  get committedOps(): number {
    return this.ctx.committedCount;
  }

  /** Speculation is held for a catch-up (holdSpeculation). */
  get speculationHeld(): boolean {
    return this.ctx.held;
  }

  /**
   * Holds speculation while the replica catches up on many ops it lacks (its host knows from its
   * peers' summaries): only committed entries execute, and local reads and the first tentative
   * answers wait. Speculating then is wasted: each batch of older ops that arrives lands before the
   * tentative tail and invalidates it, so the tail ran once per batch and the work per op grew
   * with the lag (the simulator's 'lag' faults measure it: SimStats.catchUp). Committed entries
   * never re-execute, so their stable answers go on. Released, the tail runs once, from where it
   * stands.
   */
  holdSpeculation(hold: boolean): Output[] {
    if (hold === this.ctx.held) return [];
    this.ctx.held = hold;
    if (!hold) this.pipeline.changed();
    return this.ctx.flush();
  }

  // ---------------------------------------------------------------- helpers

  private reject(request: InvokeRequest, error: string): void {
    this.metrics.invoked.rejected++;
    this.ctx.respond(request.tag, null, 'failed', { ok: false, error });
  }

  // ---------------------------------------------------------------- inspection

  /** Sizes and counters for status pages, benchmarks and checkers. */
  stats(): ReplicaStats {
    const c = this.ctx;
    return {
      committed: c.committedCount,
      finalized: c.committedCount - (c.committedEnd - c.head),
      tentative: c.order.length - c.committedEnd,
      // Entries still to validate or execute (without speculation, only committed ones ever are).
      unvalidated: c.executable() - c.frontier,
      running: c.jobs.size,
      versions: c.store.size(),
      peakVersions: c.store.peakSize(),
      keys: c.store.keyCount(),
      hlc: c.clock.current(),
      knownDots: c.known.dotCount(),
    };
  }

  /** The state as `key → value` once every op is final (for digests); includes tentative writes otherwise. */
  state(): Map<string, JsonValue> {
    const out = new Map<string, JsonValue>();
    for (const [key, v] of this.ctx.store.latest())
      if (v.value !== undefined) out.set(key, v.value);
    return new Map([...out].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
  }

  /**
   * A fixed-size digest of `state()`, equal across replicas that hold the same state, and cheap to
   * ask for often (it is kept up to date key by key: VersionStore.digest).
   */
  stateDigest(): string {
    return this.ctx.store.digest();
  }

  /**
   * The digest of the finalized state at each of the last committed positions (FinalDigests):
   * what replicas compare to catch a nondeterministic op (host/divergence.ts). Read it, never
   * change it.
   */
  get finalDigests(): FinalDigests {
    return this.ctx.finals;
  }

  /** `state()` as canonical JSON: the whole state, for the simulator's checkers and for tests. */
  stateJson(): string {
    return canonicalJson(Object.fromEntries(this.state()));
  }

  /**
   * The newest op this replica issued that a session cannot resubmit itself: below the session's
   * own ops still tentative at the top of this replica's ops (see OwnOps.lastOpNotPendingOf).
   */
  lastOpNotPendingOf(session: string): number {
    return this.ctx.own.lastOpNotPendingOf(session);
  }

  /**
   * Sets the origin of a replica that had none (ORIGIN_UNDECIDED): from now on it numbers ops
   * `(origin, 1)`, `(origin, 2)`, … Ops of other origins it already holds are unaffected.
   */
  adoptOrigin(origin: number): void {
    if (this.ctx.origin !== ORIGIN_UNDECIDED || this.ctx.eventNo !== 0)
      throw new Error(`adoptOrigin: the replica already has origin ${this.ctx.origin}`);
    if (!Number.isInteger(origin) || origin < 0)
      throw new Error(`adoptOrigin: an origin is a non-negative integer, not ${origin}`);
    this.ctx.origin = origin;
  }

  /** Whether `jobId` is an execution this replica handed out and has not had the result of. */
  hasJob(jobId: number): boolean {
    return this.ctx.jobs.has(jobId);
  }

  /** The next execution job id (a successor built in the same process starts there). */
  get jobIdsUsed(): number {
    return this.ctx.nextJobId;
  }

  /** How many ops this replica has issued: the event number of its last one (0: none it knows of). */
  issuedCount(): number {
    return this.ctx.eventNo;
  }

  /** True when this replica has the op with this id (issued it, or received its Req). */
  hasReceived(id: OpId): boolean {
    return this.deps.hasReceived(id);
  }

  /**
   * Whether reads here see every op of `seen` (per origin, a count) that this replica holds. Always
   * while it executes its whole list; without speculation, or while its list is held for a
   * catch-up, reads see only the committed prefix, and an op `seen` covers may be held here and
   * still tentative: a session that saw it commit elsewhere must not read here before it commits
   * here too.
   */
  readsSee(seen: readonly number[]): boolean {
    const c = this.ctx;
    for (let i = c.executable(); i < c.order.length; i++) {
      const id = c.order[i]!.req.id;
      if (id.eventNo <= (seen[id.replica] ?? 0)) return false;
    }
    return true;
  }

  /**
   * For each of `origins`, how many of its ops this replica has received without a gap (its ops
   * 1..n, strong ones not yet delivered included). What a client saw here is covered by this
   * vector, except ops past a gap, which are rare and brief; another replica that has caught up with
   * it can serve the client's session (read-your-writes, monotonic reads).
   */
  receivedPrefix(origins: Iterable<number>): Map<number, number> {
    const out = new Map<number, number>();
    for (const origin of origins) out.set(origin, this.deps.receivedUpTo(origin));
    return out;
  }

  /**
   * How many of `origin`'s ops this replica has received without a gap (cached per origin: see
   * Dependencies.receivedUpTo).
   */
  receivedUpTo(origin: number): number {
    return this.deps.receivedUpTo(origin);
  }

  /** Ids of the tentative list, in order. */
  tentativeIds(): OpId[] {
    return this.ctx.order.slice(this.ctx.committedEnd).map((e) => e.req.id);
  }
}

export interface ReplicaStats {
  committed: number;
  finalized: number;
  tentative: number;
  unvalidated: number;
  /** Executions asked for and not yet finished (ordered ops and weak reads). */
  running: number;
  versions: number;
  peakVersions: number;
  keys: number;
  hlc: number;
  knownDots: number;
}
