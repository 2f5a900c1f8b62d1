import { Observable } from 'rxjs';
import {
  weakestLevel,
  type ConsistencyLevel,
  type CorrectionCause,
  type View,
  type ViewSink,
} from './binding.js';
import { Cancelled, CreekError, Timeout } from './errors.js';

/**
 * Correctables (Guerraoui et al., OSDI '16, §3–§4): a Promise that is refined. A Correctable starts
 * `updating`; each preliminary view is a same-state transition that triggers `onUpdate`; it closes
 * with the final view (`final`, `onFinal`) or an error (`error`, `onError`). After it closes,
 * nothing changes any more.
 *
 * Callbacks run synchronously when the producer delivers a view, in the order views arrive; a
 * callback attached later first gets the latest view (or the error) at once. A callback that throws
 * does not disturb the Correctable or other callbacks: its error is rethrown in a microtask, where
 * the host reports it as uncaught.
 *
 * A Correctable is also a thenable: `await c` gives the final value or throws the error. Until
 * `then`/`catch`/`finally` is called no Promise exists, so an error nobody asked for never becomes
 * an unhandled rejection.
 */

export type CorrectableState = 'updating' | 'final' | 'error';

export interface Callbacks<T> {
  /** A preliminary view arrived (or, attached late, the latest one while still updating). */
  onUpdate?(value: T, view: View<T>): void;
  /** The final view arrived (or had arrived). */
  onFinal?(value: T, view: View<T>): void;
  /**
   * A view replaced a different value the caller was shown (called just before that view's
   * onUpdate or onFinal; attached late: the latest correction, at once). See {@link Correction}.
   */
  onCorrection?(correction: Correction<T>): void;
  /** The Correctable ended in an error (or had). */
  onError?(error: Error): void;
  /**
   * The op went into, or came out of, the client's offline queue (no replica reachable; it is
   * sent with its session number once one is). Attached while it is queued: called at once.
   */
  onQueued?(queued: boolean): void;
}

/**
 * An explained correction: a view's value replaced a different one the caller had been shown
 * (not a `cached` one, which is a recollection, not an answer). For a UI's "was X, now Y because
 * a withdrawal elsewhere came first".
 */
export interface Correction<T> {
  /** The value shown before: a tentative answer. */
  readonly tentative: T;
  /** The value that replaced it: the final answer, or a newer tentative one (`level` says). */
  readonly final: T;
  readonly level: ConsistencyLevel;
  /**
   * The ops ordered ahead of this one, unseen when the replaced answer was computed, whose writes
   * made the difference, and a key each wrote that this op read: at most a few, as the replica
   * found them; empty when it found none (or the binding does not say).
   */
  readonly causes: readonly CorrectionCause[];
}

export interface CorrectableOptions {
  /** Aborting it ends the Correctable in `error` with {@link Cancelled} (unless it closed already). */
  signal?: AbortSignal;
  /** After this many ms without a final view, the Correctable ends with {@link Timeout}. */
  timeoutMs?: number;
}

/** The producer's side of a Correctable: what a binding (or the library) drives. */
export interface CorrectableController<T> {
  readonly correctable: Correctable<T>;
  /** A preliminary view. Returns false (and does nothing) once the Correctable has closed. */
  update(value: T, level: ConsistencyLevel, causes?: readonly CorrectionCause[]): boolean;
  /** The final view. Returns false (and does nothing) once the Correctable has closed. */
  close(value: T, level: ConsistencyLevel, causes?: readonly CorrectionCause[]): boolean;
  /** Ends in `error`. Returns false (and does nothing) once the Correctable has closed. */
  fail(error: Error): boolean;
  /**
   * The same three as a binding's sink (`view` with `final: true` closes), and the op's commit:
   * `committed` and `neverCommits` settle {@link Correctable.committed}.
   */
  readonly sink: ViewSink<T>;
  /**
   * Aborts (with the {@link Cancelled} or {@link Timeout} error as its reason) when the caller's
   * signal or the timeout ended the Correctable: pass it to the binding so it can stop working.
   */
  readonly signal: AbortSignal;
}

