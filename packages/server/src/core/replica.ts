import {
  checkArgs,
  NOOP_OP,
  canonicalJson,
  jsonEqual,
  toFrozenJson,
  type App,
  type JsonValue,
} from '@creek/app';
import type { ReplicaCheckpoint } from './checkpoint.js';
import { DottedVersionVector } from './dvv.js';
import { Entry, rankOf, type Execution, type Version } from './entry.js';
import { HybridLogicalClock } from './hlc.js';
import { ReplicaMetrics } from './metrics.js';
import { opKey, formatOpId, type OpId } from './op-id.js';
import { RecordingSnapshot } from './snapshot.js';
import { compareReq, outcomesEqual } from './types.js';
import type {
  DurableRecord,
  ExecutionResult,
  OrderTrace,
  Outcome,
  Output,
  Req,
  ReadSet,
  ResponseLevel,
  SessionStamp,
} from './types.js';
import { VersionStore, type StoreObserver } from './version-store.js';

export interface ReplicaOptions {
  /** This replica's number; part of every op id it issues. */
  readonly id: number;
  readonly app: App;
  /**
   * When tentative ops are pending and nothing was committed for this long (ms of the replica's
   * physical clock), the replica issues a strong no-op so that they stabilize (Creek §4.4).
   */
  readonly noopIntervalMs?: number;
  /**
   * How long another origin's strong op may wait on the tentative list, its causal context
   * complete here, before this replica CAB-casts it on the origin's behalf (`cabAdopt`): an origin
   * that died after gossiping the op but before CAB got its cast would otherwise leave the op, and
   * every later op of that origin, tentative forever. Default 1000; far above a decision's latency,
   * so the origin's own cast nearly always comes first (a duplicate decision is harmless).
   */
  readonly adoptAfterMs?: number;
  /** Attach to each tentative response the order it was computed in (for the simulator's checkers). */
  readonly traceOrder?: boolean;
  /**
   * How many executions of ordered ops may run at once (§4.4, "concurrent execution"); default 1,
   * one at a time. Above 1, entries beyond the validation frontier start on the snapshot of their
   * position while earlier ones still run, and are validated in order like every execution.
   */
  readonly executionSlots?: number;
  /**
   * False: no speculation. Ops execute only once committed, in the committed order, so every
   * response is stable (weak ones too) and no execution is ever rolled back: state machine
   * replication on top of the same ordering, the baseline of Creek §6. Default true.
   */
  readonly speculative?: boolean;
  /**
   * Strong read-only ops are answered stably by read index, without a log write
   * (cab/read-index.ts): the `readIndex` output and `readIndexReached`. False: they are ordered
   * like every strong op. Default true.
   */
  readonly readIndex?: boolean;
  /**
   * True: an input (an invocation, a delivered Req or commit) only notes that the list changed;
   * executions run when the driver calls `runDeferred`, once for all inputs since. A runtime that
   * calls it once per turn of its event loop validates and re-executes the tentative list once per
   * batch of messages rather than once per message: under load, when messages queue up, the work
   * per op falls instead of growing with the backlog (`bench:tpcc` saw a replica spend 80
   * executions per op re-executing its tail after every arrival). Default false.
   */
  readonly deferExecution?: boolean;
  /** Told of every change to the version store (an executor that mirrors it). */
  readonly storeObserver?: StoreObserver;
  /**
   * The first execution job id (default 1). A replica rebuilt in a running process (a state
   * transfer) numbers its jobs past its predecessor's, whose results may still come back and
   * are then told apart (`hasJob`).
   */
  readonly firstJobId?: number;
}

/**
 * `ReplicaOptions.id` of a replica that does not know its origin yet (a new or wiped one, still
 * learning from its peers): it takes no op of its own until `adoptOrigin`.
 */
export const ORIGIN_UNDECIDED = -1;

/** How far beyond the frontier concurrent executions may start (bounds the scan per pump). */
const AHEAD_WINDOW = 256;

export interface InvokeRequest {
  readonly op: string;
  readonly args: unknown;
  readonly strong: boolean;
  /** Echoed in every response to this invocation. */
  readonly tag: number;
  /** The client session's numbering of the op, for exactly-once across replicas. */
  readonly session?: SessionStamp;
  /**
   * A live query's read (a read-only op, never ordered): at the end of the list like a weak read
   * (`tentative`), or at the committed state (`stable`: once every committed op is executed, read
   * before the first tentative entry). Its response carries what it read (Response.reads).
   */
  readonly watch?: 'tentative' | 'stable';
}

interface Job {
  readonly entry: Entry | null;
  readonly snapshot: RecordingSnapshot;
  /** Started beyond the frontier (see Execution.ahead). */
  readonly ahead: boolean;
  /** For weak read-only ops, which are not on the list. */
  readonly readOnly?: {
    readonly tag: number;
    readonly trace: OrderTrace | undefined;
    /** A live query's read, answered at this level with its read set. */
    readonly watch?: 'tentative' | 'stable';
    /** Its stable read's committed position (Response.position). */
    readonly position?: number;
    /** A strong read-only op's stable read (by read index): answered as the op's stable view. */
    readonly strongRead?: boolean;
  };
}

/**
 * A Creek replica (Algorithm 1) as a pure, deterministic state machine. Every input method returns
 * the outputs it caused: messages to RB-cast and CAB-cast, executions to run, responses, and records
 * to make durable. Nothing here reads a clock, draws a random number or does I/O.
 *
 * The list `committed · tentative` is kept in `order` from `head` on: entries in
 * `[head, committedEnd)` are committed but not yet final; `[committedEnd, order.length)` is the
 * tentative list sorted by (timestamp, id). Instead of Algorithm 1's `executed` list and eager
 * rollback of everything after the first divergence, executions are validated lazily (§4.4,
 * "rollbacks only if necessary"): every entry in `[head, frontier)` has an execution that is valid at
 * its current position; entries at and after `frontier` may have stale executions, which are checked
 * in order against the versions now visible to them, and re-executed only if something they read
 * changed. A change of order (an RB-delivered op landing mid-list, a reordering commit) only moves
 * `frontier` back to the first position that changed.
 */
export class Replica {
  /**
   * The origin of this replica's op ids (core/op-id.ts `originOf`); ORIGIN_UNDECIDED while its
   * host still learns which incarnation it is (it then numbers no op: `adoptOrigin`).
   */
  private origin: number;
  get id(): number {
    return this.origin;
  }
  readonly metrics = new ReplicaMetrics();
  private readonly app: App;
  private readonly noopIntervalMs: number;
  private readonly adoptAfterMs: number;
  private lastAdoptScanAt = Number.NEGATIVE_INFINITY;
  private readonly traceOrder: boolean;

