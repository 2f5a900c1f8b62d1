import { Observable } from 'rxjs';
import type { View } from './binding.js';
import type { CreekError } from './errors.js';
import type { CorrectedOp } from './session/view-order.js';
import type { WatchShown } from './session/watches.js';

/**
 * A live query's latest view replaced one that showed some of the session's own ops applied, and
 * shows them failed: rejected at their place in the committed order (their `run` threw there), or
 * abandoned. The user's write that was on screen is gone for good, and the app may say why.
 */
export interface LiveQueryCorrection<T> {
  /** The view that showed the ops applied. */
  readonly previous: View<T>;
  /** The new latest view, which shows them failed. */
  readonly view: View<T>;
  /** The ops, with why each failed. */
  readonly failed: readonly CorrectedOp[];
}

/** What a subscriber of a live query hears. */
export interface LiveQueryCallbacks<T> {
  /**
   * The latest view changed: a new result, at the replica's tentative state (`weak`) or its
   * committed one (`strong`), that is the newest in the session's own order (see `latest()`).
   */
  onView?(value: T, view: View<T>): void;
  /**
   * A new stable result (`latestStable()`, the synced mark): every one, also one that does not
   * become the latest view because it was read before the session's newest writes committed.
   */
  onStable?(value: T, view: View<T>): void;
  /** The new latest view corrects the one before (it comes before that view's `onView`). */
  onCorrection?(correction: LiveQueryCorrection<T>): void;
  /** The read failed at a level (the op threw there); the query goes on. */
  onFailed?(error: CreekError, level: 'weak' | 'strong'): void;
  /** The query ended: the replica refused it, or it was closed with its client. */
  onError?(error: CreekError): void;
}

/**
 * A read-only op the replica keeps reading for you (`client.watch(op, args)`): each time a key it
 * read may have changed, the replica reads it again, at its tentative state and at its committed
 * one, and pushes the result when it differs from the last. Views never become final: the query
 * runs until `close()`. After a failover the new replica reads it anew.
 *
 * Views are monotonic in the session's own order: the latest view never goes back to a state
 * without one of the session's own writes it already showed (a stable result read before that
 * write committed is the latest stable only), except to show that write failed (`onCorrection`).
 */
export class LiveQuery<T> {
  private latestView: View<T> | undefined;
  private stableView: View<T> | undefined;
  private failure: CreekError | undefined;
  private readonly listeners = new Set<LiveQueryCallbacks<T>>();
  private stop: (() => void) | null = null;

  /** @internal Made by the client; `start` begins the query and returns what ends it. */
  constructor(start: (sink: LiveQuerySink<T>) => () => void) {
    this.stop = start({
      view: (v, shown) => {
        const previous = this.latestView;
        if (shown.latest) this.latestView = v;
        if (v.level === 'strong') this.stableView = v;
        const listeners = [...this.listeners];
        if (shown.corrected.length > 0 && previous !== undefined)
          for (const l of listeners)
            l.onCorrection?.({ previous, view: v, failed: shown.corrected });
        if (shown.latest) for (const l of listeners) l.onView?.(v.value, v);
        if (v.level === 'strong') for (const l of listeners) l.onStable?.(v.value, v);
      },
      failed: (e, level) => {
        for (const l of [...this.listeners]) l.onFailed?.(e, level);
      },
      error: (e) => {
        this.failure = e;
        this.stop = null;
        for (const l of [...this.listeners]) l.onError?.(e);
        this.listeners.clear();
      },
    });
  }

  /**
   * The newest view in the session's own order, if any came — a view, not the value: `{ value,
   * level, final: false }`, the op's result in `value`. `level` is `weak` (the replica's tentative
   * state), `strong` (its committed state) or `cached` (either, with the optimistic changes of the
   * session's pending ops). A stable result replaces a tentative one only if it holds every op of
   * the session the tentative one held (or has the same value); else the tentative view stays,
   * newer. `undefined` before the first result (or optimistic change).
   */
  latest(): View<T> | undefined {
    return this.latestView;
  }

  /**
   * The latest result at the committed state, if any came: the synced mark. It may be older than
   * `latest()`, which then shows the session's own writes that are not committed yet.
   */
  latestStable(): View<T> | undefined {
    return this.stableView;
  }

  /** The error that ended the query, if one did. */
  get error(): CreekError | undefined {
    return this.failure;
  }

  /** Hears every new view (at once the latest and the latest stable, if any); returns what stops it. */
  subscribe(callbacks: LiveQueryCallbacks<T>): () => void {
    if (this.failure !== undefined) {
      callbacks.onError?.(this.failure);
      return () => undefined;
    }
    this.listeners.add(callbacks);
    if (this.latestView !== undefined) callbacks.onView?.(this.latestView.value, this.latestView);
    if (this.stableView !== undefined) callbacks.onStable?.(this.stableView.value, this.stableView);
    return () => void this.listeners.delete(callbacks);
  }

  /** Every result as an rxjs Observable; it errors when the query ends in an error. */
  toObservable(): Observable<View<T>> {
    return new Observable<View<T>>((s) =>
      this.subscribe({ onView: (_, v) => s.next(v), onError: (e) => s.error(e) }),
    );
  }

  /** Ends the query: the replica stops reading it, and no more results come. */
  close(): void {
    this.stop?.();
    this.stop = null;
    this.listeners.clear();
  }
}

/** @internal What a binding drives a live query through. */
export interface LiveQuerySink<T> {
  view(v: View<T>, shown: WatchShown): void;
  failed(e: CreekError, level: 'weak' | 'strong'): void;
  error(e: CreekError): void;
}
