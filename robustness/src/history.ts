import type { JsonValue } from '@creek/app';

/**
 * What a run records: every op a client invoked, from its invocation to its outcome, and the
 * replicas whose data was lost for good (wiped or replaced). Times are milliseconds since the run
 * began, on this process's monotonic clock: the clients' own view, as a linearizability checker
 * needs (an op's real-time interval contains its effect wherever the replicas are).
 */

export type Level = 'weak' | 'strong';

/** The ops the workload draws from (robustness/src/app.ts, and the built-in queue ops). */
export type OpKind = 'append' | 'read' | 'enqueue' | 'dequeue';

/** How an op ended, as its client saw it. */
export type Outcome =
  /** Answered: `value` is the answer at the op's level (a weak op's tentative one). */
  | {
      readonly type: 'ok';
      readonly at: number;
      readonly value: JsonValue;
      readonly replica: number | null;
    }
  /** Failed, and the client says it did not take effect and never will (mayHaveTakenEffect false). */
  | { readonly type: 'failed'; readonly at: number; readonly error: string }
  /** Failed with its fate unknown (timeout, replica gone, client closed): it may have taken effect. */
  | { readonly type: 'indeterminate'; readonly at: number; readonly error: string };

export interface RecordedOp {
  /** `c<client>/<n>`: the client and its op number, for messages. */
  readonly id: string;
  readonly kind: OpKind;
  /** The op's name and arguments as invoked. */
  readonly op: string;
  readonly args: JsonValue;
  readonly level: Level;
  readonly invokedAt: number;
  /** Null: no outcome by the end of the run (the client was closed with it in flight). */
  outcome: Outcome | null;
  /**
   * Whether the op's `committed()` resolved (it has its place in the committed order) by the end
   * of the run; 'never' when it rejected with an error saying the op did not take effect (a
   * rejection saying it may have, as closing the client gives, leaves it false: unknown).
   */
  committed: boolean | 'never';
  /** One of the reads (strong list reads, the queues' drain) that take the final state at the end. */
  readonly final?: true;
}

/** A replica whose data went for good at `at` (wiped, or removed and replaced by a new one). */
export interface LostReplica {
  readonly replica: number;
  readonly at: number;
  readonly how: 'wipe' | 'replace';
}

export interface History {
  readonly ops: readonly RecordedOp[];
  readonly lost: readonly LostReplica[];
}
