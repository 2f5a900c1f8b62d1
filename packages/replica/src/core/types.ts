import type { DottedVersionVector } from './dvv.js';
import type { Rank } from './rank.js';
import { jsonEqual, type JsonValue, type User } from '@creek/app';
import type { InvariantViolation } from './invariant-check.js';
import type { OpId } from './op-id.js';

/**
 * Creek Algorithm 1 line 1: the unit that is gossiped, ordered and executed.
 * `ts` is an HLC timestamp in microseconds (see hlc.ts). `causalCtx` is set only on strong ops.
 */
export interface Req {
  readonly ts: number;
  readonly id: OpId;
  readonly op: string;
  readonly args: JsonValue;
  readonly strong: boolean;
  readonly causalCtx: DottedVersionVector | null;
  /** Set when a client session invoked the op: makes a retry at another replica apply once. */
  readonly session?: SessionStamp;
  /**
   * Who invoked it (`tx.user`), verified once by the replica the client was connected to; absent
   * for an anonymous caller. Part of the op like its arguments: every replica, every re-execution
   * and every recovery runs it with this user.
   */
  readonly user?: User;
}

/**
 * A client session's numbering of its ops (see session-dedupe.ts). `seq` numbers the session's
 * ops from 1; a resubmission of the same op, to any replica, carries the same `seq`. `acked`: every
 * op of the session below it has its final answer at the client and is committed, so the client
 * will never resubmit it.
 */
export interface SessionStamp {
  readonly id: string;
  readonly seq: number;
  readonly acked: number;
}

/** Algorithm 1 line 2-3: `(timestamp, id)` lexicographic order of Reqs on the tentative list. */
export function compareReq(a: Req, b: Req): number {
  if (a.ts !== b.ts) return a.ts < b.ts ? -1 : 1;
  if (a.id.replica !== b.id.replica) return a.id.replica - b.id.replica;
  return a.id.eventNo - b.id.eventNo;
}

/** The result of one execution of an op: its return value, or the message it threw. */
export type Outcome =
  { readonly ok: true; readonly value: JsonValue } | { readonly ok: false; readonly error: string };

/** Equal results: equal values (structurally), or the same error message. */
export function outcomesEqual(a: Outcome, b: Outcome): boolean {
  if (a.ok && b.ok) return jsonEqual(a.value, b.value);
  if (!a.ok && !b.ok) return a.error === b.error;
  return false;
}

/** What an op may read during execution: a consistent snapshot at the op's position in the order. */
export interface SnapshotReader {
  get(key: string): JsonValue | undefined;
  /** Keys starting with `prefix` and their values, sorted by key. */
  scan(prefix: string): ReadonlyArray<readonly [string, JsonValue]>;
}

/**
 * An execution the core asks its driver to run. The snapshot belongs to the core, which records
 * through it what the execution read; the executor returns only writes and the outcome.
 */
export interface ExecutionJob {
  readonly jobId: number;
  readonly op: string;
  readonly args: JsonValue;
  /** HLC timestamp of the op (for `tx.now()`). */
  readonly ts: number;
  /** Seeds `tx.random()`; null for weak read-only ops, which are never ordered. */
  readonly id: OpId | null;
  readonly snapshot: SnapshotReader;
  /** The invoking session's numbering, when a client session invoked the op. */
  readonly session?: SessionStamp;
  /** Who invoked the op (`tx.user`); absent for an anonymous caller. */
  readonly user?: User;
  /** Started beyond the validation frontier (concurrent execution, §4.4). */
  readonly ahead?: boolean;
  /**
   * The entry was executed before and that result did not hold (a conflict or a reorder). An
   * executor may run a first execution on an approximate snapshot, since its result is validated
   * before it counts; a retry must read the exact snapshot, so that the frontier always advances.
   */
  readonly retry?: boolean;
  /**
   * The entry's place in the order when the job started; present only for ordered ops of a
   * replica with a store observer (executors that read a mirror of the store).
   */
  readonly rank?: Rank;
}

/** A write of `undefined` is a delete. */
export type Write = readonly [key: string, value: JsonValue | undefined];

export interface ExecutionResult {
  readonly jobId: number;
  readonly writes: readonly Write[];
  readonly outcome: Outcome;
  /**
   * The writes' pair hashes (state-digest.ts pairHashesOf: four lanes per write), when the
   * executor made them where it ran the op (a worker thread), so the thread that keeps the digest
   * of the finalized state does not hash them again. Absent: hashed when finalized.
   */
  readonly pairHashes?: Uint32Array;
}

/** Records the driver must make durable (SQLite in the runtime, the simulated disk in the simulator). */
export type DurableRecord =
  | { readonly kind: 'req'; readonly req: Req }
  | { readonly kind: 'commit'; readonly ids: readonly OpId[] };

