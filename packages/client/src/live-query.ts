import { Observable } from 'rxjs';
import type { View } from './binding.js';
import type { CreekError } from './errors.js';

/** What a subscriber of a live query hears. */
export interface LiveQueryCallbacks<T> {
  /** A new result: at the replica's tentative state (`weak`) or its committed one (`strong`). */
  onView?(value: T, view: View<T>): void;
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
      view: (v) => {
        this.latestView = v;
        if (v.level === 'strong') this.stableView = v;
        for (const l of [...this.listeners]) l.onView?.(v.value, v);
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

  /** The latest result at either level, if any came. */
  latest(): View<T> | undefined {
    return this.latestView;
  }

  /** The latest result at the committed state, if any came. */
  latestStable(): View<T> | undefined {
    return this.stableView;
  }

  /** The error that ended the query, if one did. */
  get error(): CreekError | undefined {
    return this.failure;
  }

  /** Hears every new result (at once the latest, if there is one); returns what stops it. */
  subscribe(callbacks: LiveQueryCallbacks<T>): () => void {
    if (this.failure !== undefined) {
      callbacks.onError?.(this.failure);
      return () => undefined;
    }
    this.listeners.add(callbacks);
    if (this.latestView !== undefined) callbacks.onView?.(this.latestView.value, this.latestView);
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
  view(v: View<T>): void;
  failed(e: CreekError, level: 'weak' | 'strong'): void;
  error(e: CreekError): void;
}