  private readonly clock = new HybridLogicalClock();
  /** Algorithm 1 line 7: ids of the RB-delivered weak ops and CAB-delivered strong ops. */
  private readonly known = new DottedVersionVector();
  private readonly store: VersionStore;
  private eventNo = 0;
  private lastStrongEventNo = 0;
  /** Event number of this replica's last strong op that is final (for checkpoints). */
  private finalizedOwnStrong = 0;

  private order: Entry[] = [];
  private head = 0;
  private committedEnd = 0;
  private frontier = 0;
  /** Entries on the list (not yet final), by op key. */
  private readonly live = new Map<string, Entry>();
  private committedCount = 0;

  private readonly jobs = new Map<number, Job>();
  /** Jobs of list entries (not weak reads) now running, and how many may. */
  private runningEntries = 0;
  private readonly executionSlots: number;
  private readonly speculative: boolean;
  /** Speculation held for a catch-up (holdSpeculation). */
  private held = false;
  private readonly deferExecution: boolean;
  /** An input changed the list since executions last ran (with `deferExecution`). */
  private pumpDue = false;
  /** A store observer is set: jobs carry their rank (ExecutionJob.rank). */
  private readonly mirrored: boolean;
  private nextJobId: number;
  private readonly pendingReads: { tag: number; op: string; args: JsonValue }[] = [];
  /**
   * Strong read-only ops answered by read index (cab/read-index.ts), by tag: each waits until the
   * driver reports its index delivered (`indexed`) and every op this replica issued before it is
   * committed (its own writes, weak ones included, are in the state it reads), then reads the
   * committed state.
   */
  private readonly strongReads = new Map<
    number,
    { readonly op: string; readonly args: JsonValue; readonly ownUpTo: number; indexed: boolean }
  >();
  /**
   * The highest event number of this replica's own ops committed or final (they commit in order),
   * also after recovery: a strong read waits for the own ops before it to be committed, and
   * `lastOpNotPendingOf` counts them.
   */
  private committedOwnUpTo = 0;
  /**
   * For `lastOpNotPendingOf`, kept as ops are issued and committed instead of found per answer by
   * walking down the session's tentative ops. That walk is as long as the weak ops a session has
   * waiting for a no-op to commit them, so it grew with the load: timed in a replica serving one
   * client, 14 µs per answer with one op outstanding (about 5 % of the origin's CPU per weak op)
   * and 110 µs with 64. Kept, besides `committedOwnUpTo`: the newest own op that is not a no-op,
   * with its session (null: none); and the newest own op before that one that is not a no-op and
   * not of its session.
   */
  private newestOwn: { readonly session: string | null; readonly eventNo: number } = {
    session: null,
    eventNo: 0,
  };
  private newestOwnBefore = 0;
  /** ReplicaOptions.readIndex. */
  private readonly readIndex: boolean;
  /** Live queries' reads waiting to run (InvokeRequest.watch). */
  private readonly pendingWatchReads: {
    tag: number;
    op: string;
    args: JsonValue;
    level: 'tentative' | 'stable';
  }[] = [];
  /**
   * Keys whose value at the end of the list or in the committed state may have changed since the
   * driver last took them (`takeChangedKeys`): written, withdrawn, or committed. Kept only once a
   * driver asked (a replica nobody watches keeps nothing).
   */
  private changedKeys: Set<string> | null = null;

  private nowMs = 0;
  private lastCommitAt = 0;
  private noopPending: string | null = null;
  /** Per origin, a lower bound of `receivedUpTo` (its cache). */
  private readonly receivedThrough = new Map<number, number>();
  private out: Output[] = [];

  constructor(options: ReplicaOptions) {
    if (!Number.isInteger(options.id) || (options.id < 0 && options.id !== ORIGIN_UNDECIDED))
      throw new Error(`replica id must be a non-negative integer`);
    this.origin = options.id;
    this.nextJobId = options.firstJobId ?? 1;
    this.app = options.app;
    this.noopIntervalMs = options.noopIntervalMs ?? 100;
    this.adoptAfterMs = options.adoptAfterMs ?? 1000;
    if (!(this.adoptAfterMs > 0)) throw new Error('adoptAfterMs must be positive');
    this.traceOrder = options.traceOrder ?? false;
    this.executionSlots = options.executionSlots ?? 1;
    this.speculative = options.speculative ?? true;
    this.readIndex = options.readIndex ?? true;
    this.deferExecution = options.deferExecution ?? false;
    this.store = new VersionStore(options.storeObserver ?? null);
    this.mirrored = options.storeObserver !== undefined;
    if (!Number.isInteger(this.executionSlots) || this.executionSlots < 1)
      throw new Error('executionSlots must be a positive integer');
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
    r.advanceTime(nowMs);
    const reqs = new Map<string, Req>();
    const commits: OpId[][] = [];
    const ownStrong: number[] = [];
    if (checkpoint !== undefined) {
      r.restore(checkpoint);
      for (const req of checkpoint.reqs) reqs.set(opKey(req.id), req);
      if (checkpoint.committedLive > 0)
        commits.push(checkpoint.reqs.slice(0, checkpoint.committedLive).map((q) => q.id));
      // Every own strong op before the checkpoint's Reqs is final: the last one is their prevStrong.
      if (checkpoint.finalizedOwnStrong > 0) ownStrong.push(checkpoint.finalizedOwnStrong);
    }
    for (const rec of records) {
      if (rec.kind === 'req') reqs.set(opKey(rec.req.id), rec.req);
      else commits.push([...rec.ids]);
    }
    for (const req of reqs.values()) {
      r.clock.observe(req.ts);
      if (req.id.replica === r.id) {
        r.eventNo = Math.max(r.eventNo, req.id.eventNo);
        if (req.strong) ownStrong.push(req.id.eventNo);
      }
      if (!req.strong) r.known.add(req.id);
    }
    ownStrong.sort((a, b) => a - b);
    r.lastStrongEventNo = Math.max(r.lastStrongEventNo, ownStrong[ownStrong.length - 1] ?? 0);
    const committed = new Set<string>();
    for (const group of commits) {
      for (const id of group) {
        const key = opKey(id);
        const req = reqs.get(key);
        if (req === undefined)
          throw new Error(
            `recovery: commit record names ${formatOpId(id)}, whose Req is not on disk`,
          );
        const e = new Entry(req, null, nowMs);
        e.commitSeq = r.committedCount++;
        r.order.push(e);
        r.live.set(key, e);
        committed.add(key);
        if (req.strong) r.known.add(id);
      }
    }
    r.committedEnd = r.order.length;
    const tentative = [...reqs.values()]
      .filter((q) => !committed.has(opKey(q.id)))
      .sort(compareReq);
    for (const req of tentative) {
      const e = new Entry(req, null, nowMs);
      r.order.push(e);
      r.live.set(opKey(req.id), e);
      if (req.id.replica === r.id) {
        r.out.push({ type: 'rbCast', req });
        if (req.strong) {
          const i = ownStrong.indexOf(req.id.eventNo);
          r.out.push({ type: 'cabCast', id: req.id, prevStrong: i > 0 ? ownStrong[i - 1]! : 0 });
          if (req.op === NOOP_OP) r.noopPending = opKey(req.id);
        }
      }
    }
    // lastOpNotPendingOf's bookkeeping: the own ops brought back, in the order they were issued
    // (the ones not brought back are final); and the newest own op committed or final, which a
    // strong read at the restarted replica would otherwise have taken for not committed, waiting
    // for a no-op of its own to commit (the first read after every restart).
    const own = [...reqs.values()].filter((q) => q.id.replica === r.id);
    for (const req of own.sort((a, b) => a.id.eventNo - b.id.eventNo)) r.issued(req);
    let top = r.eventNo;
    for (; top > 0; top--) {
      const e = r.live.get(opKey({ replica: r.id, eventNo: top }));
      if (e === undefined || e.committed) break;
    }
    r.committedOwnUpTo = top;
    r.lastCommitAt = nowMs;
    r.pump();
    return { replica: r, outputs: r.flush() };
  }

