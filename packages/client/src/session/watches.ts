import type { ClientFrame, ServerFrame } from '@creek/protocol';
import type { ViewSink } from '../binding.js';
import { errorFromWire, OperationFailed, type CreekError } from '../errors.js';
import { jsonEqual, type JsonValue } from '@creek/app';
import { OptimisticOps, queryKey, type OptimisticChange } from './optimistic.js';
import { ViewOrder, type CorrectedOp } from './view-order.js';

/** How a live query shows a result (see ViewOrder). */
export interface WatchShown {
  /**
   * True: the result is the query's newest view in the session's order, and replaces the latest
   * one. False: a stable result that holds fewer of the session's own ops than the latest view
   * (it was read before the session's newest writes committed): the latest stable only.
   */
  readonly latest: boolean;
  /** The session's ops the view this one replaces showed applied, and this one shows failed. */
  readonly corrected: readonly CorrectedOp[];
  /** A stable result's committed position. */
  readonly position?: number;
}

/** Where a live query's results go (`CreekBinding.watch`). */
export interface WatchSink {
  /**
   * A result to show at a level (`weak`: the replica's tentative state; `strong`: its committed
   * one; `cached`: the latest of those with the optimistic changes of the session's pending ops).
   * Results older than what the query shows, in the session's order, never come here.
   */
  view(
    v: { value: unknown; level: 'cached' | 'weak' | 'strong'; final: false },
    shown: WatchShown,
  ): void;
  /** The read failed (the op threw) at a level; the query goes on. */
  failed(e: CreekError, level: 'weak' | 'strong'): void;
  /** The query ended (the replica refused it, or the client was closed). */
  error(e: CreekError): void;
}

interface Watch {
  readonly op: string;
  readonly args: unknown;
  /** Its op and arguments as optimistic changes name them (queryKey). */
  readonly key: string;
  readonly sink: WatchSink;
  /** What the query shows, across connections: results never take it back (monotonic views). */
  readonly order: ViewOrder;
  /** The latest view its sink has, if any. */
  shown: { readonly value: unknown; readonly level: 'cached' | 'weak' | 'strong' } | null;
}

/**
 * The session's live queries by watch id: sent again on every connection (a new replica reads
 * them anew), until their caller ends them or a replica refuses them.
 */
export class WatchTable {
  private readonly watches = new Map<string, Watch>();
  private nextWatch = 1;
  private readonly optimistic = new OptimisticOps();

  /**
   * `unavailable`: the replica refused a query as taking nothing for now (paused, catching up, cut
   * off): the session leaves it for the next replica, as when it refuses an op so, and the query
   * goes with it. Staying would leave the query without a result for as long as the connection
   * lasts, however soon the replica takes queries again.
   */
  constructor(private readonly unavailable: (message: string) => void = () => undefined) {}

  /** A new live query; returns its id. */
  add(op: string, args: unknown, sink: WatchSink): string {
    const watchId = `w${this.nextWatch++}`;
    const key = queryKey(op, args);
    const w: Watch = { op, args, key, sink, order: new ViewOrder(), shown: null };
    this.watches.set(watchId, w);
    // Ops still pending show in a new query at once, on no result.
    this.refresh(w);
    return watchId;
  }

  /** Op `seq` of the session makes `changes` to the queries they name until `ended(seq)`. */
  optimisticOp(seq: number, changes: readonly OptimisticChange[]): void {
    this.refreshKeys(this.optimistic.add(seq, changes));
  }

  /**
   * `sink` of op `seq`, which made optimistic changes: when the op ends (an error, its commit, or
   * never to commit), `ended(seq)` comes first.
   */
  endingWith(seq: number, sink: ViewSink<unknown>): ViewSink<unknown> {
    const ended = (): void => this.ended(seq);
    return {
      view: (v) => sink.view(v),
      error: (e) => {
        ended();
        sink.error(e);
      },
      committed: () => {
        ended();
        sink.committed?.();
      },
      neverCommits: (e) => {
        ended();
        sink.neverCommits?.(e);
      },
      ...(sink.queued === undefined ? {} : { queued: (q: boolean) => sink.queued!(q) }),
    };
  }