/** The value type of a Correctable. */
export type CorrectableValue<C> = C extends Correctable<infer V> ? V : never;

type Event<T> =
  | { seq: number; kind: 'update' | 'final'; view: View<T>; correction?: Correction<T> }
  | { seq: number; kind: 'error'; error: Error };

interface Listener<T> {
  /** The sequence number of the last event this listener got. */
  seen: number;
  active: boolean;
  readonly callbacks: Callbacks<T>;
}

/** `setTimeout` cannot wait longer; a longer timeout is as good as none. */
const MAX_TIMER_MS = 2_147_483_647;

export class Correctable<T> implements PromiseLike<T> {
  private currentState: CorrectableState = 'updating';
  private latestView: View<T> | undefined;
  private latestCorrection: Correction<T> | undefined;
  private failure: Error | undefined;
  private seq = 0;
  private listeners: Listener<T>[] = [];
  private queue: Event<T>[] = [];
  private draining = false;
  private promise: Promise<T> | undefined;
  private settlePromise: { resolve(v: T): void; reject(e: Error): void } | undefined;
  private cleanup: (() => void) | undefined;
  private isQueued = false;
  /** Whether the op is committed (true), never will be (its error), or not yet known (null). */
  private commitState: true | Error | null = null;
  private commitWaiters: { resolve(): void; reject(e: Error): void }[] = [];

  private constructor() {}