  // ---------------------------------------------------------------- checkpoints

  /**
   * Everything recovery needs about the finalized prefix, so that the records written before this
   * call can be dropped (see ReplicaCheckpoint). The driver must have made every earlier `persist`
   * output durable no later than the checkpoint itself: the checkpoint refers to Reqs and commits
   * those records hold. Pure: it changes nothing.
   */
  checkpoint(): ReplicaCheckpoint {
    const finalized = this.finalizedCount();
    // A reader placed right after the finalized prefix sees exactly the finalized versions.
    const reader = new Entry(END_REQ, null, this.nowMs);
    reader.commitSeq = finalized;
    const reqs: Req[] = [];
    for (let i = this.head; i < this.order.length; i++) reqs.push(this.order[i]!.req);
    return {
      finalized,
      state: this.store.stateBefore(reader),
      reqs,
      committedLive: this.committedEnd - this.head,
      known: this.known.clone(),
      hlc: this.clock.current(),
      eventNo: this.eventNo,
      lastStrongEventNo: this.lastStrongEventNo,
      finalizedOwnStrong: this.finalizedOwnStrong,
    };
  }

  /** How many ops of the committed list are final (they can be summed up by a checkpoint). */
  finalizedCount(): number {
    return this.committedCount - (this.committedEnd - this.head);
  }

  /**
   * True once the op is final here: delivered, committed and executed at its final position. Its
   * Req is no longer needed by this replica (gossip may drop it once every peer has it).
   */
  isFinal(id: OpId): boolean {
    return this.known.has(id) && !this.live.has(opKey(id));
  }

  /** Starts a fresh replica from a checkpoint's finalized prefix (its live Reqs are `recover`'s). */
  private restore(c: ReplicaCheckpoint): void {
    this.clock.observe(c.hlc);
    this.known.addAll(c.known);
    this.eventNo = c.eventNo;
    this.lastStrongEventNo = c.lastStrongEventNo;
    this.finalizedOwnStrong = c.finalizedOwnStrong;
    this.committedCount = c.finalized;
    // The finalized state as versions of one entry placed before every other.
    const base = new Entry(END_REQ, null, this.nowMs);
    base.commitSeq = -1;
    this.store.install(c.state.map(([key, value]) => ({ writer: base, key, value })));
  }

  // ---------------------------------------------------------------- inputs

  /**
   * The replica's physical clock advanced. Issues a strong no-op when a weak op has waited on the
   * tentative list for the interval and nothing was committed meanwhile (§4.4). Only weak ops count:
   * strong ones, other replicas' no-ops included, commit through CAB by themselves (counting them
   * made replicas answer each other's no-ops with no-ops, forever). `mayIssue` false: the replica
   * must not number ops of its own yet (its host still learns whether its disk was lost and which
   * ids it used: ReplicaHost.learningFromPeers), so it issues no no-op either.
   */
  tick(nowMs: number, mayIssue = true): Output[] {
    this.advanceTime(nowMs);
    if (
      mayIssue &&
      this.noopPending === null &&
      // A strong read waits for this replica's own ops to commit: a no-op commits them now.
      (this.readWaitsForOwnOps() ||
        (nowMs - this.lastCommitAt >= this.noopIntervalMs &&
          this.oldestTentativeWeakArrival() <= nowMs - this.noopIntervalMs))
    ) {
      this.metrics.noopsIssued++;
      const req = this.newReq(NOOP_OP, null, true);
      this.noopPending = opKey(req.id);
      this.admit(req, null);
    }
    if (nowMs - this.lastAdoptScanAt >= this.adoptAfterMs / 4) {
      this.lastAdoptScanAt = nowMs;
      this.adoptOrphans(nowMs);
    }
    return this.flush();
  }

  /**
   * Casts, on their origins' behalf, other origins' strong ops that have waited `adoptAfterMs` with
   * their causal context complete here (`cabAdopt`). Creek's commit (Algorithm 1) only ever moves
   * an origin's ops into the committed order behind that origin's strong ops, so one strong op
   * whose cast died with its origin would hold back every later op of the origin, and the no-op
   * timer would fire for them forever. Only the context rule (`checkDep`) makes the cast safe to
   * repeat: CAB drops a second decision of an id, and delivers an id only after its predecessor.
   */
  private adoptOrphans(nowMs: number): void {
    for (let i = this.committedEnd; i < this.order.length; i++) {
      const e = this.order[i]!;
      if (!e.req.strong || e.adopted || e.req.id.replica === this.id) continue;
      if (nowMs - e.arrivedAt < this.adoptAfterMs || !this.checkDep(e.req.id)) continue;
      e.adopted = true;
      this.metrics.adopted++;
      this.out.push({ type: 'cabAdopt', id: e.req.id });
    }
  }

