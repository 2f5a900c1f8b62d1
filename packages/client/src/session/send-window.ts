import type { SessionOp } from './op-table.js';

/**
 * The ops in flight on one connection, bounded as its replica bounds them: a replica refuses more
 * than it takes from one connection as busy, so the client keeps to the limit itself (`maxInFlight`)
 * and holds the rest back until answers come.
 */
export class SendWindow {
  /**
   * Ops sent on this connection that its replica still counts as in flight (weak: until their
   * first view; strong: until their stable one; any: until an error), by op id, with their level.
   */
  private readonly inFlight = new Map<string, 'weak' | 'strong'>();
  /** Ops waiting for a slot among those, in the order they were to be sent. */
  private readonly backlog: SessionOp[] = [];

  /**
   * `max`: how many ops this connection may have in flight (a replica refuses more as busy);
   * `transmit`: puts an op on the wire.
   */
  constructor(
    private readonly max: number,
    private readonly transmit: (o: SessionOp) => void,
  ) {}

  /** A new connection: its replica counts from nothing (the welcome resubmits what it needs). */
  reset(): void {
    this.inFlight.clear();
    this.backlog.length = 0;
  }

  /**
   * Sends `o` on this connection, or, while as many ops as a replica takes from one connection
   * are in flight there, keeps it until one is done: a failover resubmits every op not known
   * committed, answered weak ops included, and a burst above the replica's limit had it refuse the
   * rest as busy, failing ops that had already been answered once.
   */
  send(o: SessionOp): void {
    if (this.inFlight.size >= this.max) {
      this.backlog.push(o);
      return;
    }
    this.sendNow(o);
  }

  /** The level an op in flight was sent at, or undefined if it holds no slot. */
  levelOf(opId: string): 'weak' | 'strong' | undefined {
    return this.inFlight.get(opId);
  }

  /**
   * An op of this connection is done for its replica: the next ones kept back go, while the
   * connection is `open` and they are still `wanted`.
   */
  release(opId: string, open: () => boolean, wanted: (o: SessionOp) => boolean): void {
    if (!this.inFlight.delete(opId)) return;
    while (this.backlog.length > 0 && this.inFlight.size < this.max && open()) {
      const o = this.backlog.shift()!;
      if (!wanted(o)) continue;
      this.sendNow(o);
    }
  }

  private sendNow(o: SessionOp): void {
    this.inFlight.set(o.opId, o.level);
    this.transmit(o);
  }
}