  /** Makes a Correctable and the controller that drives it. */
  static create<T>(options: CorrectableOptions = {}): CorrectableController<T> {
    const c = new Correctable<T>();
    // Made only when someone asks for `signal`: most ops have no caller signal and no timeout, so
    // nothing could abort it, and an AbortController per op was a measurable share of a client's
    // CPU per weak op (Node's AbortSignal is an EventTarget). One made after the Correctable
    // ended by Cancelled or Timeout starts out aborted with that reason.
    let stop: AbortController | undefined;
    let stoppedBy: Cancelled | Timeout | undefined;
    const { signal, timeoutMs } = options;
    if (
      timeoutMs !== undefined &&
      (typeof timeoutMs !== 'number' || Number.isNaN(timeoutMs) || timeoutMs < 0)
    ) {
      throw new RangeError(
        `timeoutMs must be a number ≥ 0 (or left out), got ${String(timeoutMs)}`,
      );
    }
    const endBy = (error: Cancelled | Timeout): void => {
      if (!c.end({ seq: 0, kind: 'error', error })) return;
      stoppedBy = error;
      stop?.abort(error);
    };
    if (signal?.aborted) {
      endBy(new Cancelled(signal.reason));
    } else {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const onAbort = (): void => endBy(new Cancelled(signal?.reason));
      signal?.addEventListener('abort', onAbort, { once: true });
      if (timeoutMs !== undefined && timeoutMs <= MAX_TIMER_MS) {
        timer = setTimeout(() => endBy(new Timeout(timeoutMs)), timeoutMs);
      }
      c.cleanup = () => {
        if (timer !== undefined) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
    }
    const view = (
      value: T,
      level: ConsistencyLevel,
      final: boolean,
      causes: readonly CorrectionCause[] | undefined,
    ): View<T> =>
      Object.freeze(
        causes === undefined ? { value, level, final } : { value, level, final, causes },
      );
    const update = (
      value: T,
      level: ConsistencyLevel,
      causes?: readonly CorrectionCause[],
    ): boolean => c.emit({ seq: 0, kind: 'update', view: view(value, level, false, causes) });
    const close = (
      value: T,
      level: ConsistencyLevel,
      causes?: readonly CorrectionCause[],
    ): boolean => c.end({ seq: 0, kind: 'final', view: view(value, level, true, causes) });
    const fail = (error: Error): boolean => c.end({ seq: 0, kind: 'error', error: toError(error) });
    return {
      correctable: c,
      update,
      close,
      fail,
      sink: {
        view: (v) =>
          void (v.final ? close(v.value, v.level, v.causes) : update(v.value, v.level, v.causes)),
        error: (e) => void fail(e),
        committed: () => c.settleCommit(true),
        queued: (q) => c.setQueued(q),
        neverCommits: (e) =>
          c.settleCommit(e ?? c.failure ?? new Error('the op was not committed')),
      },
      get signal(): AbortSignal {
        if (stop === undefined) {
          stop = new AbortController();
          if (stoppedBy !== undefined) stop.abort(stoppedBy);
        }
        return stop.signal;
      },
    };
  }

  /**
   * Combines Correctables: once each has a view, every new view of any of them gives a view of the
   * array of their latest values (at the weakest of their levels); final when all are final; an
   * error as soon as any ends in error.
   */
  static all<const Cs extends readonly Correctable<unknown>[]>(
    cs: Cs,
  ): Correctable<{ -readonly [K in keyof Cs]: CorrectableValue<Cs[K]> }> {
    type Out = { -readonly [K in keyof Cs]: CorrectableValue<Cs[K]> };
    const out = Correctable.create<Out>();
    const n = cs.length;
    if (n === 0) {
      out.close([] as unknown as Out, 'strong');
      return out.correctable;
    }
    const views: (View<unknown> | undefined)[] = new Array<View<unknown> | undefined>(n);
    let have = 0;
    let finals = 0;
    const unsubscribes: (() => void)[] = [];
    const done = (): boolean => out.correctable.state !== 'updating';
    const stopAll = (): void => unsubscribes.forEach((u) => u());
    const record = (i: number, v: View<unknown>): void => {
      if (done()) return;
      if (views[i] === undefined) have++;
      if (v.final) finals++;
      views[i] = v;
      if (have < n) return;
      const present = views as View<unknown>[];
      const values = present.map((x) => x.value) as unknown as Out;
      const level = weakestLevel(present.map((x) => x.level));
      if (finals === n) out.close(values, level);
      else out.update(values, level);
    };
    cs.forEach((c, i) => {
      if (done()) return;
      unsubscribes.push(
        c.listen({
          onUpdate: (_, v) => record(i, v),
          onFinal: (_, v) => record(i, v),
          onError: (e) => {
            if (out.fail(e)) stopAll();
          },
        }),
      );
    });
    if (done()) stopAll();
    return out.correctable;
  }

  /**
   * The first of some Correctables to close: it closes with that one's final value, or ends with
   * that one's error. Until then, preliminary views of any of them are its preliminary views.
   */
  static race<const Cs extends readonly Correctable<unknown>[]>(
    cs: Cs,
  ): Correctable<CorrectableValue<Cs[number]>> {
    type Out = CorrectableValue<Cs[number]>;
    const out = Correctable.create<Out>();
    const unsubscribes: (() => void)[] = [];
    const done = (): boolean => out.correctable.state !== 'updating';
    const stopAll = (): void => unsubscribes.forEach((u) => u());
    for (const c of cs) {
      if (done()) break;
      unsubscribes.push(
        c.listen({
          onUpdate: (v, view) => void out.update(v as Out, view.level),
          onFinal: (v, view) => {
            if (out.close(v as Out, view.level)) stopAll();
          },
          onError: (e) => {
            if (out.fail(e)) stopAll();
          },
        }),
      );
    }
    if (done()) stopAll();
    return out.correctable;
  }

  /** `updating` until the final view (`final`) or an error (`error`). */
  get state(): CorrectableState {
    return this.currentState;
  }

  /** The consistency level of the latest view, if any arrived. */
  get level(): ConsistencyLevel | undefined {
    return this.latestView?.level;
  }

  /** The error this Correctable ended with, if it did. */
  get error(): Error | undefined {
    return this.failure;
  }

  /**
   * Resolves once the op has its place in the cluster's committed order: its effect is final. For
   * a weak op (`invokeWeak`) that is after its answer, which was tentative: the "synced" mark of a
   * UI. It rejects with the Correctable's error if the op will never be committed (the error says
   * it did not take effect, or it was abandoned); an op whose fate is unknown (`mayHaveTakenEffect`)
   * keeps it pending until the client learns it. Only bindings that know commits settle it (the
   * Creek client and the in-memory one); a read that is never ordered resolves at its answer.
   */
  committed(): Promise<void> {
    if (this.commitState === true) return Promise.resolve();
    if (this.commitState !== null) return Promise.reject(this.commitState);
    return new Promise<void>((resolve, reject) => this.commitWaiters.push({ resolve, reject }));
  }

  private settleCommit(state: true | Error): void {
    if (this.commitState !== null) return;
    this.commitState = state;
    for (const w of this.commitWaiters.splice(0))
      if (state === true) w.resolve();
      else w.reject(state);
  }

  /**
   * The op waits in the client's offline queue: no replica answers, and it will be sent with its
   * session number (applied once) when one does. Still `updating`; a UI may show it as queued.
   */
  get queued(): boolean {
    return this.isQueued;
  }

  private setQueued(q: boolean): void {
    if (this.isQueued === q || this.currentState !== 'updating') return;
    this.isQueued = q;
    for (const l of [...this.listeners])
      if (l.active)
        try {
          l.callbacks.onQueued?.(q);
        } catch (e) {
          queueMicrotask(() => {
            throw e;
          });
        }
  }

  /** The latest view (preliminary or final), if any arrived. */
  latest(): View<T> | undefined {
    return this.latestView;
  }

  /** The latest correction (a view that replaced a different value shown before), if any. */
  correction(): Correction<T> | undefined {
    return this.latestCorrection;
  }

  /**
   * Attaches callbacks (any subset). Those attached after views arrived get the latest view, or the
   * final view, or the error, at once. Returns this Correctable, to chain.
   */
  setCallbacks(callbacks: Callbacks<T>): this {
    this.listen(callbacks);
    return this;
  }

  /**
   * Like `setCallbacks`, but returns the function that detaches them: for a UI that follows a
   * Correctable only while it shows it (a React hook's subscription).
   */
  subscribe(callbacks: Callbacks<T>): () => void {
    return this.listen(callbacks);
  }

  /**
   * Every view as an rxjs Observable: a subscriber first gets the latest view (if any), then each
   * new one; it completes after the final view and errors with the Correctable's error.
   */
  toObservable(): Observable<View<T>> {
    return new Observable<View<T>>((subscriber) =>
      this.listen({
        onUpdate: (_, v) => subscriber.next(v),
        onFinal: (_, v) => {
          subscriber.next(v);
          subscriber.complete();
        },
        onError: (e) => subscriber.error(e),
      }),
    );
  }

  /**
   * Speculation (§4). Runs `speculationFunc` on each view whose value differs (structurally: key
   * order does not matter) from the value it last ran on, and exposes each result as a preliminary
   * view of the returned Correctable. When the final view equals the value the function last ran
   * on, the returned Correctable closes with that run's result as soon as it is available. Otherwise
   * `abortFunc` is called with the stale value and the function runs again on the final value,
   * whose result closes the returned Correctable.
   *
   * - `abortFunc` runs for every speculation that is replaced by a newer view, and for the
   *   outstanding one when this Correctable ends in error.
   * - An async result that settles after its speculation went stale is ignored, and so is its
   *   rejection.
   * - A throw or rejection of `speculationFunc` (for the current view) or of `abortFunc` ends the
   *   returned Correctable with that error; an error of this Correctable ends it with this error.
   */
  speculate<R>(
    speculationFunc: (value: T) => R | PromiseLike<R>,
    abortFunc?: (value: T) => void,
  ): Correctable<R> {
    interface Speculation {
      readonly input: T;
      level: ConsistencyLevel;
      /** The view it ran on is (or was confirmed by) the final view. */
      final: boolean;
      settled: boolean;
      result: R | undefined;
    }
    const out = Correctable.create<R>();
    let current: Speculation | undefined;
    /** Replaced by the real one once attached (a late view may end things while attaching). */
    let unsubscribe = (): void => {};
    const done = (): boolean => out.correctable.state !== 'updating';
    const stop = (): void => {
      unsubscribe();
      current = undefined;
    };
    const failWith = (e: unknown): void => {
      if (out.fail(toError(e))) stop();
    };
    const deliver = (spec: Speculation, value: R): void => {
      spec.settled = true;
      spec.result = value;
      if (spec.final) {
        if (out.close(value, spec.level)) stop();
      } else {
        out.update(value, spec.level);
      }
    };
    /** Aborts the current speculation, if any; false when the abort function threw. */
    const abortCurrent = (): boolean => {
      const stale = current;
      current = undefined;
      if (stale === undefined || abortFunc === undefined) return true;
      try {
        abortFunc(stale.input);
        return true;
      } catch (e) {
        failWith(e);
        return false;
      }
    };
    const run = (view: View<T>): void => {
      const spec: Speculation = {
        input: view.value,
        level: view.level,
        final: view.final,
        settled: false,
        result: undefined,
      };
      current = spec;
      let r: R | PromiseLike<R>;
      try {
        r = speculationFunc(view.value);
      } catch (e) {
        failWith(e);
        return;
      }
      if (isPromiseLike(r)) {
        // Promise.resolve also absorbs a thenable whose `then` throws; both branches handle the outcome.
        Promise.resolve(r).then(
          (v) => {
            if (current === spec && !done()) deliver(spec, v);
          },
          (e: unknown) => {
            if (current === spec && !done()) failWith(e);
          },
        );
      } else {
        deliver(spec, r);
      }
    };
    const onView = (view: View<T>): void => {
      if (done()) return;
      if (current !== undefined && jsonEqual(view.value, current.input)) {
        if (view.final) {
          // Confirmed: the final view equals the one we speculated on.
          current.final = true;
          current.level = view.level;
          if (current.settled && out.close(current.result as R, view.level)) stop();
        }
        return;
      }
      if (abortCurrent()) run(view);
    };
    unsubscribe = this.listen({
      onUpdate: (_, view) => onView(view),
      onFinal: (_, view) => onView(view),
      onError: (e) => {
        if (done()) return;
        const stale = current;
        current = undefined;
        if (stale !== undefined && abortFunc !== undefined) {
          try {
            abortFunc(stale.input);
          } catch {
            // This Correctable's error is the cause worth reporting; the abort's is dropped.
          }
        }
        failWith(e);
      },
    });
    if (done()) stop();
    return out.correctable;
  }

  then<A = T, B = never>(
    onfulfilled?: ((value: T) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): Promise<A | B> {
    return this.toPromise().then(onfulfilled, onrejected);
  }

  catch<B = never>(onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<T | B> {
    return this.toPromise().catch(onrejected);
  }

  finally(onfinally?: (() => void) | null): Promise<T> {
    return this.toPromise().finally(onfinally);
  }

  /** The final value as a Promise (made on first use, so an unobserved error is never unhandled). */
  private toPromise(): Promise<T> {
    if (this.promise === undefined) {
      if (this.currentState === 'final') {
        this.promise = Promise.resolve((this.latestView as View<T>).value);
      } else if (this.currentState === 'error') {
        this.promise = Promise.reject(this.failure as Error);
      } else {
        this.promise = new Promise<T>((resolve, reject) => {
          this.settlePromise = { resolve, reject };
        });
      }
    }
    return this.promise;
  }

  /**
   * Attaches callbacks; delivers the current view or error at once when there is one. Returns a
   * function that detaches them.
   */
  private listen(callbacks: Callbacks<T>): () => void {
    const listener: Listener<T> = { seen: this.seq, active: true, callbacks };
    if (this.currentState === 'updating') this.listeners.push(listener);
    if (this.isQueued) callbacks.onQueued?.(true);
    if (this.currentState === 'error') {
      deliver(listener, { seq: this.seq, kind: 'error', error: this.failure as Error });
    } else if (this.latestView !== undefined) {
      const kind = this.currentState === 'final' ? 'final' : 'update';
      const correction = this.latestCorrection;
      deliver(listener, {
        seq: this.seq,
        kind,
        view: this.latestView,
        ...(correction === undefined ? {} : { correction }),
      });
    }
    return () => {
      listener.active = false;
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /** Records a view or error and delivers it; false when this Correctable had closed. */
  private emit(event: Event<T>): boolean {
    if (this.currentState !== 'updating') return false;
    this.seq++;
    const e = { ...event, seq: this.seq };
    if (e.kind === 'error') {
      this.currentState = 'error';
      this.failure = e.error;
    } else {
      const before = this.latestView;
      if (
        before !== undefined &&
        before.level !== 'cached' &&
        !jsonEqual(before.value, e.view.value)
      ) {
        e.correction = Object.freeze({
          tentative: before.value,
          final: e.view.value,
          level: e.view.level,
          causes: e.view.causes ?? [],
        });
        this.latestCorrection = e.correction;
      }
      this.latestView = e.view;
      if (e.kind === 'final') this.currentState = 'final';
    }
    this.queue.push(e);
    this.drain();
    return true;
  }

  /** A closing event: also settles the Promise and stops the timer. */
  private end(event: Event<T>): boolean {
    // Answered or failed: out of any queue (said before the final event, so a UI redraws once).
    this.setQueued(false);
    if (!this.emit(event)) return false;
    this.cleanup?.();
    this.cleanup = undefined;
    if (event.kind === 'error') this.settlePromise?.reject(event.error);
    else this.settlePromise?.resolve(event.view.value);
    this.settlePromise = undefined;
    // An error that says the op did not take effect says it will never be committed either.
    const e = event.kind === 'error' ? event.error : null;
    if (e instanceof CreekError && !e.mayHaveTakenEffect) this.settleCommit(e);
    return true;
  }

  /** Delivers queued events in order; an event emitted from a callback waits for the current one. */
  private drain(): void {
    if (this.draining) return;
    this.draining = true;
    try {
      for (let e = this.queue.shift(); e !== undefined; e = this.queue.shift()) {
        for (const l of [...this.listeners]) {
          if (!l.active || l.seen >= e.seq) continue;
          l.seen = e.seq;
          deliver(l, e);
        }
      }
    } finally {
      this.draining = false;
      if (this.currentState !== 'updating' && this.queue.length === 0) this.listeners = [];
    }
  }
}

function deliver<T>(listener: Listener<T>, event: Event<T>): void {
  const cb = listener.callbacks;
  try {
    if (event.kind !== 'error' && event.correction !== undefined)
      cb.onCorrection?.(event.correction);
    if (event.kind === 'error') cb.onError?.(event.error);
    else if (event.kind === 'final') cb.onFinal?.(event.view.value, event.view);
    else cb.onUpdate?.(event.view.value, event.view);
  } catch (e) {
    // A callback's bug is the caller's to see, not a reason to stop delivering.
    queueMicrotask(() => {
      throw e;
    });
  }
}

function isPromiseLike(x: unknown): x is PromiseLike<unknown> {
  return (
    (typeof x === 'object' || typeof x === 'function') &&
    x !== null &&
    typeof (x as { then?: unknown }).then === 'function'
  );
}

function toError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e), { cause: e });
}

/**
 * Structural equality of JSON-like values: primitives by value (NaN equals NaN), arrays element by
 * element, Dates by time, other objects by their own enumerable keys, where a key holding
 * `undefined` counts as absent (as in JSON). Values must not be cyclic.
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a === 'number' && typeof b === 'number') return Number.isNaN(a) && Number.isNaN(b);
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (a instanceof Date || b instanceof Date) {
    return a instanceof Date && b instanceof Date && Object.is(a.getTime(), b.getTime());
  }
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  const ka = Object.keys(ra).filter((k) => ra[k] !== undefined);
  const kb = Object.keys(rb).filter((k) => rb[k] !== undefined);
  if (ka.length !== kb.length) return false;
  for (const k of ka) {
    if (!Object.prototype.hasOwnProperty.call(rb, k) || !jsonEqual(ra[k], rb[k])) return false;
  }
  return true;
}