  /**
   * When the oldest tentative weak op that a no-op would commit arrived. A no-op's causal context
   * stops at each origin's first gap (`newReq`), so a weak op above a gap in what this replica has
   * of its origin waits for the gap to fill, not for a no-op: counting it made a replica issue
   * no-ops forever for the ops of an origin that died before the op below them left it.
   */
  private oldestTentativeWeakArrival(): number {
    let oldest = Number.POSITIVE_INFINITY;
    for (let i = this.committedEnd; i < this.order.length; i++) {
      const e = this.order[i]!;
      const { replica, eventNo } = e.req.id;
      if (!e.req.strong && e.arrivedAt < oldest && eventNo <= this.known.base(replica))
        oldest = e.arrivedAt;
    }
    return oldest;
  }

  /** Algorithm 1 line 15: a client invokes an op at this replica. */
  invoke(nowMs: number, request: InvokeRequest): Output[] {
    this.advanceTime(nowMs);
    const def = this.app.lookup(request.op);
    if (def === undefined || request.op === NOOP_OP) {
      this.reject(
        request,
        `unknown operation '${request.op}'; this app has: ${this.app
          .names()
          .filter((n) => n !== NOOP_OP)
          .join(', ')}`,
      );
      return this.flush();
    }
    const checked = checkArgs(request.op, def, request.args);
    if (!checked.ok) {
      this.reject(request, checked.error);
      return this.flush();
    }
    let args: JsonValue;
    try {
      args = toFrozenJson(checked.args, 'arguments');
    } catch (err) {
      this.reject(request, `invalid arguments for '${request.op}': ${(err as Error).message}`);
      return this.flush();
    }
    if (request.watch !== undefined) {
      if (def.readOnly !== true) {
        this.reject(request, `'${request.op}' writes: only read-only ops can be watched`);
        return this.flush();
      }
      this.pendingWatchReads.push({ tag: request.tag, op: request.op, args, level: request.watch });
      this.changed();
      return this.flush();
    }
    if (!request.strong && def.readOnly === true) {
      // §4.4: weak read-only ops are answered from local state, never ordered or gossiped.
      this.metrics.invoked.readOnly++;
      this.pendingReads.push({ tag: request.tag, op: request.op, args });
      this.changed();
      return this.flush();
    }
    if (request.strong && def.readOnly === true && this.readIndex) {
      // Answered without a log write: tentatively at the end of the list as a weak read would be,
      // stably at the committed state once its read index is delivered here (cab/read-index.ts).
      this.metrics.invoked.strong++;
      if (this.speculative) this.pendingReads.push({ tag: request.tag, op: request.op, args });
      this.strongReads.set(request.tag, {
        op: request.op,
        args,
        ownUpTo: this.eventNo,
        indexed: false,
      });
      this.out.push({ type: 'readIndex', tag: request.tag });
      this.changed();
      return this.flush();
    }
    if (request.strong) this.metrics.invoked.strong++;
    else this.metrics.invoked.weak++;
    this.admit(this.newReq(request.op, args, request.strong, request.session), request.tag);
    return this.flush();
  }

  /**
   * Every instance below the read index of the strong read `tag` is delivered here: it reads the
   * committed state once this replica's own earlier ops are committed too.
   */
  readIndexReached(tag: number): Output[] {
    const read = this.strongReads.get(tag);
    if (read !== undefined) {
      read.indexed = true;
      this.changed();
    }
    return this.flush();
  }

  /**
   * A strong read waits for this replica's own ops to commit and no no-op is on its way: the next
   * `tick` casts one. A driver whose ticks are far apart ticks at once when this holds (the
   * runtime; the simulator's ticks are close enough).
   */
  get noopWanted(): boolean {
    return this.noopPending === null && this.readWaitsForOwnOps();
  }

  /** A strong read waits for an op of this replica's own to commit. */
  private readWaitsForOwnOps(): boolean {
    for (const r of this.strongReads.values()) if (r.ownUpTo > this.committedOwnUpTo) return true;
    return false;
  }

  /** Algorithm 1 line 26: a Req from another replica was RB-delivered. Duplicates are ignored. */
  deliverReq(req: Req): Output[] {
    if (req.id.replica === this.id || this.known.has(req.id) || this.live.has(opKey(req.id)))
      return this.flush();
    this.clock.observe(req.ts);
    if (!req.strong) this.known.add(req.id);
    this.out.push({ type: 'persist', record: { kind: 'req', req } });
    this.insertTentative(new Entry(req, null, this.nowMs));
    this.changed();
    return this.flush();
  }

  /**
   * CAB's predicate (Algorithm 1 line 10, `checkDep`): the strong op's Req and every op in its causal
   * context have been delivered here.
   */
  checkDep(id: OpId): boolean {
    const e = this.live.get(opKey(id));
    if (e === undefined || e.committed || e.req.causalCtx === null) return false;
    return this.known.includes(e.req.causalCtx);
  }

  /**
   * What this replica still lacks before `checkDep(id)` can hold: the Req itself, or the ops of its
   * causal context (at most `limit`). The driver asks gossip for them ("no loss", Creek §5).
   */
  missingDeps(id: OpId, limit = 256): OpId[] {
    const e = this.live.get(opKey(id));
    if (e === undefined) return this.known.has(id) ? [] : [id];
    const ctx = e.req.causalCtx;
    if (ctx === null) return [];
    const out: OpId[] = [];
    ctx.forEachBase((replica, base) => {
      for (let n = this.receivedUpTo(replica) + 1; n <= base && out.length < limit; n++) {
        const x = { replica, eventNo: n };
        if (!this.hasReceived(x)) out.push(x);
      }
    });
    return out;
  }

  /**
   * What `id` waits for before it can be delivered, or null when it lacks nothing: its own Req, or
   * of the first origin whose ops of its causal context it lacks, that origin's prefix up to the
   * last of them (`prefix`: CAB looks at it again once the origin's ops up to there are all held).
   * So a cast waiting behind a catch-up is looked at about once per origin, however many ops it
   * lacks. Filed under the lowest op it lacked instead, every cast waiting behind one catch-up was
   * looked at again with each batch that arrived: batches × casts, growing with the square of the
   * lag (the simulator's 'lag' faults).
   */
  awaitedDep(id: OpId): { readonly id: OpId; readonly prefix: boolean } | null {
    const e = this.live.get(opKey(id));
    if (e === undefined) return this.known.has(id) ? null : { id, prefix: false };
    const ctx = e.req.causalCtx;
    if (ctx === null) return null;
    let awaited: OpId | null = null;
    ctx.forEachBase((replica, base) => {
      if (awaited === null && this.receivedUpTo(replica) < base)
        awaited = { replica, eventNo: base };
    });
    return awaited === null ? null : { id: awaited, prefix: true };
  }