  /** Op `seq` ended (committed, failed, never to take effect): its changes stop showing. */
  ended(seq: number): void {
    this.refreshKeys(this.optimistic.end(seq));
  }

  /** Ends a live query; returns whether it was still running. */
  delete(watchId: string): boolean {
    return this.watches.delete(watchId);
  }

  /** The frames that start every live query on a new connection. */
  frames(): ClientFrame[] {
    return [...this.watches].map(([watchId, w]) => watchFrame(watchId, w.op, w.args, w.order));
  }

  /** A replica's answer to a live query: delivered to its sink. */
  frame(f: Extract<ServerFrame, { t: 'watched' | 'unwatched' }>): void {
    const w = this.watches.get(f.watchId);
    if (w === undefined) return;
    if (f.t === 'unwatched') {
      // A replica that takes nothing for now (paused, catching up): the query stays, and is sent
      // again at the next connection, as ops are, which the session moves to.
      if (f.code === 'unavailable') return this.unavailable(f.message);
      this.watches.delete(f.watchId);
      return w.sink.error(errorFromWire(f.code, f.message));
    }
    const effect = w.order.result(f);
    const level = f.level === 'stable' ? 'strong' : 'weak';
    const position = f.position === undefined ? {} : { position: f.position };
    if (effect.t === 'show' && !f.outcome.ok)
      return w.sink.failed(new OperationFailed(f.outcome.error), level);
    if (effect.t === 'show' && f.outcome.ok) {
      const result = { value: f.outcome.value, level, final: false } as const;
      if (!effect.latest) return w.sink.view(result, { latest: false, corrected: [], ...position });
      // A stable result under optimistic changes is the synced mark all the same.
      const shows = this.display(w)!;
      if (shows.level === 'cached' && level === 'strong')
        w.sink.view(result, { latest: false, corrected: [], ...position });
      w.shown = shows;
      return w.sink.view(
        { ...shows, final: false },
        { latest: true, corrected: effect.corrected, ...position },
      );
    }
    // Older than what the query shows, or the same views again: it may hold one of the session's
    // pending ops all the same, whose optimistic change then stops showing.
    this.refresh(w);
  }

  private refreshKeys(keys: readonly string[]): void {
    if (keys.length === 0) return;
    for (const w of this.watches.values()) if (keys.includes(w.key)) this.refresh(w);
  }

  /** Delivers the view `w` shows now, if it is not the one its sink has. */
  private refresh(w: Watch): void {
    const shows = this.display(w);
    // No result yet, and no change: nothing to show (an optimistic view shown before the first
    // result stays until that result replaces it).
    if (shows === null) return;
    const was = w.shown;
    if (
      was !== null &&
      was.level === shows.level &&
      jsonEqual(was.value as JsonValue, shows.value as JsonValue)
    )
      return;
    w.shown = shows;
    w.sink.view({ ...shows, final: false }, { latest: true, corrected: [] });
  }

  /**
   * The latest result of `w`, with the optimistic changes of the ops it does not hold yet
   * (`cached`: the client's own view); null with neither.
   */
  private display(w: Watch): {
    readonly value: unknown;
    readonly level: 'cached' | 'weak' | 'strong';
  } | null {
    const latest = w.order.current();
    // The read failed there (its sink heard `failed`): nothing to show, nor to change.
    if (latest !== null && !latest.outcome.ok) return null;
    const base = latest?.outcome.ok === true ? latest.outcome.value : undefined;
    const { value, changed } = this.optimistic.apply(w.key, base, latest?.own ?? null);
    if (changed) return { value, level: 'cached' };
    if (latest === null) return null;
    return { value, level: latest.level === 'stable' ? 'strong' : 'weak' };
  }

  /** Ends every live query with the error `end` makes for each. */
  endAll(end: () => CreekError): void {
    for (const w of this.watches.values()) w.sink.error(end());
    this.watches.clear();
  }
}

/** The frame that starts a live query on a connection, saying what the query already shows. */
export function watchFrame(
  watchId: string,
  op: string,
  args: unknown,
  order?: ViewOrder,
): ClientFrame {
  const shown = order?.shown();
  return {
    t: 'watch',
    watchId,
    op,
    args: args as never,
    ...(shown === undefined ? {} : { shown }),
  };
}
