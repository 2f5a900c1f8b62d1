import type { ConsistencyLevel, Correctable, Correction } from '@creek/client';
import { SnapshotStore } from './snapshot-store.js';

/**
 * What a component shows of an op: its latest value and the level it came at, its error, and
 * whether more is to come (`pending`: the Correctable is still `updating`) or it waits in the
 * client's offline queue (`queued`).
 */
export interface OpState<T> {
  /** The latest view's value: cached, tentative or stable (see `level`); undefined before any. */
  readonly value: T | undefined;
  readonly level: ConsistencyLevel | undefined;
  /** Set when the op ended in an error (a CreekError says whether it may have taken effect). */
  readonly error: Error | undefined;
  /** No final view or error yet. */
  readonly pending: boolean;
  /** It waits in the offline queue: no replica answers, and it goes out when one does. */
  readonly queued: boolean;
  /**
   * What is shown is final: the op has its place in the committed order (`correctable.committed()`
   * resolved: a UI's "synced" mark, also for a weak op after its answer), or, for a live query,
   * the value was read at the committed state.
   */
  readonly committed: boolean;
  /**
   * The latest correction: a view that replaced a different value shown before, with the ops
   * that made the difference (`causes`), for a UI's "was X, now Y because …". Undefined if none.
   */
  readonly correction: Correction<T> | undefined;
}

/** The state before an op is invoked, or while none is. */
export const IDLE: OpState<never> = Object.freeze({
  value: undefined,
  level: undefined,
  error: undefined,
  pending: false,
  queued: false,
  committed: false,
  correction: undefined,
});

/** The state of an op that was invoked and has not answered yet. */
export const STARTING: OpState<never> = Object.freeze({ ...IDLE, pending: true });

function stateOf<T>(c: Correctable<T>, committed: boolean): OpState<T> {
  const latest = c.latest();
  return Object.freeze({
    value: latest?.value,
    level: latest?.level,
    error: c.error,
    pending: c.state === 'updating',
    queued: c.queued,
    committed,
    correction: c.correction(),
  });
}

/**
 * One Correctable as a store for `useSyncExternalStore`: a snapshot that stays the same object
 * until something changes (React compares snapshots by identity), and a subscription to its
 * views, its end and its queue state. The Correctable is made lazily, by `start`, on the first
 * subscription: React may render a component several times (and, in development, mount it
 * twice) before it commits, and an op must be invoked once.
 */
export class CorrectableStore<T> extends SnapshotStore<OpState<T>> {
  private correctable: Correctable<T> | null = null;
  private detach: (() => void) | null = null;
  /** The Correctable whose `committed()` resolved (the one followed, or one followed before). */
  private committedOne: Correctable<T> | null = null;

  constructor(
    private readonly start: (() => Correctable<T>) | null,
    initial: OpState<T> = start === null ? IDLE : STARTING,
  ) {
    super(initial);
  }

  /** Follows `c` from now on (useOp's latest call), dropping the one followed before. */
  follow(c: Correctable<T>): void {
    this.detach?.();
    this.correctable = c;
    this.attach();
    this.changed();
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    if (this.correctable === null && this.start !== null) {
      this.correctable = this.start();
      this.attach();
      this.changed();
    } else if (this.detach === null && this.correctable !== null) this.attach();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) {
        this.detach?.();
        this.detach = null;
      }
    };
  };

  private attach(): void {
    const c = this.correctable!;
    const changed = (): void => {
      if (this.correctable === c) this.changed();
    };
    this.detach = c.subscribe({
      onUpdate: changed,
      onFinal: changed,
      onError: changed,
      onQueued: changed,
    });
    // Never rejects unhandled: an op that will never commit says why in its error.
    c.committed().then(
      () => {
        this.committedOne = c;
        changed();
      },
      () => undefined,
    );
  }

  private changed(): void {
    const c = this.correctable;
    const next = c === null ? this.snapshot : stateOf(c, this.committedOne === c);
    const s = this.snapshot;
    if (
      s.value === next.value &&
      s.level === next.level &&
      s.error === next.error &&
      s.pending === next.pending &&
      s.queued === next.queued &&
      s.committed === next.committed &&
      s.correction === next.correction
    )
      return;
    this.publish(next);
  }
}