  /** Algorithm 1 line 32: CAB delivered a strong op's id (only ever when `checkDep(id)` holds). */
  deliverStrong(id: OpId): Output[] {
    const e = this.live.get(opKey(id));
    if (e === undefined || !this.checkDep(id)) {
      throw new Error(
        `CAB-deliver of ${formatOpId(id)} while checkDep is false: the CAB driver broke its contract`,
      );
    }
    this.known.add(id);
    this.commit(e);
    this.lastCommitAt = this.nowMs;
    if (this.noopPending === opKey(id)) this.noopPending = null;
    this.changed();
    return this.flush();
  }

  /** An execution requested by an `execute` output finished. */
  executed(result: ExecutionResult): Output[] {
    const job = this.jobs.get(result.jobId);
    if (job === undefined) throw new Error(`execution result for unknown job ${result.jobId}`);
    this.jobs.delete(result.jobId);
    if (job.entry === null) {
      const ro = job.readOnly!;
      if (ro.strongRead === true)
        this.out.push({
          type: 'respond',
          tag: ro.tag,
          id: null,
          level: 'stable',
          outcome: result.outcome,
          ...(ro.position === undefined ? {} : { position: ro.position }),
        });
      else if (ro.watch === undefined)
        this.respond(ro.tag, null, 'tentative', result.outcome, ro.trace);
      else
        this.out.push({
          type: 'respond',
          tag: ro.tag,
          id: null,
          level: ro.watch,
          outcome: result.outcome,
          reads: readSetOf(job.snapshot),
          ...(ro.position === undefined ? {} : { position: ro.position }),
        });
    } else {
      const e = job.entry;
      e.running = 0;
      this.runningEntries--;
      e.executions++;
      this.metrics.executions++;
      const writes: Version[] = result.writes.map(([key, value]) => ({ writer: e, key, value }));
      this.store.install(writes);
      if (this.changedKeys !== null) for (const w of writes) this.changedKeys.add(w.key);
      e.exec = { reads: job.snapshot.reads, writes, outcome: result.outcome, ahead: job.ahead };
    }
    this.pump();
    return this.flush();
  }

  // ---------------------------------------------------------------- ordering (Algorithm 1)

  private newReq(op: string, args: JsonValue, strong: boolean, session?: SessionStamp): Req {
    if (this.origin === ORIGIN_UNDECIDED)
      throw new Error('the replica has no origin yet: it numbers no op before adoptOrigin');
    this.eventNo++;
    const id: OpId = { replica: this.id, eventNo: this.eventNo };
    const ts = this.clock.next(this.nowMs);
    // Line 19: the causal context of a strong op. For other origins we take the contiguous prefix of
    // their ops that this replica knows (a version vector, no dots) rather than every known id: the
    // two differ only behind an origin's not-yet-delivered strong op, and stopping there keeps every
    // origin's invocation order in the committed order (no weak op is stabilized ahead of a strong op
    // its origin invoked earlier). For our own origin we include every earlier op, pending strong ones
    // too: CAB delivers each origin's strong ops in invocation order (`prevStrong`), so they are
    // delivered before this one and checkDep cannot deadlock on them. No known op has a later
    // timestamp than `ts` (the HLC is advanced by every delivery), so line 19's `\ {x | r < x}`
    // removes nothing.
    let causalCtx: DottedVersionVector | null = null;
    if (strong) {
      causalCtx = this.known.prefixes();
      causalCtx.addPrefix(this.id, id.eventNo - 1);
    }
    return session === undefined
      ? { ts, id, op, args, strong, causalCtx }
      : { ts, id, op, args, strong, causalCtx, session };
  }

  /** Lines 16-25 after the Req is built. */
  private admit(req: Req, tag: number | null): void {
    // The Req is durable before anything about it leaves the replica: a crash must not lose an op
    // that others know of, or its id would be reused.
    this.out.push({ type: 'persist', record: { kind: 'req', req } });
    this.issued(req);
    // RB-cast before CAB-cast: the Req travels ahead of its id, so the leader holds it when the
    // forward arrives (Paxos proposes and accepts only ids whose Reqs it holds).
    this.out.push({ type: 'rbCast', req });
    if (req.strong) {
      this.out.push({ type: 'cabCast', id: req.id, prevStrong: this.lastStrongEventNo });
      this.lastStrongEventNo = req.id.eventNo;
    } else {
      this.known.add(req.id);
    }
    const local =
      tag === null ? null : { tag, first: null, firstWasTentative: false, lastTentative: null };
    this.insertTentative(new Entry(req, local, this.nowMs));
    this.changed();
  }

