import { MinHeap } from '@creek/replica/common/min-heap.js';

/** Timed events, earliest first; ties run in the order they were scheduled, so runs replay. */
export class EventQueue<T> {
  private readonly heap = new MinHeap<T>();

  push(at: number, event: T): void {
    this.heap.push(at, event);
  }

  pop(): { at: number; event: T } | undefined {
    const top = this.heap.pop();
    return top === undefined ? undefined : { at: top.key, event: top.value };
  }

  peekTime(): number | undefined {
    return this.heap.peekKey();
  }

  get size(): number {
    return this.heap.size;
  }
}
