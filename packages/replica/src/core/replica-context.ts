import { DottedVersionVector } from './dvv.js';
import type { Entry, ShownReads } from './entry.js';
import { FinalDigests } from './final-digests.js';
import { HybridLogicalClock } from './hlc.js';
import { ReplicaMetrics } from './metrics.js';
import type { OpId } from './op-id.js';
import { OwnOps } from './own-ops.js';
import { ORIGIN_UNDECIDED, type ReplicaOptions } from './replica-options.js';
import type { RecordingSnapshot } from './snapshot.js';
import type {
  CorrectionCause,
  OrderTrace,
  Outcome,
  Output,
  Req,
  ResponseLevel,
  SessionOpsHeld,
} from './types.js';
import { VersionStore } from './version-store.js';

/** A reader placed after every op: what weak read-only ops see. */
export const END_REQ: Req = {
  ts: Number.POSITIVE_INFINITY,
  id: { replica: Number.MAX_SAFE_INTEGER, eventNo: Number.MAX_SAFE_INTEGER },
  op: '',
  args: null,
  strong: false,
  causalCtx: null,
};

/** An execution handed out (an `execute` output) whose result has not come back. */
export interface Job {
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
    /** A live query's read for a session: the session's ops its state holds (Response.own). */
    readonly sessionOps?: SessionOpsHeld;
    /** A strong read-only op's stable read (by read index): answered as the op's stable view. */
    readonly strongRead?: boolean;
    /** For a strong read: its tentative answer and what that read saw (corrections.ts). */
    readonly shown?: { readonly outcome: Outcome; readonly reads: ShownReads };
  };
}

/**
 * The state that the parts of a replica share: the list `committed · tentative`, what is known and
 * stored, the jobs handed out, the clock, and the outputs gathered for the input being handled.
 * Each part (ordering.ts, execution.ts, reads.ts, liveness.ts, recovery.ts) keeps its own state
 * besides; `Replica` (replica.ts) puts them together.
 */
export class ReplicaContext {
  /**
   * The origin of this replica's op ids (core/op-id.ts `originOf`); ORIGIN_UNDECIDED while its
   * host still learns which incarnation it is (it then numbers no op: `adoptOrigin`).
   */
  origin: number;
  readonly metrics = new ReplicaMetrics();
  private readonly traceOrder: boolean;

  readonly clock = new HybridLogicalClock();
  /** Algorithm 1 line 7: ids of the RB-delivered weak ops and CAB-delivered strong ops. */
  readonly known = new DottedVersionVector();
  readonly store: VersionStore;
  /** The digest of the finalized state at each of the last committed positions. */
  readonly finals: FinalDigests;
  eventNo = 0;
  lastStrongEventNo = 0;
  /** Event number of this replica's last strong op that is final (for checkpoints). */
  finalizedOwnStrong = 0;
  readonly own = new OwnOps();

  /**
   * The list `committed · tentative` is kept in `order` from `head` on: entries in
   * `[head, committedEnd)` are committed but not yet final; `[committedEnd, order.length)` is the
   * tentative list sorted by (timestamp, id). Instead of Algorithm 1's `executed` list and eager
   * rollback of everything after the first divergence, executions are validated lazily (§4.4,
   * "rollbacks only if necessary"): every entry in `[head, frontier)` has an execution that is
   * valid at its current position; entries at and after `frontier` may have stale executions,
   * which are checked in order against the versions now visible to them, and re-executed only if
   * something they read changed. A change of order (an RB-delivered op landing mid-list, a
   * reordering commit) only moves `frontier` back to the first position that changed.
   */
  order: Entry[] = [];
  head = 0;
  committedEnd = 0;
  frontier = 0;
  /** Entries on the list (not yet final), by op key. */
  readonly live = new Map<string, Entry>();
  /**
   * Closed origins and their cuts (core/closing-origins.ts): their ops above the cut that were not
   * committed when the close was are definitely not applied.
   */
  readonly closed = new Map<number, number>();
  committedCount = 0;

  /** Executions handed out, ordered ops' and reads', by job id. */
  readonly jobs = new Map<number, Job>();
  nextJobId: number;
  /** ReplicaOptions.speculative. */
  readonly speculative: boolean;
  /** ReplicaOptions.orderOnArrival, where it applies: without speculation. */
  readonly orderOnArrival: boolean;
  /** Speculation held for a catch-up (Replica.holdSpeculation). */
  held = false;
  /**
   * Keys whose value at the end of the list or in the committed state may have changed since the
   * driver last took them (`takeChangedKeys`): written, withdrawn, or committed. Kept only once a
   * driver asked (a replica nobody watches keeps nothing).
   */
  changedKeys: Set<string> | null = null;

  nowMs = 0;
  lastCommitAt = 0;
  noopPending: string | null = null;
  out: Output[] = [];

  constructor(options: ReplicaOptions) {
    if (!Number.isInteger(options.id) || (options.id < 0 && options.id !== ORIGIN_UNDECIDED))
      throw new Error(`replica id must be a non-negative integer`);
    this.origin = options.id;
    this.nextJobId = options.firstJobId ?? 1;
    this.traceOrder = options.traceOrder ?? false;
    this.speculative = options.speculative ?? true;
    this.orderOnArrival = !this.speculative && options.orderOnArrival === true;
    this.store = new VersionStore(options.storeObserver ?? null);
    this.finals = new FinalDigests(options.finalDigestsKept);
  }

  /**
   * Entries before this position may execute: all of the list, or only its committed prefix
   * (without speculation, or while it is held for a catch-up).
   */
  executable(): number {
    return this.speculative && !this.held ? this.order.length : this.committedEnd;
  }

  respond(
    tag: number,
    id: OpId | null,
    level: ResponseLevel,
    outcome: Outcome,
    trace?: OrderTrace,
    causes?: readonly CorrectionCause[],
  ): void {
    this.out.push({
      type: 'respond',
      tag,
      id,
      level,
      outcome,
      ...(trace === undefined ? {} : { trace }),
      ...(causes === undefined || causes.length === 0 ? {} : { causes }),
    });
  }

  /** The order before position `index` of the list, when tracing is on. */
  trace(index: number): OrderTrace | undefined {
    if (!this.traceOrder) return undefined;
    const tentativeBefore: OpId[] = [];
    for (let i = this.committedEnd; i < index; i++) tentativeBefore.push(this.order[i]!.req.id);
    return { committedBefore: this.committedCount, tentativeBefore };
  }

  advanceTime(nowMs: number): void {
    if (nowMs > this.nowMs) this.nowMs = nowMs;
    if (this.lastCommitAt === 0) this.lastCommitAt = nowMs;
  }

  /** The outputs gathered since the last call: what the input being handled caused. */
  flush(): Output[] {
    const out = this.out;
    this.out = [];
    return out;
  }
}