  /** Line 36, adjustTentativeOrder: place the entry by (timestamp, id). */
  private insertTentative(e: Entry): void {
    this.live.set(opKey(e.req.id), e);
    const order = this.order;
    const last = order.length > this.committedEnd ? order[order.length - 1]! : null;
    if (last === null || compareEntries(last, e) < 0) {
      order.push(e);
      return;
    }
    let lo = this.committedEnd;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareEntries(order[mid]!, e) < 0) lo = mid + 1;
      else hi = mid;
    }
    order.splice(lo, 0, e);
    if (lo < this.frontier) this.frontier = lo;
  }

  /** Line 48, commit: stabilize the causal context, then append the strong op. */
  private commit(r: Entry): void {
    const ctx = r.req.causalCtx!;
    const order = this.order;
    const start = this.committedEnd;
    const stabilized: Entry[] = [];
    const stays: Entry[] = [];
    // How many stabilized ops come before the first op that stays tentative: up to there the list
    // keeps its order, and so do the executions.
    let leading = 0;
    // Every op of the context has a smaller timestamp than r, so it sits before r on the list.
    for (let i = start; order[i] !== r; i++) {
      if (i >= order.length)
        throw new Error(`commit: ${formatOpId(r.req.id)} is not on the tentative list`);
      const x = order[i]!;
      if (ctx.has(x.req.id)) {
        stabilized.push(x);
        if (stays.length === 0) leading++;
      } else {
        stays.push(x);
      }
    }
    stabilized.push(r);
    for (const x of stabilized) {
      x.commitSeq = this.committedCount++;
      if (x.req.id.replica === this.id)
        this.committedOwnUpTo = Math.max(this.committedOwnUpTo, x.req.id.eventNo);
    }
    this.store.noteCommitted(stabilized);
    // The committed state changed by what these wrote (executed or not yet: then at execution).
    if (this.changedKeys !== null)
      for (const x of stabilized)
        if (x.exec !== null) for (const v of x.exec.writes) this.changedKeys.add(v.key);
    this.committedEnd = start + stabilized.length;
    this.out.push({
      type: 'persist',
      record: { kind: 'commit', ids: stabilized.map((x) => x.req.id) },
    });
    if (stays.length === 0) return; // the ideal case: the head of tentative simply became committed
    // committed · committedExt · [r] · (the rest of tentative), relative orders kept (lines 49-52).
    let j = start;
    for (const x of stabilized) order[j++] = x;
    for (const x of stays) order[j++] = x;
    this.metrics.reorderingCommits++;
    this.frontier = Math.min(this.frontier, start + leading);
    const keys = new Set<string>();
    for (const x of stabilized) if (x.exec !== null) for (const v of x.exec.writes) keys.add(v.key);
    this.store.reposition(keys);
  }

  // ---------------------------------------------------------------- execution (§4.4)

  /** The list or the reads waiting changed: run executions now, or when the driver says. */
  private changed(): void {
    if (this.deferExecution) this.pumpDue = true;
    else this.pump();
  }

  /**
   * With `deferExecution`: runs what the inputs since the last call made necessary (validations,
   * executions, answers). Call it once per batch of inputs, e.g. at the end of each event-loop
   * turn; `executionDue` says whether there is anything to do.
   */
  runDeferred(): Output[] {
    if (this.pumpDue) this.pump();
    return this.flush();
  }

  get executionDue(): boolean {
    return this.pumpDue;
  }

  /** Validates, executes and answers entries in order from `frontier`, then serves local reads. */
  private pump(): void {
    this.pumpDue = false;
    this.finalizeReady();
    // `this.order` is re-read on every step: finalizing may compact it.
    while (this.frontier < this.executable()) {
      const e = this.order[this.frontier]!;
      if (e.running !== 0) break;
      if (e.exec !== null) {
        if (this.stillValid(e)) {
          this.accept(e);
          this.frontier++;
          this.finalizeReady();
          continue;
        }
        if (e.exec.ahead) this.metrics.aheadConflicts++;
        this.store.remove(e.exec.writes);
        if (this.changedKeys !== null) for (const w of e.exec.writes) this.changedKeys.add(w.key);
        e.exec = null;
        this.metrics.rollbacks++;
      }
      this.startExecution(e, false);
      break;
    }
    // The committed state is whole once every committed entry is executed and valid.
    if (this.frontier >= this.committedEnd) {
      this.serveWatchReads('stable');
      this.serveStrongReads();
    }
    if (this.frontier < this.executable()) this.startAhead();
    // Held, the state at the end of the list is not executed: a read served from the committed
    // state could miss the session's own tentative writes (read-your-writes), so reads wait.
    else if (!this.held) {
      this.serveReads();
      this.serveWatchReads('tentative');
    }
  }

  /** The strong reads whose index is delivered and whose own ops are committed: read now. */
  private serveStrongReads(): void {
    if (this.strongReads.size === 0) return;
    let at: Entry | null = null;
    for (const [tag, read] of this.strongReads) {
      if (!read.indexed || read.ownUpTo > this.committedOwnUpTo) continue;
      this.strongReads.delete(tag);
      at ??= this.readPoint(true);
      this.startRead(read, at, {
        tag,
        trace: undefined,
        strongRead: true,
        position: this.committedCount,
      });
    }
  }

  /**
   * Runs the live queries' reads of one level: `tentative` at the end of the list (as weak reads),
   * `stable` at the committed state (exactly the committed entries' writes).
   */
  private serveWatchReads(level: 'tentative' | 'stable'): void {
    if (!this.pendingWatchReads.some((r) => r.level === level)) return;
    const at = this.readPoint(level === 'stable');
    const keep: typeof this.pendingWatchReads = [];
    for (const read of this.pendingWatchReads.splice(0)) {
      if (read.level !== level) {
        keep.push(read);
        continue;
      }
      this.startRead(read, at, {
        tag: read.tag,
        trace: undefined,
        watch: level,
        ...(level === 'stable' ? { position: this.committedCount } : {}),
      });
    }
    this.pendingWatchReads.push(...keep);
  }

  /**
   * The keys whose value at the end of the list or in the committed state may have changed since
   * the last call (over-approximated: every write, withdrawal and commit): a driver re-runs the
   * live queries whose read sets they touch.
   */
  takeChangedKeys(): Set<string> {
    const out = this.changedKeys ?? new Set<string>();
    this.changedKeys = new Set();
    return out;
  }

  /**
   * Entries before this position may execute: all of the list, or only its committed prefix
   * (without speculation, or while it is held for a catch-up).
   */
  private executable(): number {
    return this.speculative && !this.held ? this.order.length : this.committedEnd;
  }

  /** Ops committed so far (`stats().committed`, without building the rest of the stats). */
  get committedOps(): number {
    return this.committedCount;
  }

  /** Speculation is held for a catch-up (holdSpeculation). */
  get speculationHeld(): boolean {
    return this.held;
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
    if (hold === this.held) return [];
    this.held = hold;
    if (!hold) this.changed();
    return this.flush();
  }

  /**
   * Concurrent execution (§4.4): while the frontier's execution runs, free slots start entries
   * after it that were never executed, each on the snapshot of its own position. Their writes are
   * installed when they finish; whether what they read still holds is checked when the frontier
   * reaches them (`stillValid`), as for any execution, so a conflict with an earlier execution that
   * finished meanwhile discards the result and re-executes. Entries with a stale execution are not
   * started here: they are validated first, in order.
   */
  private startAhead(): void {
    const end = Math.min(this.executable(), this.frontier + AHEAD_WINDOW);
    for (let i = this.frontier + 1; i < end && this.runningEntries < this.executionSlots; i++) {
      const e = this.order[i]!;
      if (e.running === 0 && e.exec === null) this.startExecution(e, true);
    }
  }

  private startExecution(e: Entry, ahead: boolean): void {
    const jobId = this.nextJobId++;
    const snapshot = new RecordingSnapshot(this.store, e);
    e.running = jobId;
    this.runningEntries++;
    if (ahead) this.metrics.aheadExecutions++;
    this.jobs.set(jobId, { entry: e, snapshot, ahead });
    const req = e.req;
    this.out.push({
      type: 'execute',
      job: {
        jobId,
        op: req.op,
        args: req.args,
        ts: req.ts,
        id: req.id,
        snapshot,
        ahead,
        retry: e.executions > 0,
        // Only executors that read a mirror of the store need it (they are its observer).
        ...(this.mirrored ? { rank: rankOf(e) } : {}),
        ...(req.session === undefined ? {} : { session: req.session }),
      },
    });
  }

  /** Every read of the execution still sees the same value at the entry's current position. */
  private stillValid(e: Entry): boolean {
    const exec = e.exec as Execution;
    for (const read of exec.reads) {
      if (read.stale === true) return false;
      if (read.kind === 'key') {
        const now = this.store.visible(read.key, e);
        if (now === read.version) continue;
        if (!jsonEqual(now?.value, read.version?.value)) return false;
        read.version = now;
      } else {
        const now = this.store.scan(read.prefix, e);
        const was = read.versions;
        if (now.length !== was.length) return false;
        for (let k = 0; k < now.length; k++) {
          const a = now[k]!;
          const b = was[k]!;
          if (a !== b && (a.key !== b.key || !jsonEqual(a.value, b.value))) return false;
        }
        read.versions = now;
      }
    }
    return true;
  }

  /** An execution became valid at its position: answer the client if it is waiting. */
  private accept(e: Entry): void {
    const local = e.local;
    if (local === null) return;
    const outcome = (e.exec as Execution).outcome;
    if (e.committed) {
      // A weak op first executed after it was committed: its only response is already final.
      // (A strong op's stable response is sent when it is finalized.)
      if (!e.req.strong && local.first === null) {
        local.first = outcome;
        this.respond(local.tag, e.req.id, 'stable', outcome);
      }
      return;
    }
    if (!e.req.strong) {
      // Lines 66-68: a weak op answers after its first execution.
      if (local.first !== null) return;
      local.first = outcome;
      local.firstWasTentative = true;
      this.respond(local.tag, e.req.id, 'tentative', outcome, this.trace(this.frontier));
      return;
    }
    // Lines 69-71: a strong op answers tentatively after each execution whose result changed.
    if (local.lastTentative !== null && outcomesEqual(local.lastTentative, outcome)) return;
    local.lastTentative = outcome;
    if (local.first === null) {
      local.first = outcome;
      local.firstWasTentative = true;
    }
    this.respond(local.tag, e.req.id, 'tentative', outcome, this.trace(this.frontier));
  }

  /** Drops entries that can never change again, and the versions they made unreachable. */
  private finalizeReady(): void {
    const order = this.order;
    while (this.head < this.frontier && this.head < this.committedEnd) {
      const e = order[this.head]!;
      const exec = e.exec as Execution;
      this.store.finalize(exec.writes);
      exec.reads.length = 0;
      this.live.delete(opKey(e.req.id));
      this.metrics.finalized++;
      this.metrics.executionsOfFinalized += e.executions;
      if (e.req.strong && e.req.id.replica === this.id) this.finalizedOwnStrong = e.req.id.eventNo;
      const local = e.local;
      // Lines 55-57 and 73: the stable response of a strong op, without re-execution when its
      // speculative execution held at its final position.
      // A weak op answered tentatively gets its stable outcome too: the driver tells the client
      // the op is committed (a session acknowledges only committed ops; see session-dedupe.ts).
      if (local !== null && (e.req.strong || local.firstWasTentative))
        this.respond(local.tag, e.req.id, 'stable', exec.outcome);
      if (local !== null && local.firstWasTentative) {
        this.metrics.speculated++;
        if (outcomesEqual(local.first!, exec.outcome)) this.metrics.speculatedCorrectly++;
      }
      this.head++;
    }
    if (this.head >= 1024 && this.head * 2 >= order.length) {
      this.order = order.slice(this.head);
      this.frontier -= this.head;
      this.committedEnd -= this.head;
      this.head = 0;
    }
  }

  private serveReads(): void {
    if (this.pendingReads.length === 0) return;
    // Without speculation the tentative entries have no versions: the read sees the committed state.
    const end = this.readPoint(false);
    const trace = this.trace(this.executable());
    for (const read of this.pendingReads.splice(0))
      this.startRead(read, end, { tag: read.tag, trace });
  }

  /**
   * Where a read-only execution reads: at the end of the list, or (`committed`) right after the
   * last committed entry, where every committed write precedes it and no tentative one does.
   */
  private readPoint(committed: boolean): Entry {
    const at = new Entry(END_REQ, null, this.nowMs);
    if (committed) at.commitSeq = this.committedCount;
    return at;
  }

  /** Hands out the execution of a read-only op that reads at `at` (it is never ordered). */
  private startRead(
    read: { readonly op: string; readonly args: JsonValue },
    at: Entry,
    readOnly: NonNullable<Job['readOnly']>,
  ): void {
    const jobId = this.nextJobId++;
    const snapshot = new RecordingSnapshot(this.store, at);
    this.jobs.set(jobId, { entry: null, snapshot, ahead: false, readOnly });
    this.out.push({
      type: 'execute',
      job: { jobId, op: read.op, args: read.args, ts: this.clock.current(), id: null, snapshot },
    });
  }

  // ---------------------------------------------------------------- helpers

  private respond(
    tag: number,
    id: OpId | null,
    level: ResponseLevel,
    outcome: Outcome,
    trace?: OrderTrace,
  ): void {
    this.out.push(
      trace === undefined
        ? { type: 'respond', tag, id, level, outcome }
        : { type: 'respond', tag, id, level, outcome, trace },
    );
  }

  private reject(request: InvokeRequest, error: string): void {
    this.metrics.invoked.rejected++;
    this.respond(request.tag, null, 'failed', { ok: false, error });
  }

  /** The order before position `index` of the list, when tracing is on. */
  private trace(index: number): OrderTrace | undefined {
    if (!this.traceOrder) return undefined;
    const tentativeBefore: OpId[] = [];
    for (let i = this.committedEnd; i < index; i++) tentativeBefore.push(this.order[i]!.req.id);
    return { committedBefore: this.committedCount, tentativeBefore };
  }

  private advanceTime(nowMs: number): void {
    if (nowMs > this.nowMs) this.nowMs = nowMs;
    if (this.lastCommitAt === 0) this.lastCommitAt = nowMs;
  }

  private flush(): Output[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  // ---------------------------------------------------------------- inspection

  /** Sizes and counters for status pages, benchmarks and checkers. */
  stats(): ReplicaStats {
    return {
      committed: this.committedCount,
      finalized: this.committedCount - (this.committedEnd - this.head),
      tentative: this.order.length - this.committedEnd,
      // Entries still to validate or execute (without speculation, only committed ones ever are).
      unvalidated: this.executable() - this.frontier,
      running: this.jobs.size,
      versions: this.store.size(),
      peakVersions: this.store.peakSize(),
      keys: this.store.keyCount(),
      hlc: this.clock.current(),
      knownDots: this.known.dotCount(),
    };
  }

  /** The state as `key → value` once every op is final (for digests); includes tentative writes otherwise. */
  state(): Map<string, JsonValue> {
    const out = new Map<string, JsonValue>();
    for (const [key, v] of this.store.latest()) if (v.value !== undefined) out.set(key, v.value);
    return new Map([...out].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
  }

  /**
   * A fixed-size digest of `state()`, equal across replicas that hold the same state, and cheap to
   * ask for often (it is kept up to date key by key: VersionStore.digest).
   */
  stateDigest(): string {
    return this.store.digest();
  }

  /** `state()` as canonical JSON: the whole state, for the simulator's checkers and for tests. */
  stateJson(): string {
    return canonicalJson(Object.fromEntries(this.state()));
  }

  /**
   * The newest op this replica issued that a session cannot resubmit itself: below the session's
   * own ops still tentative at the top of this replica's ops (and strong no-ops among them, which
   * change nothing). A session moving to another replica resubmits its uncommitted ops, so the
   * other replica need not have them before it serves the session; everything below this one it
   * must have (gossip sends a replica's ops in order, so it has them all or waits for them).
   */
  lastOpNotPendingOf(session: string): number {
    // The ops it may skip are the session's own and no-ops, tentative, at the top: what is left is
    // the newest own op committed (or final) and the newest one, no-ops aside, of another session.
    const other =
      this.newestOwn.session === session ? this.newestOwnBefore : this.newestOwn.eventNo;
    return Math.max(this.committedOwnUpTo, other);
  }

  /**
   * Keeps `newestOwn` and `newestOwnBefore` as this replica issues `req` (or recovery brings it
   * back, in event-number order): no-ops change neither.
   */
  private issued(req: Req): void {
    if (req.id.replica !== this.id || req.op === NOOP_OP) return;
    const session = req.session?.id ?? null;
    if (session !== this.newestOwn.session) this.newestOwnBefore = this.newestOwn.eventNo;
    this.newestOwn = { session, eventNo: req.id.eventNo };
  }

  /** How many ops this replica has issued: the event number of its last one (0: none it knows of). */
  /**
   * Sets the origin of a replica that had none (ORIGIN_UNDECIDED): from now on it numbers ops
   * `(origin, 1)`, `(origin, 2)`, … Ops of other origins it already holds are unaffected.
   */
  adoptOrigin(origin: number): void {
    if (this.origin !== ORIGIN_UNDECIDED || this.eventNo !== 0)
      throw new Error(`adoptOrigin: the replica already has origin ${this.origin}`);
    if (!Number.isInteger(origin) || origin < 0)
      throw new Error(`adoptOrigin: an origin is a non-negative integer, not ${origin}`);
    this.origin = origin;
  }

  /** Whether `jobId` is an execution this replica handed out and has not had the result of. */
  hasJob(jobId: number): boolean {
    return this.jobs.has(jobId);
  }

  /** The next execution job id (a successor built in the same process starts there). */
  get jobIdsUsed(): number {
    return this.nextJobId;
  }

  issuedCount(): number {
    return this.eventNo;
  }

  /** True when this replica has the op with this id (issued it, or received its Req). */
  hasReceived(id: OpId): boolean {
    if (id.replica === this.id) return id.eventNo <= this.eventNo;
    return this.known.has(id) || this.live.has(opKey(id));
  }

  /**
   * For each of `origins`, how many of its ops this replica has received without a gap (its ops
   * 1..n, strong ones not yet delivered included). What a client saw here is covered by this
   * vector, except ops past a gap, which are rare and brief; another replica that has caught up with
   * it can serve the client's session (read-your-writes, monotonic reads).
   */
  receivedPrefix(origins: Iterable<number>): Map<number, number> {
    const out = new Map<number, number>();
    for (const origin of origins) out.set(origin, this.receivedUpTo(origin));
    return out;
  }

  /**
   * How many of `origin`'s ops this replica has received without a gap. Received ops stay received
   * (known, or live until they are known), so the answer only grows: it is cached per origin and
   * each call walks only the ops received since the last one.
   */
  receivedUpTo(origin: number): number {
    if (origin === this.id) return this.eventNo;
    let n = Math.max(this.receivedThrough.get(origin) ?? 0, this.known.base(origin));
    while (this.hasReceived({ replica: origin, eventNo: n + 1 })) n++;
    this.receivedThrough.set(origin, n);
    return n;
  }

  /** Ids of the tentative list, in order. */
  tentativeIds(): OpId[] {
    return this.order.slice(this.committedEnd).map((e) => e.req.id);
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

/** A reader placed after every op: what weak read-only ops see. */
const END_REQ: Req = {
  ts: Number.POSITIVE_INFINITY,
  id: { replica: Number.MAX_SAFE_INTEGER, eventNo: Number.MAX_SAFE_INTEGER },
  op: '',
  args: null,
  strong: false,
  causalCtx: null,
};

function compareEntries(a: Entry, b: Entry): number {
  if (a.commitSeq !== b.commitSeq) return a.commitSeq < b.commitSeq ? -1 : 1;
  const x = a.req;
  const y = b.req;
  if (x.ts !== y.ts) return x.ts < y.ts ? -1 : 1;
  if (x.id.replica !== y.id.replica) return x.id.replica - y.id.replica;
  return x.id.eventNo - y.id.eventNo;
}

/** What a live query's read read, from its snapshot's record. */
function readSetOf(snapshot: RecordingSnapshot): ReadSet {
  const keys: string[] = [];
  const prefixes: string[] = [];
  for (const r of snapshot.reads) {
    if (r.kind === 'key') keys.push(r.key);
    else prefixes.push(r.prefix);
  }
  return { keys, prefixes };
}
