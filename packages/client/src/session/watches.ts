import type { ClientFrame, ServerFrame } from '@creek/protocol';
import { errorFromWire, OperationFailed, type CreekError } from '../errors.js';
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
   * one). Results older than what the query shows, in the session's order, never come here.
   */
  view(v: { value: unknown; level: 'weak' | 'strong'; final: false }, shown: WatchShown): void;
  /** The read failed (the op threw) at a level; the query goes on. */
  failed(e: CreekError, level: 'weak' | 'strong'): void;
  /** The query ended (the replica refused it, or the client was closed). */
  error(e: CreekError): void;
}

interface Watch {
  readonly op: string;
  readonly args: unknown;
  readonly sink: WatchSink;
  /** What the query shows, across connections: results never take it back (monotonic views). */
  readonly order: ViewOrder;
}

/**
 * The session's live queries by watch id: sent again on every connection (a new replica reads
 * them anew), until their caller ends them or a replica refuses them.
 */
export class WatchTable {
  private readonly watches = new Map<string, Watch>();
  private nextWatch = 1;

  /** A new live query; returns its id. */
  add(op: string, args: unknown, sink: WatchSink): string {
    const watchId = `w${this.nextWatch++}`;
    this.watches.set(watchId, { op, args, sink, order: new ViewOrder() });
    return watchId;
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
      // again at the next connection, as ops are.
      if (f.code === 'unavailable') return;
      this.watches.delete(f.watchId);
      return w.sink.error(errorFromWire(f.code, f.message));
    }
    const effect = w.order.result(f);
    // Older than what the query shows, or the same views again (it held more of the session's ops).
    if (effect.t === 'skip') return;
    const level = f.level === 'stable' ? 'strong' : 'weak';
    if (!f.outcome.ok) return w.sink.failed(new OperationFailed(f.outcome.error), level);
    w.sink.view(
      { value: f.outcome.value, level, final: false },
      {
        latest: effect.latest,
        corrected: effect.corrected,
        ...(f.position === undefined ? {} : { position: f.position }),
      },
    );
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
