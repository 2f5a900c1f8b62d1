import { MinHeap } from '../common/min-heap.js';
import { opKey, type OpId } from '../core/op-id.js';

/**
 * What a waiting cast or 2a waits for before it is checked again: one Req (`id` arrives), or, with
 * `prefix`, an origin's Reqs up to `id` without a gap (its contiguous prefix reaches `id.eventNo`).
 * A strong op's causal context is such prefixes (core Replica.awaitedDep): waiting on the prefix,
 * it is looked at again once per origin it lacks ops of, however many it lacks and in whatever
 * order they arrive.
 */
export interface Awaited {
  readonly id: OpId;
  readonly prefix: boolean;
}

/** A waiting 2a (its instance) or cast (its op key). */
export type Waiter = { readonly instance: number } | { readonly cast: string };

/**
 * CAB's index of waiting casts and 2a by what they await (`Awaited`), so that an arrival touches
 * only what waited on it. Rescanning everything that waits on every gossip message made a lagging
 * replica's work grow as waiting 2a × messages (39 % of a catching-up replica's time); filing each
 * under the first Req it lacked still touched every cast behind a catch-up once per batch that
 * arrived (the simulator's 'lag' faults: batches × waiting casts). Entries of waiters that went
 * away otherwise stay until what they await arrives or `clear`.
 */
export class ReqWaits {
  private readonly byReq = new Map<string, Waiter[]>();
  /** Per origin, waiters by the prefix they await. */
  private readonly byPrefix = new Map<number, MinHeap<Waiter>>();

  file(awaited: Awaited, waiter: Waiter): void {
    if (awaited.prefix) {
      let heap = this.byPrefix.get(awaited.id.replica);
      if (heap === undefined) this.byPrefix.set(awaited.id.replica, (heap = new MinHeap()));
      heap.push(awaited.id.eventNo, waiter);
      return;
    }
    const key = opKey(awaited.id);
    const list = this.byReq.get(key);
    if (list === undefined) this.byReq.set(key, [waiter]);
    else list.push(waiter);
  }

  /**
   * Reqs `ids` arrived, and `receivedUpTo` now tells each origin's contiguous prefix: the waiters
   * whose Req or prefix that was, removed from the index, in the order they were filed per kind.
   */
  arrived(ids: readonly OpId[], receivedUpTo: (origin: number) => number): Waiter[] {
    const due: Waiter[] = [];
    const origins = new Set<number>();
    for (const id of ids) {
      origins.add(id.replica);
      const key = opKey(id);
      const list = this.byReq.get(key);
      if (list === undefined) continue;
      this.byReq.delete(key);
      due.push(...list);
    }
    for (const origin of origins) {
      const heap = this.byPrefix.get(origin);
      if (heap === undefined) continue;
      const upTo = receivedUpTo(origin);
      while ((heap.peekKey() ?? Number.POSITIVE_INFINITY) <= upTo) due.push(heap.pop()!.value);
    }
    return due;
  }

  clear(): void {
    this.byReq.clear();
    this.byPrefix.clear();
  }
}
