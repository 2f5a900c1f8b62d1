import type { LiveQuery, LiveQueryCorrection } from '@creek/client';
import { IDLE, STARTING, type OpState } from './correctable-store.js';
import { SnapshotStore } from './snapshot-store.js';

/**
 * A live query as a store for `useSyncExternalStore`: started on the first subscription, closed
 * when the last one goes (React's development double mount closes it and starts it again), its
 * snapshot the latest view in the session's order (`LiveQuery.latest()`: `level` weak, the
 * replica's tentative state; strong, committed).
 * `pending` until the first result; a query the replica refused ends with `error`.
 */
export class LiveQueryStore<T> extends SnapshotStore<OpState<T>> {
  private query: LiveQuery<T> | null = null;
  private detach: (() => void) | null = null;

  constructor(
    private readonly start: (() => LiveQuery<T>) | null,
    /** Hears the query's corrections (LiveQueryCallbacks.onCorrection). */
    private readonly onCorrection?: (correction: LiveQueryCorrection<T>) => void,
  ) {
    super(start === null ? IDLE : STARTING);
  }

  readonly subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    if (this.query === null && this.start !== null) {
      const q = (this.query = this.start());
      this.detach = q.subscribe({
        onView: (value, view) =>
          this.set({
            value,
            level: view.level,
            error: undefined,
            pending: false,
            queued: false,
            committed: view.level === 'strong',
            // A live query's corrections are its own ops failing (onCorrection above).
            correction: undefined,
          }),
        onError: (error) => this.set({ ...this.snapshot, error, pending: false }),
        onCorrection: (c) => this.onCorrection?.(c),
      });
    }
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size > 0) return;
      this.detach?.();
      this.query?.close();
      this.detach = null;
      this.query = null;
    };
  };

  private set(next: OpState<T>): void {
    this.publish(Object.freeze(next));
  }
}
