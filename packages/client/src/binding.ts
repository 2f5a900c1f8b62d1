import type { OptimisticChange } from './session/optimistic.js';
import type { CreekError } from './errors.js';

/**
 * The storage binding of Correctables §5.1: the one module that knows how to reach a store. The
 * library asks it which consistency levels it offers and hands it operations; the binding streams
 * views of each operation's result back through a {@link ViewSink}.
 */

/**
 * Consistency levels, weakest first (the order `consistencyLevels()` reports them in):
 * `cached` — the client's own view, before a replica's: a read-only op's result this client saw
 * recently, shown at once (Correctables §4.3's local cache), or a live query's view with the
 * optimistic changes of the session's pending ops (InvokeOptions.optimistic); `weak` — a
 * replica's tentative answer; `strong` — the stable, linearizable one.
 */
export const CONSISTENCY_LEVELS = ['cached', 'weak', 'strong'] as const;
export type ConsistencyLevel = (typeof CONSISTENCY_LEVELS)[number];

export function isConsistencyLevel(x: unknown): x is ConsistencyLevel {
  return (CONSISTENCY_LEVELS as readonly unknown[]).includes(x);
}

/** Negative when `a` is weaker than `b`, zero when equal, positive when stronger. */
export function compareLevels(a: ConsistencyLevel, b: ConsistencyLevel): number {
  return CONSISTENCY_LEVELS.indexOf(a) - CONSISTENCY_LEVELS.indexOf(b);
}

/** The weakest of some levels (`'strong'` for none: nothing weakens the guarantee). */
export function weakestLevel(levels: Iterable<ConsistencyLevel>): ConsistencyLevel {
  let weakest: ConsistencyLevel = 'strong';
  for (const l of levels) if (compareLevels(l, weakest) < 0) weakest = l;
  return weakest;
}

/** One view of an operation's result: its value, the guarantee it comes with, and whether it is the last. */
export interface View<T> {
  readonly value: T;
  readonly level: ConsistencyLevel;
  readonly final: boolean;
  /**
   * On a view whose value replaces another the caller was shown: the ops ordered ahead of this one
   * unseen whose writes made the difference, as the replica found them (absent: none known).
   */
  readonly causes?: readonly CorrectionCause[];
}

/** Why a view corrected an earlier one: an op ordered ahead unseen, and a key it wrote that this op read. */
export interface CorrectionCause {
  /** The op, e.g. `bank.withdraw`. */
  readonly op: string;
  /** Its id in the cluster, `r<origin>#<event>`. */
  readonly id: string;
  readonly key: string;
}

/**
 * Where a binding delivers an operation's views: `view` for each preliminary view, then once with
 * `final: true` — or `error` once instead of the final view. Calls after the final view or an
 * error are ignored.
 */
export interface ViewSink<T> {
  view(v: View<T>): void;
  error(e: CreekError): void;
  /**
   * The op has its place in the committed order: its effect is final, whatever views came before
   * (a weak op's tentative answer is the final view; this comes later). An op that is never ordered
   * (a weak read) is done at its answer. Bindings that know commits call it, at most once.
   */
  committed?(): void;
  /**
   * The op will never be committed (it did not take effect, and never will), or the client will
   * never learn that it was (it was closed): `e` says which.
   */
  neverCommits?(e?: CreekError): void;
  /** The op went into (true) or out of (false) the binding's offline queue. */
  queued?(queued: boolean): void;
}

export interface Binding {
  /** The levels this binding offers, weakest first. */
  consistencyLevels(): ConsistencyLevel[];
  /**
   * Runs `op(args)` and reports one view per requested level through `sink` (the last one with
   * `final: true`), or an error. Must not throw: failures go to `sink.error`. When `signal`
   * aborts, the binding may stop and need not report anything more. `optimistic`: changes the op
   * makes to live queries' views until its effect shows in them (InvokeOptions.optimistic); a
   * binding without live queries ignores them.
   */
  submitOperation<T>(
    op: string,
    args: unknown,
    levels: ConsistencyLevel[],
    sink: ViewSink<T>,
    signal?: AbortSignal,
    optimistic?: readonly OptimisticChange[],
  ): void;
}