/** Where a tentative response came from: the order the replica had when it executed the op. */
export interface OrderTrace {
  /** How many ops of the replica's committed list preceded the op. */
  readonly committedBefore: number;
  /** The tentative ops that preceded it, in order. */
  readonly tentativeBefore: readonly OpId[];
}

export type ResponseLevel = 'tentative' | 'stable' | 'failed';

export interface Response {
  readonly type: 'respond';
  /** The caller's tag from `invoke`. */
  readonly tag: number;
  /**
   * Null for ops that were never ordered: read-only ops (weak ones, and strong ones answered by
   * read index) and rejected invocations.
   */
  readonly id: OpId | null;
  readonly level: ResponseLevel;
  readonly outcome: Outcome;
  /**
   * On a failure: this copy of the op was definitely not applied, and never will be (its origin's
   * close dropped it, core/closing-origins.ts). Another copy of a session's op (resubmitted to
   * another replica, with the same session number) may still be, exactly once: the client moves on
   * and resubmits, as when a replica is unavailable.
   */
  readonly notApplied?: true;
  /** Present on tentative responses when the replica was built with `traceOrder` (checkers). */
  readonly trace?: OrderTrace;
  /** What a live query's read read (InvokeRequest.watch): re-run it when one of these changes. */
  readonly reads?: ReadSet;
  /**
   * A stable read that was not ordered (a live query's, a strong read-only op's): how many
   * committed ops the state it read holds.
   */
  readonly position?: number;
  /** A live query's read for a session (InvokeRequest.reader): the session's ops its state holds. */
  readonly sessionOps?: SessionOpsHeld;
  /**
   * On a strong op's stable response that differs from the tentative one its client was last
   * shown: the ops ordered ahead of it whose writes made the difference (corrections.ts).
   */
  readonly causes?: readonly CorrectionCause[];
}

/** An op of a session that failed at its place in some state. */
export interface FailedSessionOp {
  readonly seq: number;
  readonly op: string;
  readonly error: string;
}

/**
 * Which of a session's ops a state holds: all of them numbered up to `upTo` but those `missing`,
 * with those that failed among them (session-dedupe.ts `sessionOpsAt`).
 */
export interface SessionOpsHeld {
  readonly upTo: number;
  readonly missing: readonly number[];
  readonly failed: readonly FailedSessionOp[];
}

/** The keys a read got, and the prefixes it scanned. */
export interface ReadSet {
  readonly keys: readonly string[];
  readonly prefixes: readonly string[];
}

/** Whether a change to `key` can change what a read of `reads` returns. */
export function readSetCovers(reads: ReadSet, key: string): boolean {
  return reads.keys.includes(key) || reads.prefixes.some((p) => key.startsWith(p));
}

export type Output =
  | { readonly type: 'rbCast'; readonly req: Req }
  /** `prevStrong`: eventNo of this replica's previous strong op (0 if none), for per-origin FIFO. */
  | { readonly type: 'cabCast'; readonly id: OpId; readonly prevStrong: number }
  /**
   * CAB-cast another origin's strong op on its behalf: it waited long on this replica's tentative
   * list with its causal context complete here, so its origin's cast may be lost for good (the
   * origin died). `prevStrong` is its predecessor among its origin's strong ops when that one is
   * cast (adopted here) but not delivered yet (a chained adoption); without it, every earlier
   * strong op of its origin is delivered here (they are in its context), and CAB (which tracks
   * deliveries) fills in the last one.
   */
  | { readonly type: 'cabAdopt'; readonly id: OpId; readonly prevStrong?: number }
  /**
   * A strong read-only op (`tag`) is answered stably without a log write (cab/read-index.ts): the
   * driver gets a read index from the leader and calls `readIndexReached(tag)` once every instance
   * below it is delivered here.
   */
  | { readonly type: 'readIndex'; readonly tag: number }
  | { readonly type: 'execute'; readonly job: ExecutionJob }
  | { readonly type: 'persist'; readonly record: DurableRecord }
  /** An invariant the finalized state broke (ReplicaOptions.checkInvariants): for the driver to report. */
  | { readonly type: 'invariantBroken'; readonly violation: InvariantViolation }
  /**
   * A close committed (core/closing-origins.ts): its origin's ops above the cut will never be held,
   * so casts and 2a that waited for them lack nothing now (the driver has CAB check them again).
   */
  | { readonly type: 'originClosed'; readonly origin: number }
  | Response;

/**
 * Why an answer shown was corrected (corrections.ts): an op ordered ahead unseen, and a key it
 * wrote that the corrected op read.
 */
export interface CorrectionCause {
  /** The op whose write made the difference, e.g. `bank.withdraw`. */
  readonly op: string;
  /** Its id (`r<origin>#<event>`), as logs and /status name ops. */
  readonly id: string;
  /** A key it wrote that this op read. */
  readonly key: string;
}
