import type { App } from '@creek/app';
import type { StoreObserver } from './version-store.js';

/** How a replica is set up (the `Replica` constructor and `Replica.recover`). */
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
   * Without speculation only: weak updates are ordered as soon as they arrive (CAB-cast as strong
   * ops are), so each is answered after one consensus round, as a replicated state machine
   * answers every update. Without it a weak op waits on the timestamp order for a later strong op
   * or the no-op interval to commit it. The runtime's `--speculation off` (the SMR baseline)
   * sets it; default false.
   */
  readonly orderOnArrival?: boolean;
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
  /**
   * How many committed positions' digests of the finalized state it keeps (FINAL_DIGESTS_KEPT by
   * default): how far back replicas that disagree can name the op that made them differ.
   */
  readonly finalDigestsKept?: number;
  /**
   * Check the app's invariants (AppOptions.invariants) on the finalized state after each op is
   * finalized, and report each one broken (an `invariantBroken` output; ReplicaMetrics.
   * invariantsBroken). Off by default: every invariant runs once per committed op, so it costs
   * what the invariants read. For tests and the simulator, and for a replica under suspicion.
   */
  readonly checkInvariants?: boolean;
  /**
   * A planted bug: a chained adoption (Liveness.adoptOrphans) does not name its predecessor, so
   * CAB takes the last strong op of its origin delivered here for it. Exists so a test can show
   * the simulator catches a dead origin's strong ops cast out of their origin's order.
   */
  readonly unsafeUnchainedAdoption?: boolean;
}

/**
 * `ReplicaOptions.id` of a replica that does not know its origin yet (a new or wiped one, still
 * learning from its peers): it takes no op of its own until `adoptOrigin`.
 */
export const ORIGIN_UNDECIDED = -1;
