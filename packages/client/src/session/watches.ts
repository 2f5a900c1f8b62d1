import type { ClientFrame, ServerFrame } from '@creek/protocol';
import { errorFromWire, OperationFailed, type CreekError } from '../errors.js';

/** Where a live query's results go (`CreekBinding.watch`). */
export interface WatchSink {
  /** A new result at a level (`weak`: the replica's tentative state; `strong`: its committed one). */
  view(v: { value: unknown; level: 'weak' | 'strong'; final: false }): void;
  /** The read failed (the op threw) at a level; the query goes on. */
  failed(e: CreekError, level: 'weak' | 'strong'): void;
  /** The query ended (the replica refused it, or the client was closed). */
  error(e: CreekError): void;
}

interface Watch {
  readonly op: string;
  readonly args: unknown;
  readonly sink: WatchSink;
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
    this.watches.set(watchId, { op, args, sink });
    return watchId;
  }

  /** Ends a live query; returns whether it was still running. */
  delete(watchId: string): boolean {
    return this.watches.delete(watchId);
  }

  /** The frames that start every live query on a new connection. */
  frames(): ClientFrame[] {
    return [...this.watches].map(([watchId, w]) => watchFrame(watchId, w.op, w.args));
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
    const level = f.level === 'stable' ? 'strong' : 'weak';
    if (f.outcome.ok) w.sink.view({ value: f.outcome.value, level, final: false });
    else w.sink.failed(new OperationFailed(f.outcome.error), level);
  }

  /** Ends every live query with the error `end` makes for each. */
  endAll(end: () => CreekError): void {
    for (const w of this.watches.values()) w.sink.error(end());
    this.watches.clear();
  }
}

/** The frame that starts a live query on a connection. */
export function watchFrame(watchId: string, op: string, args: unknown): ClientFrame {
  return { t: 'watch', watchId, op, args: args as never };
}
